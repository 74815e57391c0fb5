// timing gate (see timing_gate.h).
#include "timing/timing_gate.h"

#include <fnmatch.h>

#include <cmath>
#include <map>

#include "contract/prefill_cli.h"
#include "timing/role_bytes.h"
#include "timing/timing_report.h"
#include "trace/diff.h"
#include "trace/summary.h"
#include "trace/trace_cli.h"
#include "trace/trace_json.h"
#include "util/error.h"
#include "util/text_format.h"

namespace pfx::gates {

namespace fs = std::filesystem;
using nlohmann::json;

namespace {

std::string mover_text(const pfx::trace::DiffRow& row) {
  std::string s = row.key + " " + grouped(std::llround(row.a_ns)) + " → " + grouped(std::llround(row.b_ns)) + " ns";
  if (row.delta_percent) s += " (" + signed_percent(*row.delta_percent) + ")";
  else s += " (added)";
  return s;
}

// gates.timing.role_budgets: one check per budgeted role (FAIL where Δ% > max_regression_pct + noise).
std::vector<Check> budget_checks(const TimingModel& m, const json& budgets, const std::string& origin) {
  std::vector<Check> out;
  if (!budgets.is_null() && !budgets.is_array()) fail(origin, ": gates.timing.role_budgets: expected a list");
  for (size_t i = 0; budgets.is_array() && i < budgets.size(); ++i) {
    const auto& bud = budgets[i];
    if (!bud.is_object() || !bud.contains("role") || !bud["role"].is_string() || !bud.contains("max_regression_pct") ||
        !bud["max_regression_pct"].is_number())
      fail(origin, ": gates.timing.role_budgets[", i, "]: expected {role: <glob>, max_regression_pct: N}");
    const std::string glob = bud["role"];
    const double limit = bud["max_regression_pct"].get<double>();
    const json rows = to_json(m)["roles"];
    for (size_t k = 0; k < m.diff.roles.size(); ++k) {
      const auto& row = m.diff.roles[k];
      if (::fnmatch(glob.c_str(), row.key.c_str(), 0) != 0 || !row.delta_percent) continue;
      const double dp = *row.delta_percent, noise = row.noise_percent;
      Check c;
      c.name = role_check_name(m.model, row.key);
      c.metrics = rows[k];
      if (dp > limit + noise) {
        c.status = Status::Fail;
        c.reason = "role " + row.key + " " + signed_percent(dp) + " > budget " + fixed(limit, 1) + "% + noise " + fixed(noise, 1) + "%";
      } else {
        c.reason = "role " + row.key + " " + signed_percent(dp) + " within budget " + fixed(limit, 1) + "% (+ noise " + fixed(noise, 1) + "%)";
      }
      out.push_back(c);
    }
  }
  return out;
}

std::string model_evidence(const TimingModel& m) {
  const auto& d = m.diff;
  const double ta = d.a_kernel_ns, tb = d.b_kernel_ns;
  std::string ev = m.model + ": GPU time " + grouped(std::llround(ta)) + " → " + grouped(std::llround(tb)) + " ns" +
                   (ta > 0 ? " (" + signed_percent((tb - ta) / ta * 100) + ")" : "") + "; top movers: ";
  for (size_t i = 0; i < d.kernels.size() && i < 3; ++i) ev += (i ? "; " : "") + mover_text(d.kernels[i]);
  int added = 0, removed = 0;
  for (const auto& k : d.kernels) {
    added += k.status == pfx::trace::DiffRow::Status::added;
    removed += k.status == pfx::trace::DiffRow::Status::removed;
  }
  if (added || removed) ev += "; kernels added " + std::to_string(added) + ", removed " + std::to_string(removed);
  return ev;
}

// Weight bytes per GEMM role of `model`, asked of the candidate build (`prefill info --json`);
// empty where it cannot tell (an older build, a failing call): GB/s then stays blank.
std::map<std::string, double> weight_bytes(const GateContext& ctx, const fs::path& model) {
  if (!ctx.candidate.has_capability(contract::capability::kInfoTensors)) return {};
  const auto call = ctx.engine(ctx.candidate).call({"info", "--model", model.string(), "--json"}, ctx.deadline.remaining(), true);
  if (!call.ok()) {
    ctx.say("no weight bytes for GB/s: " + call.reason);
    return {};
  }
  try {
    return weight_bytes_by_role(call.output, call.command);
  } catch (const Error& e) {
    ctx.say(std::string("no weight bytes for GB/s: ") + e.what());
    return {};
  }
}

}  // namespace

void judge_timing_model(GateResult& r, const std::string& model_name, const std::vector<pfx::trace::TraceDiff>& diffs,
                        const json& budgets, const std::string& origin, int prompt,
                        const std::map<std::string, double>& role_weight_bytes) {
  TimingModel m{model_name, prompt, pfx::trace::combine_repetitions(diffs)};
  if (m.diff.per_pass)  // weight bytes are per pass; totals over a whole trace have no such count
    for (auto& role : m.diff.roles) role.bytes = pfx::gates::role_weight_bytes(role_weight_bytes, role.key);
  json models = r.details.value("models", json::array());
  add_timing_output(r, m, models.size());
  models.push_back(to_json(m));
  r.details["models"] = models;
  const auto& kernels = m.diff.kernels;
  Check traced;
  traced.name = model_name;
  traced.status = kernels.empty() ? Status::Fail : Status::Pass;
  traced.waivable = !kernels.empty();
  traced.reason = kernels.empty() ? "the traces hold no kernel: nothing was timed"
                                  : std::to_string(kernels.size()) + " kernels traced, GPU time " + grouped(std::llround(m.diff.a_kernel_ns)) +
                                        " → " + grouped(std::llround(m.diff.b_kernel_ns)) + " ns";
  const auto role_checks = budget_checks(m, budgets, origin);
  auto evs = r.details.value("model_evidence", std::vector<std::string>{});
  evs.push_back(model_evidence(m));
  r.details["model_evidence"] = evs;
  for (const auto& c : role_checks) r.checks.push_back(c);
  r.checks.push_back(traced);
}

namespace {

// gates.timing.* as the gate uses them.
struct TimingSettings {
  std::vector<std::string> models;
  int prompt = 512, reps = 3, warmup = 1;
  std::string path, busy_range;
  json budgets;

  explicit TimingSettings(const GateProfile& p)
      : models(p.strings("timing", "models")),
        prompt(static_cast<int>(p.integer("timing", "prompt_tokens", 512))),
        reps(static_cast<int>(std::max(1L, p.integer("timing", "reps", 3)))),
        warmup(static_cast<int>(p.integer("timing", "warmup", 1))),
        path(p.string("timing", "path", "fast")),
        busy_range(p.string("timing", "busy_range", "prefill")),
        budgets(p.gate("timing").value("role_budgets", json::array())) {
    if (models.empty() && !p.string("ab", "model", "").empty()) models.push_back(p.string("ab", "model", ""));
    if (!budgets.is_array()) fail(p.origin(), ": gates.timing.role_budgets: expected a list of {role, max_regression_pct}");
  }
};

// One traced `prefill bench` of build `b` (`label`: baseline or candidate) under `landing trace`:
// its summary, or nullopt after adding the check that says why there is none.
std::optional<pfx::trace::Summary> trace_side(const GateContext& ctx, const fs::path& landing_exe, const TimingSettings& s,
                                              const std::string& model_name, const fs::path& model, int rep, const Build& b,
                                              const std::string& label, GateResult& r) {
  ctx.say(model_name + " rep " + std::to_string(rep + 1) + "/" + std::to_string(s.reps) + ": trace " + label);
  const fs::path out = ctx.work_dir / ("timing-" + model_name + "-" + std::to_string(rep) + "-" + label + ".json");
  fs::remove(out);
  ProcessSpec spec;
  spec.argv = {landing_exe.string(), "trace", "-o", out.string(), "--range", s.busy_range, "--skip", std::to_string(s.warmup), "--quiet", "--"};
  // The traced command: the same `prefill bench` the engine runner would run.
  const std::vector<std::string> bench = {b.prefill.string(), "bench", "--model", model.string(), "-p", std::to_string(s.prompt), "-r", "1",
                                          "--warmup", std::to_string(s.warmup), "--path", s.path, "--json"};
  spec.argv.insert(spec.argv.end(), bench.begin(), bench.end());
  spec.env = {{"PFX_FIXTURES", ctx.fixtures_dir.string()}, {"CUDA_DEVICE_ORDER", "PCI_BUS_ID"}};
  spec.timeout_s = ctx.deadline.remaining();
  const auto p = run_process(spec);
  const std::string command = shell_join(spec.argv, spec.env);
  if (p.timed_out || p.signal || !p.exited || p.exit_code != 0) {
    const bool no_tracer = p.exited && p.exit_code == pfx::trace::kTraceNoTrace;
    Check c = hard_failure(model_name,
                           (no_tracer ? "tracer produced no trace (CUPTI unavailable?): " : label + " traced bench ") + p.describe() +
                               (p.tail(3).empty() ? "" : ": " + p.tail(3)),
                           command);
    if (no_tracer) c.status = Status::Skipped;
    r.checks.push_back(c);
    return std::nullopt;
  }
  try {
    return pfx::trace::summarize(pfx::trace::load_trace(out), out.string(), {s.busy_range});
  } catch (const Error& e) {
    r.checks.push_back(hard_failure(model_name, std::string("trace unreadable: ") + e.what(), command));
    return std::nullopt;
  }
}

// One model: a GPU probe, then `reps` alternating baseline/candidate traces, judged together.
void time_model(const GateContext& ctx, const fs::path& landing_exe, const TimingSettings& s, const std::string& model_name, GateResult& r) {
  const auto model = ctx.model_or_check(r, model_name, model_name);
  if (!model) return;
  // Untraced probe: does a GPU answer at all? (exit 3 → SKIPPED without involving the tracer)
  const auto probe = ctx.engine(ctx.candidate).bench(*model, {s.prompt}, 0, 1, 0, s.path, ctx.deadline.remaining());
  if (!probe.ok()) {
    r.checks.push_back(failed_call_check(model_name, probe, "candidate bench probe"));
    return;
  }
  const auto role_bytes = weight_bytes(ctx, *model);
  std::vector<pfx::trace::TraceDiff> diffs;
  for (int rep = 0; rep < s.reps; ++rep) {
    const auto base = trace_side(ctx, landing_exe, s, model_name, *model, rep, ctx.baseline, "baseline", r);
    if (!base) return;
    const auto cand = trace_side(ctx, landing_exe, s, model_name, *model, rep, ctx.candidate, "candidate", r);
    if (!cand) return;
    diffs.push_back(pfx::trace::diff_summaries(*base, *cand));
  }
  judge_timing_model(r, model_name, diffs, s.budgets, ctx.profile.origin(), s.prompt, role_bytes);
}

}  // namespace

GateResult run_timing_gate(const GateContext& ctx, const fs::path& landing_exe) {
  GateResult r = ctx.start();
  namespace cap = contract::capability;
  if (ctx.skipped_without(r, {&ctx.candidate, &ctx.baseline}, {{cap::kSubcommands, "bench"}, {cap::kBackends, "cuda"}})) return r;
  const TimingSettings s(ctx.profile);
  fs::create_directories(ctx.work_dir);
  if (auto probe = gpu_probe(ctx)) {
    r.checks.push_back(*probe);
    finish(r, ctx.profile, ctx.deadline.elapsed());
    return r;
  }
  for (const auto& model_name : s.models) time_model(ctx, landing_exe, s, model_name, r);
  json per_model = r.details.value("models", json::array());
  std::vector<std::string> evidence = r.details.value("model_evidence", std::vector<std::string>{});
  r.details.erase("model_evidence");
  r.details["models"] = per_model;
  r.details["role_budgets"] = s.budgets;
  for (size_t i = 0; i < evidence.size(); ++i) r.evidence += (i ? " | " : "") + evidence[i];
  finish(r, ctx.profile, ctx.deadline.elapsed());
  return r;
}

}  // namespace pfx::gates

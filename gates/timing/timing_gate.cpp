// timing gate (see timing_gate.h).
#include "timing/timing_gate.h"

#include <fnmatch.h>

#include <cmath>
#include <map>

#include "core/format.h"
#include "contract/prefill_cli.h"
#include "timing/role_bytes.h"
#include "timing/timing_report.h"
#include "trace/diff.h"
#include "trace/summary.h"
#include "trace/trace_json.h"
#include "util/error.h"

namespace pfx::gates {

namespace fs = std::filesystem;
using nlohmann::json;

namespace {

std::string mover_text(const pfx::trace::DiffRow& row) {
  std::string s = row.key + " " + grouped(std::llround(row.a_ns)) + " → " + grouped(std::llround(row.b_ns)) + " ns";
  if (row.delta_percent) s += " (" + signed_pct(*row.delta_percent) + ")";
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
        c.reason = "role " + row.key + " " + signed_pct(dp) + " > budget " + fixed(limit, 1) + "% + noise " + fixed(noise, 1) + "%";
      } else {
        c.reason = "role " + row.key + " " + signed_pct(dp) + " within budget " + fixed(limit, 1) + "% (+ noise " + fixed(noise, 1) + "%)";
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
                   (ta > 0 ? " (" + signed_pct((tb - ta) / ta * 100) + ")" : "") + "; top movers: ";
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

GateResult run_timing_gate(const GateContext& ctx, const fs::path& landing_exe) {
  GateResult r = ctx.start();
  for (const Build* b : {&ctx.candidate, &ctx.baseline})
    for (const auto& [list, name] : {std::pair<std::string, std::string>{"subcommands", "bench"}, {"backends", "cuda"}})
      if (auto miss = missing_capability(*b, list, name)) {
        r.status = Status::Skipped;
        r.reason = *miss;
        r.duration_s = ctx.deadline.elapsed();
        return r;
      }
  auto models = ctx.profile.strings("timing", "models");
  if (models.empty() && !ctx.profile.string("ab", "model", "").empty()) models.push_back(ctx.profile.string("ab", "model", ""));
  const int prompt = static_cast<int>(ctx.profile.integer("timing", "prompt_tokens", 512));
  const int reps = static_cast<int>(std::max(1L, ctx.profile.integer("timing", "reps", 3)));
  const int warmup = static_cast<int>(ctx.profile.integer("timing", "warmup", 1));
  const std::string path = ctx.profile.string("timing", "path", "fast");
  const std::string busy_range = ctx.profile.string("timing", "busy_range", "prefill");
  const json budgets = ctx.profile.gate("timing").value("role_budgets", json::array());
  if (!budgets.is_array()) fail(ctx.profile.origin(), ": gates.timing.role_budgets: expected a list of {role, max_regression_pct}");
  fs::create_directories(ctx.work_dir);
  if (auto probe = gpu_probe(ctx)) {
    r.checks.push_back(*probe);
    finish(r, ctx.profile, ctx.deadline.elapsed());
    return r;
  }
  for (const auto& model_name : models) {
    Check traced;
    traced.name = model_name;
    const auto model = ctx.models.resolve(model_name, ctx.deadline.remaining());
    if (!model.ok) {
      traced.status = model.unavailable ? Status::Skipped : Status::Fail;
      traced.waivable = false;
      traced.reason = model.error;
      r.checks.push_back(traced);
      continue;
    }
    // Untraced probe: does a GPU answer at all? (exit 3 → SKIPPED without involving the tracer)
    const auto probe = ctx.engine(ctx.candidate).bench(model.path, {prompt}, 0, 1, 0, path, ctx.deadline.remaining());
    if (!probe.ok()) {
      r.checks.push_back(failed_call_check(model_name, probe, "candidate bench probe"));
      continue;
    }
    const auto role_bytes = weight_bytes(ctx, model.path);
    std::vector<pfx::trace::TraceDiff> diffs;
    bool broke = false;
    for (int rep = 0; rep < reps && !broke; ++rep) {
      std::pair<const Build*, std::string> sides[] = {{&ctx.baseline, "baseline"}, {&ctx.candidate, "candidate"}};
      std::map<std::string, pfx::trace::Summary> sums;
      for (auto& [b, label] : sides) {
        ctx.say(model_name + " rep " + std::to_string(rep + 1) + "/" + std::to_string(reps) + ": trace " + label);
        const fs::path out = ctx.work_dir / ("timing-" + model_name + "-" + std::to_string(rep) + "-" + label + ".json");
        fs::remove(out);
        ProcessSpec spec;
        spec.argv = {landing_exe.string(), "trace", "-o", out.string(), "--range", busy_range, "--skip",
                     std::to_string(warmup), "--quiet", "--"};
        // The traced command: the same `prefill bench` the engine runner would run.
        std::vector<std::string> args = {b->prefill.string(), "bench", "--model", model.path.string(), "-p",
                                         std::to_string(prompt), "-r", "1", "--warmup", std::to_string(warmup),
                                         "--path", path, "--json"};
        spec.argv.insert(spec.argv.end(), args.begin(), args.end());
        spec.env = {{"PFX_FIXTURES", ctx.fixtures_dir.string()}, {"CUDA_DEVICE_ORDER", "PCI_BUS_ID"}};
        spec.timeout_s = ctx.deadline.remaining();
        const auto p = run_process(spec);
        Check c;
        c.name = model_name;
        c.command = shell_join(spec.argv, spec.env);
        if (p.timed_out || p.signal || !p.exited || p.exit_code != 0) {
          const bool no_tracer = p.exited && p.exit_code == 4;
          c.status = no_tracer ? Status::Skipped : Status::Fail;
          c.waivable = false;
          c.reason = (no_tracer ? "tracer produced no trace (CUPTI unavailable?): " : label + " traced bench ") + p.describe() +
                     (p.tail(3).empty() ? "" : ": " + p.tail(3));
          r.checks.push_back(c);
          broke = true;
          break;
        }
        try {
          sums[label] = pfx::trace::summarize(pfx::trace::load_trace(out), out.string(), {busy_range});
        } catch (const Error& e) {
          c.status = Status::Fail;
          c.waivable = false;
          c.reason = std::string("trace unreadable: ") + e.what();
          r.checks.push_back(c);
          broke = true;
          break;
        }
      }
      if (broke) break;
      diffs.push_back(pfx::trace::diff_summaries(sums["baseline"], sums["candidate"]));
    }
    if (broke) continue;
    judge_timing_model(r, model_name, diffs, budgets, ctx.profile.origin(), prompt, role_bytes);
  }
  json per_model = r.details.value("models", json::array());
  std::vector<std::string> evidence = r.details.value("model_evidence", std::vector<std::string>{});
  r.details.erase("model_evidence");
  r.details["models"] = per_model;
  r.details["role_budgets"] = budgets;
  for (size_t i = 0; i < evidence.size(); ++i) r.evidence += (i ? " | " : "") + evidence[i];
  finish(r, ctx.profile, ctx.deadline.elapsed());
  return r;
}

}  // namespace pfx::gates

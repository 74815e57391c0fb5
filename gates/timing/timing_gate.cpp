// timing gate (see timing_gate.h).
#include "timing/timing_gate.h"

#include <map>
#include <optional>
#include <set>

#include "contract/prefill_cli.h"
#include "ptxas/kernel_resources.h"
#include "ptxas/ptxas_gate.h"
#include "timing/kernel_code.h"
#include "timing/kernel_coverage.h"
#include "timing/role_bytes.h"
#include "timing/timing_judge.h"
#include "timing/timing_report.h"
#include "trace/diff.h"
#include "trace/summary.h"
#include "trace/trace_cli.h"
#include "trace/trace_json.h"
#include "util/error.h"

namespace pfx::gates {

namespace fs = std::filesystem;
using nlohmann::json;

namespace {

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
                        const TimingSettings& settings, int prompt, const json& code,
                        const std::map<std::string, double>& role_weight_bytes, const json& ran) {
  TimingModel tm{model_name, prompt, pfx::trace::combine_repetitions(diffs)};
  if (tm.diff.per_pass)  // weight bytes are per pass; totals over a whole trace have no such count
    for (auto& role : tm.diff.roles) role.bytes = pfx::gates::role_weight_bytes(role_weight_bytes, role.key);
  // The evidence: the combined diff's one JSON form (samples per repetition, a repetition where
  // the key did not occur counting 0 ns) plus, where known, whether each key's code changed.
  json m = to_json(tm);
  for (const char* list : {"kernels", "roles"}) {
    const json known = code.is_object() ? code.value(list, json::object()) : json::object();
    for (auto& row : m[list]) {
      if (!row.contains("members")) {
        if (known.contains(row["key"].get<std::string>())) row["sass"] = known[row["key"].get<std::string>()];
        continue;
      }
      // A row merged from regrouped roles (trace/diff.h) is unchanged code only if every member
      // role is: the row's own name is also a member's, whose kernels are only part of the row.
      std::string sass = "unchanged";
      for (const auto& member : row["members"]) {
        const std::string st = known.value(member.get<std::string>(), std::string("unavailable"));
        if (st == "unavailable") sass = "unavailable";
        else if (st != "unchanged" && sass != "unavailable") sass = "changed";
      }
      row["sass"] = sass;
    }
  }
  m["sass"] = code.is_object() ? json{{"status", code.value("status", "unavailable")}, {"reason", code.value("reason", "")}}
                               : json{{"status", "unavailable"}, {"reason", "not looked up"}};
  if (!ran.is_null()) m["ran"] = ran;
  auto checks = judge_timing_evidence(m, settings);
  json models = r.details.value("models", json::array());
  add_timing_output(r, m, models.size());
  models.push_back(m);
  r.details["models"] = models;
  for (auto& c : checks) r.checks.push_back(c);
}

namespace {

// gates.timing.* as the gate runs them (the judgement's own settings are timing_judge.h's).
struct RunSettings {
  std::vector<std::string> models;
  int prompt = 512, reps = 5, warmup = 1;
  AskedRun ask;  // what every bench asks of either build (its path: gates.timing.path)
  std::string busy_range;

  explicit RunSettings(const GateProfile& p)
      : models(p.strings("timing", "models")),
        prompt(static_cast<int>(p.integer("timing", "prompt_tokens", 512))),
        reps(static_cast<int>(std::max(1L, p.integer("timing", "reps", 5)))),
        warmup(static_cast<int>(p.integer("timing", "warmup", 1))),
        ask(timing_ask(p)),
        busy_range(p.string("timing", "busy_range", "prefill")) {
    if (models.empty() && !p.string("ab", "model", "").empty()) models.push_back(p.string("ab", "model", ""));
  }
};

// What one model's traced runs reported they ran: the evidence per side and the verdicts together.
struct RunsAsAsked {
  json evidence = {{"baseline", json::array()}, {"candidate", json::array()}};
  RanAsAsked verdict;
};

// One traced `prefill bench` of build `b` (`label`: baseline or candidate) under `landing trace`:
// its summary (and its kernels' names into `code`), or nullopt after adding the check that says
// why there is none. What the bench reported it ran (its JSON passes through the tracer's stdout)
// joins `ran`; a run of anything but what was asked is such a check.
std::optional<pfx::trace::Summary> trace_side(const GateContext& ctx, const fs::path& landing_exe, const RunSettings& s,
                                              const std::string& model_name, const fs::path& model, int rep, const Build& b,
                                              const std::string& label, TraceCode& code, RunsAsAsked& ran, GateResult& r) {
  ctx.say(model_name + " rep " + std::to_string(rep + 1) + "/" + std::to_string(s.reps) + ": trace " + label);
  const fs::path out = ctx.work_dir / ("timing-" + model_name + "-" + std::to_string(rep) + "-" + label + ".json");
  fs::remove(out);
  ProcessSpec spec;
  spec.argv = {landing_exe.string(), "trace", "-o", out.string(), "--range", s.busy_range, "--skip", std::to_string(s.warmup), "--quiet", "--"};
  // The traced command: the same `prefill bench` the engine runner would run.
  const std::vector<std::string> bench = {b.prefill.string(), "bench", "--model", model.string(), "-p", std::to_string(s.prompt), "-r", "1",
                                          "--warmup", std::to_string(s.warmup), "--path", s.ask.path, "--json"};
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
  const VerifiedCall verified = verify_call(s.ask, printed_json_object(p.out).value_or(json()), b);
  ran.evidence[label].push_back(verified.evidence);
  ran.verdict.add(verified.verdict);
  if (!verified.verdict.ok()) {
    r.checks.push_back(hard_failure(model_name, label + " traced bench: " + verified.verdict.reason(), command));
    return std::nullopt;
  }
  try {
    const auto trace = pfx::trace::load_trace(out);
    collect_trace_code(trace, code, label == "candidate");
    return pfx::trace::summarize(trace, out.string(), {s.busy_range});
  } catch (const Error& e) {
    r.checks.push_back(hard_failure(model_name, std::string("trace unreadable: ") + e.what(), command));
    return std::nullopt;
  }
}

// One model: a GPU probe, then `reps` alternating baseline/candidate traces, judged together.
// True when it was traced to the end (its launched kernels then join `launched`).
bool time_model(const GateContext& ctx, const fs::path& landing_exe, const RunSettings& s, const TimingSettings& settings,
                const std::string& model_name, const SassHashes& base_sass, const SassHashes& cand_sass,
                std::set<std::string>& launched, GateResult& r) {
  const auto model = ctx.model_or_check(r, model_name, model_name);
  if (!model) return false;
  // Untraced probe: does a GPU answer at all? (exit 3 → SKIPPED without involving the tracer)
  const auto probe = ctx.engine(ctx.candidate).bench(*model, {s.prompt}, 0, 1, 0, s.ask.path, ctx.deadline.remaining());
  if (!probe.ok()) {
    r.checks.push_back(failed_call_check(model_name, probe, "candidate bench probe"));
    return false;
  }
  const auto role_bytes = weight_bytes(ctx, *model);
  std::vector<pfx::trace::TraceDiff> diffs;
  TraceCode code;  // kernel names → mangled names, roles → kernels, from the traces themselves
  RunsAsAsked ran;
  for (int rep = 0; rep < s.reps; ++rep) {
    const auto base = trace_side(ctx, landing_exe, s, model_name, *model, rep, ctx.baseline, "baseline", code, ran, r);
    if (!base) return false;
    const auto cand = trace_side(ctx, landing_exe, s, model_name, *model, rep, ctx.candidate, "candidate", code, ran, r);
    if (!cand) return false;
    diffs.push_back(pfx::trace::diff_summaries(*base, *cand));
  }
  const size_t first_check = r.checks.size();
  judge_timing_model(r, model_name, diffs, settings, s.prompt, kernel_code_status(code, base_sass, cand_sass), role_bytes,
                     ran.evidence);
  for (size_t k = first_check; k < r.checks.size(); ++k) r.checks[k].reason += ran.verdict.note();  // what an older build cannot report
  launched.insert(code.candidate_launched.begin(), code.candidate_launched.end());
  return true;
}

// Which of the candidate's kernels the traces launched, against both builds' kernel resources.
void check_coverage(GateResult& r, const GateContext& ctx, const std::set<std::string>& launched, const SassHashes& base_sass,
                    const SassHashes& cand_sass) {
  CoverageInput cov;
  cov.launched = launched;
  cov.baseline_sass = base_sass;
  cov.candidate_sass = cand_sass;
  try {
    cov.candidate = read_kernel_resources(kernel_resources_path(ctx.candidate)).kernels;
    cov.resources_known = true;
    if (fs::exists(kernel_resources_path(ctx.baseline))) cov.baseline = read_kernel_resources(kernel_resources_path(ctx.baseline)).kernels;
  } catch (const Error& e) {
    cov.resources_note = e.what();
  }
  r.details["coverage"] = kernel_coverage(cov);
  judge_coverage(r);
}

}  // namespace

GateResult run_timing_gate(const GateContext& ctx, const fs::path& landing_exe) {
  GateResult r = ctx.start();
  namespace cap = contract::capability;
  if (ctx.skipped_without(r, {&ctx.candidate, &ctx.baseline}, {{cap::kSubcommands, "bench"}, {cap::kBackends, "cuda"}})) return r;
  const RunSettings s(ctx.profile);
  const TimingSettings settings = timing_settings(ctx.profile);
  fs::create_directories(ctx.work_dir);
  // Which kernels' code changed: each build's SASS hashes (kernel-sass.json beside its kernel
  // resources, made by scripts/kernel_sass.py when the build lacks one).
  const SassHashes base_sass = load_sass_hashes(ctx.baseline, ctx.repo), cand_sass = load_sass_hashes(ctx.candidate, ctx.repo);
  if (auto probe = gpu_probe(ctx)) {
    r.checks.push_back(*probe);
    finish(r, ctx.profile, ctx.deadline.elapsed());
    return r;
  }
  std::set<std::string> launched;  // over every model's candidate traces (timing/kernel_coverage.h)
  bool traced_any = false;
  for (const auto& model_name : s.models)
    traced_any |= time_model(ctx, landing_exe, s, settings, model_name, base_sass, cand_sass, launched, r);
  if (traced_any) check_coverage(r, ctx, launched, base_sass, cand_sass);
  r.details["role_budgets"] = settings.role_budgets;
  r.details["alpha"] = settings.alpha;
  r.details["sass"] = {{"baseline", base_sass.origin}, {"candidate", cand_sass.origin}};
  for (const auto& m : r.details.value("models", json::array()))
    r.evidence += (r.evidence.empty() ? "" : " | ") + m.value("evidence", std::string());
  finish(r, ctx.profile, ctx.deadline.elapsed());
  return r;
}

}  // namespace pfx::gates

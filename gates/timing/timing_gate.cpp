// timing gate (see timing_gate.h).
#include "timing/timing_gate.h"

#include <map>
#include <set>

#include "contract/prefill_cli.h"
#include "core/format.h"
#include "ptxas/kernel_resources.h"
#include "ptxas/ptxas_gate.h"
#include "timing/kernel_code.h"
#include "timing/kernel_coverage.h"
#include "timing/role_bytes.h"
#include "timing/timing_judge.h"
#include "timing/timing_report.h"
#include "trace/diff.h"
#include "trace/summary.h"
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
                        const std::map<std::string, double>& role_weight_bytes) {
  TimingModel tm{model_name, prompt, pfx::trace::combine_repetitions(diffs)};
  if (tm.diff.per_pass)  // weight bytes are per pass; totals over a whole trace have no such count
    for (auto& role : tm.diff.roles) role.bytes = pfx::gates::role_weight_bytes(role_weight_bytes, role.key);
  // The evidence: the combined diff's one JSON form (samples per repetition, a repetition where
  // the key did not occur counting 0 ns) plus, where known, whether each key's code changed.
  json m = to_json(tm);
  for (const char* list : {"kernels", "roles"}) {
    const json known = code.is_object() ? code.value(list, json::object()) : json::object();
    for (auto& row : m[list])
      if (known.contains(row["key"].get<std::string>())) row["sass"] = known[row["key"].get<std::string>()];
  }
  m["sass"] = code.is_object() ? json{{"status", code.value("status", "unavailable")}, {"reason", code.value("reason", "")}}
                               : json{{"status", "unavailable"}, {"reason", "not looked up"}};
  auto checks = judge_timing_evidence(m, settings);
  json models = r.details.value("models", json::array());
  add_timing_output(r, m, models.size());
  models.push_back(m);
  r.details["models"] = models;
  for (auto& c : checks) r.checks.push_back(c);
}

GateResult run_timing_gate(const GateContext& ctx, const fs::path& landing_exe) {
  GateResult r = ctx.start();
  for (const Build* b : {&ctx.candidate, &ctx.baseline})
    for (const auto& [list, name] : {std::pair<std::string, std::string>{"subcommands", "bench"}, {"backends", "cuda"}})
      if (auto miss = missing_capability(*b, list, name)) return skip_gate(r, *miss, ctx.deadline.elapsed());
  auto models = ctx.profile.strings("timing", "models");
  if (models.empty() && !ctx.profile.string("ab", "model", "").empty()) models.push_back(ctx.profile.string("ab", "model", ""));
  const int prompt = static_cast<int>(ctx.profile.integer("timing", "prompt_tokens", 512));
  const int reps = static_cast<int>(std::max(1L, ctx.profile.integer("timing", "reps", 5)));
  const int warmup = static_cast<int>(ctx.profile.integer("timing", "warmup", 1));
  const std::string path = ctx.profile.string("timing", "path", "fast");
  const std::string busy_range = ctx.profile.string("timing", "busy_range", "prefill");
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
    TraceCode code;  // kernel names → mangled names, roles → kernels, from the traces themselves
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
          const auto trace = pfx::trace::load_trace(out);
          collect_trace_code(trace, code, label == "candidate");
          sums[label] = pfx::trace::summarize(trace, out.string(), {busy_range});
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
    judge_timing_model(r, model_name, diffs, settings, prompt, kernel_code_status(code, base_sass, cand_sass), role_bytes);
    launched.insert(code.candidate_launched.begin(), code.candidate_launched.end());
    traced_any = true;
  }
  if (traced_any) {
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
  r.details["role_budgets"] = settings.role_budgets;
  r.details["alpha"] = settings.alpha;
  r.details["sass"] = {{"baseline", base_sass.origin}, {"candidate", cand_sass.origin}};
  for (const auto& m : r.details.value("models", json::array()))
    r.evidence += (r.evidence.empty() ? "" : " | ") + m.value("evidence", std::string());
  finish(r, ctx.profile, ctx.deadline.elapsed());
  return r;
}

}  // namespace pfx::gates

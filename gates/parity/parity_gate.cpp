// parity gate (see parity_gate.h).
#include "parity/parity_gate.h"

#include <optional>

#include "contract/prefill_cli.h"
#include "logits/logits_compare.h"
#include "logits/logits_limits.h"
#include "logits/residual_diff.h"
#include "parity/parity_plan.h"
#include "util/text_format.h"

namespace pfx::gates {

namespace fs = std::filesystem;

namespace {

// A layer counts as diverging once its residual stream deviates (max|Δ|/max|ref|) by more than
// this fraction of the logits threshold. A fault's deviation grows through the later layers and
// the head, so the layer where the paths part shows far less than the final logits do; the paths'
// fp32 summation-order noise stays near 1e-7..1e-6 relative, so a hundredth of the threshold
// (1e-5 at the default 1e-3) sits above that noise and well below the failing level.
constexpr double kLayerBoundFractionOfThreshold = 1.0 / 100;
// Localising costs two more runs of the case: only the first failing cases get it.
constexpr int kMaxLocalisedCases = 2;

// Why the candidate cannot dump residual streams, or nullopt when it can.
std::optional<std::string> residual_dump_unsupported(const Build& b) {
  const auto& v = b.version;
  if (!v.is_object() || !v.contains("capabilities") || !v["capabilities"].is_object() ||
      !v["capabilities"].contains("residual_dump") || !v["capabilities"]["residual_dump"].is_string())
    return "layer localisation unavailable: this prefill has no --dump-residual";
  const std::string layout = v["capabilities"]["residual_dump"];
  if (layout != contract::kResidualDumpLayout)
    return "layer localisation unavailable: this prefill dumps residuals as '" + layout + "', this gate reads " +
           contract::kResidualDumpLayout;
  return std::nullopt;
}

// What localising one failing case found: a phrase for the check's reason (empty when nothing
// was found) and the details stored with the check's metrics.
struct Localisation {
  std::string summary;
  nlohmann::json details = nlohmann::json::object();
};

// Reruns both paths of case `index` with residual dumps under the gate's work dir and compares
// them layer by layer. Never throws: whatever goes wrong becomes a note, the verdict stays.
Localisation localise_divergence(const GateContext& ctx, const EngineRunner& eng, const fs::path& model, const GateCase& cs,
                                 size_t index, const std::string& backend, const std::string& fast, const std::string& ref,
                                 const LogitsLimits& limits) {
  Localisation out;
  const double bound = limits.max_rel_dev * kLayerBoundFractionOfThreshold;
  auto& d = out.details;
  d["bound"] = bound;
  const auto give_up = [&](const std::string& status, const std::string& note) {
    d["status"] = status;
    d["note"] = note;
    return out;
  };
  if (auto why = residual_dump_unsupported(ctx.candidate)) return give_up("unavailable", *why);
  if (ctx.deadline.expired()) return give_up("not attempted", "layer localisation not attempted: the gate's time is up");
  try {
    ctx.say("case " + cs.name + ": localising the divergence (" + fast + " and " + ref + " with --dump-residual)");
    std::vector<fs::path> dirs, logits;
    d["commands"] = nlohmann::json::array();
    for (const std::string& path : {fast, ref}) {
      const std::string stem = "parity-" + std::to_string(index) + "-" + path + "-residual";
      dirs.push_back(ctx.work_dir / stem);
      logits.push_back(ctx.work_dir / (stem + "-logits.npy"));
      fs::remove_all(dirs.back());  // the gate's own scratch names: a rerun of the gate finds them anew
      fs::remove(logits.back());
      const auto call = eng.logits(model, cs.input, backend, path, logits.back(), ctx.deadline.remaining(), dirs.back());
      d["commands"].push_back(call.command);
      if (!call.ok()) return give_up("failed", "layer localisation failed: " + path + " path with --dump-residual: " + call.reason);
    }
    // The reruns must show the failure again, or the layers say nothing about it.
    NpyArray la, lb;
    std::string err = load_finite_logits(logits[0], la);
    if (err.empty()) err = load_finite_logits(logits[1], lb);
    if (err.empty()) {
      const auto rerun = compare_logits(la, lb);
      if (!rerun.shape_match) err = "rerun logits: " + rerun.shape_error;
      else if (limits_exceeded(rerun, limits).empty())
        return give_up("not reproduced", "layer localisation: the rerun with --dump-residual did not reproduce the failure "
                                         "(max rel dev " + sci(rerun.max_rel_dev) + ", NMSE " + sci(rerun.nmse) + ")");
      else d["rerun_max_rel_dev"] = rerun.max_rel_dev;
    }
    if (!err.empty()) return give_up("failed", "layer localisation failed: " + err);
    const auto diff = diff_residual_dirs(dirs[0], dirs[1], bound);
    d.update(to_json(diff));
    d["status"] = "localised";
    out.summary = describe(diff);
  } catch (const std::exception& e) {
    return give_up("failed", std::string("layer localisation failed: ") + e.what());
  }
  return out;
}

// "blk.7" where localisation found the first diverging layer.
std::optional<std::string> first_diverging_layer(const nlohmann::json& localisation) {
  if (!localisation.contains("first_diverging_layer") || localisation["first_diverging_layer"].is_null()) return std::nullopt;
  return "blk." + std::to_string(localisation["first_diverging_layer"].get<int>());
}

Table parity_table(const std::string& fast, const std::string& ref, const std::string& backend) {
  Table table;
  table.id = "parity";
  table.title = "parity: " + fast + " vs " + ref + " path per case (" + backend + ")";
  table.columns = {{"case", "", {}}};
  for (const auto& col : comparison_columns()) table.columns.push_back(col);
  table.columns.push_back({"first diverging layer", "", {}});
  return table;
}

// One check's row: the comparison's cells and the first diverging layer, where localised.
TableRow table_row(const Check& c, const LogitsComparison& cmp) {
  TableRow tr{{text_cell(c.name)}};
  for (const auto& cell : comparison_cells(cmp)) tr.cells.push_back(cell);
  const auto layer = first_diverging_layer(c.metrics.value("localisation", nlohmann::json::object()));
  tr.cells.push_back(layer ? text_cell(*layer) : Cell{});
  tr.check = c.name;
  return tr;
}

// A case that cannot run says so in every check it owns (one per GEMM variant).
void every_run_of(GateResult& r, const ParityPlan& plan, const std::string& case_name, Status st, const std::string& why, bool waivable) {
  for (const auto& run : plan.runs)
    if (run.case_name == case_name) {
      Check c;
      c.name = run.check;
      c.status = st;
      c.waivable = waivable;
      c.reason = why;
      r.checks.push_back(c);
    }
}

}  // namespace

GateResult run_parity_gate(const GateContext& ctx) {
  GateResult r = ctx.start();
  const AskedRun ref_ask = parity_reference_ask(ctx.profile);
  const std::string backend = ref_ask.backend;
  const std::string fast = parity_ask(ctx.profile, {}).path;
  const std::string ref = ref_ask.path;
  const LogitsLimits limits = logits_limits(ctx.profile, "parity");
  const double max_rel = limits.max_rel_dev;
  r.details["thresholds"] = to_json(limits);
  r.details["backend"] = backend;
  r.details["layer_localisation"] = {{"bound", max_rel * kLayerBoundFractionOfThreshold},
                                     {"bound_fraction_of_max_rel_dev", kLayerBoundFractionOfThreshold},
                                     {"max_cases", kMaxLocalisedCases}};
  r.details["paths"] = {fast, ref};
  namespace cap = contract::capability;
  if (ctx.skipped_without(r, {&ctx.candidate},
                          {{cap::kSubcommands, "logits"}, {cap::kBackends, backend}, {cap::kPaths, fast}, {cap::kPaths, ref}}))
    return r;
  const auto cases = parse_cases(ctx.profile, "parity", ctx.fixtures_dir, project_fixtures(ctx.candidate));
  const ParityPlan plan = plan_parity_runs(ctx.profile, case_names(ctx.profile, "parity"), {ctx.candidate.version, ctx.candidate.id},
                                           {ctx.baseline.version, ctx.baseline.id});
  r.details["gemm_variants"] = {{"note", plan.note}, {"missing", plan.missing_variants}, {"dropped", plan.dropped_variants}};
  for (const auto& c : plan.settled) r.checks.push_back(c);  // the variants the candidate cannot run
  fs::create_directories(ctx.work_dir);
  const auto eng = ctx.engine(ctx.candidate);
  std::string unavailable;  // once the backend says "not here", the other cases skip without asking
  double worst = -1;
  std::string worst_case;
  double worst_nmse = 0, min_agree = 1;
  int localise_attempts = 0;
  std::vector<std::string> localised;  // "blk.7 (case)" for the evidence line
  nlohmann::json rows = nlohmann::json::array();
  Table table = parity_table(fast, ref, backend);
  for (size_t i = 0; i < cases.size(); ++i) {
    const auto& cs = cases[i];
    ctx.say("case " + std::to_string(i + 1) + "/" + std::to_string(cases.size()) + " " + cs.name);
    auto all_runs = [&](Status st, const std::string& why, bool waivable) { every_run_of(r, plan, cs.name, st, why, waivable); };
    if (!unavailable.empty()) {
      all_runs(Status::Skipped, unavailable, true);
      continue;
    }
    const auto model = ctx.models.resolve(cs.model, ctx.deadline.remaining());
    if (!model.ok) {
      all_runs(model.unavailable ? Status::Skipped : Status::Fail, model.error, false);
      continue;
    }
    // The reference path once, then the fast path on each GEMM variant the plan names for this case.
    const fs::path out_ref = ctx.work_dir / ("parity-" + std::to_string(i) + "-" + ref + ".npy");
    const auto b = eng.logits(model.path, cs.input, backend, ref, out_ref, ctx.deadline.remaining());
    if (!b.ok()) {
      for (const auto& run : plan.runs)
        if (run.case_name == cs.name) {
          r.checks.push_back(failed_call_check(run.check, b, ref + " path"));
          if (b.outcome == RunOutcome::Unavailable) unavailable = r.checks.back().reason;
        }
      continue;
    }
    // A reference that is not the path asked for (a build running its fast path for both) would
    // make every run of the case compare a path with itself.
    const VerifiedCall ref_ran = verify_call(ref_ask, b, ctx.candidate);
    if (!ref_ran.verdict.ok()) {
      for (const auto& run : plan.runs)
        if (run.case_name == cs.name) {
          r.checks.push_back(hard_failure(run.check, ref + " path: " + ref_ran.verdict.reason(), b.command));
          r.checks.back().metrics["ran"] = {{"reference", ref_ran.evidence}};
        }
      continue;
    }
    NpyArray lb;
    const std::string ref_err = load_finite_logits(out_ref, lb);
    for (const auto& run : plan.runs) {
      if (run.case_name != cs.name) continue;
      Check c;
      c.name = run.check;
      if (!unavailable.empty()) {
        c.status = Status::Skipped;
        c.reason = unavailable;
        r.checks.push_back(c);
        continue;
      }
      const std::string fast_label = fast + (run.gemm.empty() ? "" : " --gemm " + run.gemm);
      const fs::path out_fast = ctx.work_dir / ("parity-" + std::to_string(i) + "-" + fast + (run.gemm.empty() ? "" : "-" + run.gemm) + ".npy");
      const auto a = eng.logits(model.path, cs.input, backend, fast, out_fast, ctx.deadline.remaining(), {}, run.gemm);
      if (!a.ok()) {
        r.checks.push_back(failed_call_check(run.check, a, fast_label + " path"));
        if (a.outcome == RunOutcome::Unavailable) unavailable = r.checks.back().reason;
        continue;
      }
      c.command = a.command + "\n" + b.command;
      // Logits of another variant or path than the one asked for are no evidence for this check,
      // whatever they measure: a FAIL no waiver excuses.
      const VerifiedCall ran = verify_call(parity_ask(ctx.profile, run), a, ctx.candidate);
      const nlohmann::json ran_metrics = {{"run", ran.evidence}, {"reference", ref_ran.evidence}};
      if (!ran.verdict.ok()) {
        fail_hard(c, fast_label + " path: " + ran.verdict.reason());
        c.metrics["ran"] = ran_metrics;
        r.checks.push_back(c);
        continue;
      }
      NpyArray la;
      std::string err = load_finite_logits(out_fast, la);
      if (err.empty()) err = ref_err;
      if (!err.empty()) {
        fail_hard(c, err);
        r.checks.push_back(c);
        continue;
      }
      const auto cmp = compare_logits(la, lb);
      c.metrics = to_json(cmp);
      if (!run.gemm.empty()) c.metrics["gemm"] = run.gemm;
      c.metrics["ran"] = ran_metrics;
      c.metrics["duration_s"] = a.process.wall_s + b.process.wall_s;  // this variant's run and the reference it is judged by
      rows.push_back({{"case", run.check}, {"metrics", c.metrics}});
      if (!cmp.shape_match) {
        fail_hard(c, fast_label + " vs " + ref + ": " + cmp.shape_error);
        r.checks.push_back(c);
        continue;
      }
      const std::string why = limits_exceeded(cmp, limits);
      c.status = why.empty() ? Status::Pass : Status::Fail;
      c.reason = why.empty() ? limits_within(cmp.max_rel_dev, cmp.nmse, cmp.top1_agreement)
                             : why + " (worst at position " + std::to_string(cmp.worst_row) + ", token " +
                                   std::to_string(cmp.worst_col) + ": " + std::to_string(cmp.worst_value) + " vs " +
                                   std::to_string(cmp.worst_ref) + ")";
      c.reason += RanAsAsked(ran.verdict).add(ref_ran.verdict).note();  // what an older build could not report
      if (cmp.max_rel_dev > worst) {
        worst = cmp.max_rel_dev;
        worst_case = run.check;
      }
      // Localising reruns the default variant (no --gemm): a variant's failure keeps its logits diff.
      if (c.status == Status::Fail && run.gemm.empty()) {
        Localisation loc;
        if (localise_attempts < kMaxLocalisedCases) {
          ++localise_attempts;
          loc = localise_divergence(ctx, eng, model.path, cs, i, backend, fast, ref, limits);
        } else {
          loc.details = {{"status", "not attempted"},
                         {"note", "layer localisation not attempted: only the first " + std::to_string(kMaxLocalisedCases) +
                                      " failing cases get it (two more runs each)"}};
        }
        if (!loc.summary.empty()) c.reason += "; " + loc.summary;
        if (auto layer = first_diverging_layer(loc.details)) localised.push_back(*layer + " (" + cs.name + ")");
        c.metrics["localisation"] = loc.details;
        rows.back()["metrics"] = c.metrics;
      }
      table.rows.push_back(table_row(c, cmp));
      worst_nmse = std::max(worst_nmse, cmp.nmse);
      min_agree = std::min(min_agree, cmp.top1_agreement);
      r.checks.push_back(c);
    }
  }
  r.details["cases"] = rows;
  if (!table.rows.empty()) r.tables.push_back(table);
  int passed = 0;
  for (const auto& c : r.checks) passed += c.status == Status::Pass;
  if (worst >= 0)
    r.evidence = "logits " + fast + " vs " + ref + " (" + backend + "): max rel dev " + sci(worst) + " (gate " + sci(max_rel) +
                 ", worst " + worst_case + "), NMSE ≤ " + sci(worst_nmse) + ", top-1 ≥ " + percent(min_agree) + "; " + std::to_string(passed) + "/" +
                 std::to_string(r.checks.size()) + " cases within";
  r.evidence += (r.evidence.empty() ? "" : "; ") + plan.note;
  if (!localised.empty()) {
    r.evidence += "; first diverging layer";
    for (size_t k = 0; k < localised.size(); ++k) r.evidence += (k ? ", " : " ") + localised[k];
  }
  finish(r, ctx.profile, ctx.deadline.elapsed());
  return r;
}

}  // namespace pfx::gates

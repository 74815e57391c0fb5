// parity gate (see parity_gate.h).
#include "parity/parity_gate.h"

#include "core/format.h"
#include "core/logits_compare.h"

namespace pfx::gates {

namespace fs = std::filesystem;

GateResult run_parity_gate(const GateContext& ctx) {
  GateResult r = ctx.start();
  const std::string backend = ctx.profile.string("parity", "backend", "cuda");
  const std::string fast = ctx.profile.string("parity", "path", "fast");
  const std::string ref = ctx.profile.string("parity", "reference_path", "generic");
  const double max_rel = ctx.profile.number("parity", "max_rel_dev", 1e-3);
  const double max_nmse = ctx.profile.number("parity", "max_nmse", -1);
  const double min_top1 = ctx.profile.number("parity", "min_top1", -1);
  r.details["thresholds"] = {{"max_rel_dev", max_rel}, {"max_nmse", max_nmse}, {"min_top1", min_top1}};
  r.details["backend"] = backend;
  r.details["paths"] = {fast, ref};
  for (const auto& [list, name] : {std::pair<std::string, std::string>{"subcommands", "logits"}, {"backends", backend},
                                   {"paths", fast}, {"paths", ref}})
    if (auto miss = missing_capability(ctx.candidate, list, name)) {
      r.status = Status::Skipped;
      r.reason = *miss;
      r.duration_s = ctx.deadline.elapsed();
      return r;
    }
  const auto cases = parse_cases(ctx.profile, "parity", ctx.fixtures_dir);
  fs::create_directories(ctx.work_dir);
  const auto eng = ctx.engine(ctx.candidate);
  std::string unavailable;  // once the backend says "not here", the other cases skip without asking
  double worst = -1;
  std::string worst_case;
  double worst_nmse = 0, min_agree = 1;
  nlohmann::json rows = nlohmann::json::array();
  for (size_t i = 0; i < cases.size(); ++i) {
    const auto& cs = cases[i];
    ctx.say("case " + std::to_string(i + 1) + "/" + std::to_string(cases.size()) + " " + cs.name);
    Check c;
    c.name = cs.name;
    if (!unavailable.empty()) {
      c.status = Status::Skipped;
      c.reason = unavailable;
      r.checks.push_back(c);
      continue;
    }
    const auto model = ctx.models.resolve(cs.model, ctx.deadline.remaining());
    if (!model.ok) {
      c.status = model.unavailable ? Status::Skipped : Status::Fail;
      c.waivable = false;
      c.reason = model.error;
      r.checks.push_back(c);
      continue;
    }
    const fs::path out_fast = ctx.work_dir / ("parity-" + std::to_string(i) + "-" + fast + ".npy");
    const fs::path out_ref = ctx.work_dir / ("parity-" + std::to_string(i) + "-" + ref + ".npy");
    const auto a = eng.logits(model.path, cs.input, backend, fast, out_fast, ctx.deadline.remaining());
    if (!a.ok()) {
      r.checks.push_back(failed_call_check(cs.name, a, fast + " path"));
      if (a.outcome == RunOutcome::Unavailable) unavailable = r.checks.back().reason;
      continue;
    }
    const auto b = eng.logits(model.path, cs.input, backend, ref, out_ref, ctx.deadline.remaining());
    if (!b.ok()) {
      r.checks.push_back(failed_call_check(cs.name, b, ref + " path"));
      if (b.outcome == RunOutcome::Unavailable) unavailable = r.checks.back().reason;
      continue;
    }
    c.command = a.command + "\n" + b.command;
    NpyArray la, lb;
    std::string err = load_finite_logits(out_fast, la);
    if (err.empty()) err = load_finite_logits(out_ref, lb);
    if (!err.empty()) {
      c.status = Status::Fail;
      c.waivable = false;
      c.reason = err;
      r.checks.push_back(c);
      continue;
    }
    const auto cmp = compare_logits(la, lb);
    c.metrics = to_json(cmp);
    rows.push_back({{"case", cs.name}, {"metrics", c.metrics}});
    if (!cmp.shape_match) {
      c.status = Status::Fail;
      c.waivable = false;
      c.reason = fast + " vs " + ref + ": " + cmp.shape_error;
      r.checks.push_back(c);
      continue;
    }
    std::string why;
    if (cmp.max_rel_dev > max_rel) why += "max rel dev " + sci(cmp.max_rel_dev) + " > " + sci(max_rel);
    if (max_nmse >= 0 && cmp.nmse > max_nmse) why += std::string(why.empty() ? "" : "; ") + "NMSE " + sci(cmp.nmse) + " > " + sci(max_nmse);
    if (min_top1 >= 0 && cmp.top1_agreement < min_top1)
      why += std::string(why.empty() ? "" : "; ") + "top-1 agreement " + pct(cmp.top1_agreement) + " < " + pct(min_top1);
    c.status = why.empty() ? Status::Pass : Status::Fail;
    c.reason = why.empty() ? "max rel dev " + sci(cmp.max_rel_dev) + ", NMSE " + sci(cmp.nmse) + ", top-1 " + pct(cmp.top1_agreement)
                           : why + " (worst at position " + std::to_string(cmp.worst_row) + ", token " +
                                 std::to_string(cmp.worst_col) + ": " + std::to_string(cmp.worst_value) + " vs " +
                                 std::to_string(cmp.worst_ref) + ")";
    if (cmp.max_rel_dev > worst) {
      worst = cmp.max_rel_dev;
      worst_case = cs.name;
    }
    worst_nmse = std::max(worst_nmse, cmp.nmse);
    min_agree = std::min(min_agree, cmp.top1_agreement);
    r.checks.push_back(c);
  }
  r.details["cases"] = rows;
  int passed = 0;
  for (const auto& c : r.checks) passed += c.status == Status::Pass;
  if (worst >= 0)
    r.evidence = "logits " + fast + " vs " + ref + " (" + backend + "): max rel dev " + sci(worst) + " (gate " + sci(max_rel) +
                 ", worst " + worst_case + "), NMSE ≤ " + sci(worst_nmse) + ", top-1 ≥ " + pct(min_agree) + "; " + std::to_string(passed) + "/" +
                 std::to_string(r.checks.size()) + " cases within";
  finish(r, ctx.profile, ctx.deadline.elapsed());
  return r;
}

}  // namespace pfx::gates

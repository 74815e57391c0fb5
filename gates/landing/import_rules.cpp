// Binding checks and re-judging of imported results (see import_rules.h).
#include "landing/import_rules.h"

#include <set>

#include "ab/ab_judge.h"
#include "accuracy/accuracy_gate.h"
#include "run/gate_context.h"
#include "logits/logits_limits.h"
#include "greedy/greedy_judge.h"
#include "landing/import_ran_as_asked.h"
#include "parity/parity_plan.h"
#include "suite/suite_judge.h"
#include "timing/timing_judge.h"

namespace pfx::gates {

using nlohmann::json;

namespace {

std::string short_hash(const std::string& h) { return h.empty() ? "none" : h.substr(0, 12) + "…"; }

// The check names the report's profile expects from a gate (each must be in the result).
std::vector<std::string> expected_checks(const std::string& gate, const GateProfile& p, const LandingRecord& rec,
                                         const GateResult& r) {
  if (gate == "parity") {
    std::vector<std::string> out;
    for (const auto& run : report_parity_plan(p, rec).runs) out.push_back(run.check);
    return out;
  }
  if (gate == "greedy") return case_names(p, gate);
  if (gate == "accuracy") {
    std::vector<std::string> out;
    for (const auto& c : case_names(p, gate))
      for (const auto& path : accuracy_paths(p)) out.push_back(accuracy_check_name(p, c, path));
    return out;
  }
  if (gate == "ab") {
    std::vector<std::string> out;
    const auto s = ab_settings(p);
    for (const auto& m : s.metrics) out.push_back(m == s.primary ? "ab" : "ab " + m);
    return out;
  }
  if (gate == "timing") {  // every model, and the unguarded-kernel coverage once any model was traced
    auto out = p.strings("timing", "models");
    bool traced = false;
    for (const auto& c : r.checks)
      for (const auto& m : out) traced |= c.name == m && c.status != Status::Skipped;
    if (traced) out.push_back("coverage");
    return out;
  }
  if (gate == "suite") return {"ctest"};
  return {};
}

// A check claiming PASS or WAIVED re-judged from its metrics; false when they say nothing.
bool rejudge_check(const std::string& gate, Check& c, const GateProfile& p) {
  if (gate == "parity" || gate == "accuracy") {
    const auto j = rejudge_logits_metrics(c.metrics, logits_limits(p, gate));
    if (!j) return false;
    c.status = j->pass ? Status::Pass : Status::Fail;
    c.waivable = j->waivable;
    c.reason = j->reason;
    return true;
  }
  if (gate == "greedy") return judge_greedy_case(c, c.metrics);
  return false;
}

}  // namespace

ParityPlan report_parity_plan(const GateProfile& p, const LandingRecord& rec) {
  const auto build = [](const json& b) { return PlanBuild{b.value("version", json()), b.value("id", std::string())}; };
  return plan_parity_runs(p, case_names(p, "parity"), build(rec.candidate), build(rec.baseline));
}

std::vector<std::string> binding_mismatches(const GateResult& r, const LandingRecord& rec) {
  std::vector<std::string> out;
  const std::string g = r.gate + ": ";
  if (r.candidate_id != rec.candidate_id) out.push_back(g + "candidate id " + r.candidate_id + ", report has " + rec.candidate_id);
  const std::string base_id = rec.baseline.value("id", std::string());
  if (r.baseline_id != base_id) out.push_back(g + "baseline id " + (r.baseline_id.empty() ? "none" : r.baseline_id) + ", report has " + base_id);
  const json& b = r.binding;
  if (!b.is_object() || b.empty()) {
    out.push_back(g + "the result carries no binding (binary and profile hashes): written by a landing before binding, or stripped");
    return out;
  }
  for (const char* side : {"candidate", "baseline"}) {
    const std::string theirs = b.value(side, json::object()).value("prefill_sha256", std::string());
    const json& build = std::string(side) == "candidate" ? rec.candidate : rec.baseline;
    const std::string ours = build.value("prefill_sha256", std::string());
    if (theirs.empty() || theirs != ours)
      out.push_back(g + side + " prefill sha256 " + short_hash(theirs) + ", report has " + short_hash(ours) +
                    " (another binary: rebuilt elsewhere, or another commit)");
  }
  const std::string ph = b.value("profile_sha256", std::string());
  if (ph.empty() || ph != rec.profile_sha256)
    out.push_back(g + "effective gate profile sha256 " + short_hash(ph) + ", report has " + short_hash(rec.profile_sha256) +
                  " (judged under other thresholds, cases or waivers)");
  const json h = b.value("harness", json::object());
  if (!h.value("pinned", false))
    out.push_back(g + "judged by a harness that is not pinned: " + h.value("how", std::string("no harness recorded")));
  return out;
}

std::string not_importable(const std::string& gate, const GateProfile& profile) {
  if (gate == "build") return "the build is this host's own: a results folder cannot supply it";
  bool known = false;
  for (const auto& k : known_gates()) known |= k == gate;
  if (!known) return "not a gate landing knows";
  if (!profile.enabled(gate)) return "the report's gate profile does not enable it";
  if (gate == "ptxas") return "ptxas runs on every host from the builds' kernel-resources.json: run it here, not imported";
  return "";
}

GateResult rejudge_imported(const GateResult& in, const GateProfile& profile, const LandingRecord& rec) {
  GateResult r = in;
  r.required = profile.required(r.gate);
  r.needs_gpu = gate_needs_gpu(r.gate);
  r.reason.clear();
  if (r.gate == "suite" && r.details.contains("tests")) {
    judge_suite(r);  // from the per-test outcomes: the claimed checks are replaced
  } else if (r.gate == "ab" && r.details.contains("pairs")) {
    rejudge_ab(r, profile);
  } else if (r.gate == "timing" && r.details.contains("models")) {
    rejudge_timing(r, profile);
  } else {
    for (auto& c : r.checks) {
      c.waiver.clear();
      if (c.status == Status::Pass || c.status == Status::Waived) {
        c.status = Status::Fail;  // claimed, then proven below or not at all
        if (!rejudge_check(r.gate, c, profile)) {
          c.waivable = false;
          c.reason = "imported check claims it passed but carries no evidence this landing can re-judge";
        }
      } else if (c.status == Status::Fail) {
        // A claimed failure stands; it may be waived only where the metrics show a threshold miss.
        Check probe = c;
        c.waivable = rejudge_check(r.gate, probe, profile) && probe.status == Status::Fail && probe.waivable;
      }
    }
  }
  // Every case the profile names must be there: a result cannot pass by leaving cases out.
  std::set<std::string> have;
  for (const auto& c : r.checks) have.insert(c.name);
  const bool skipped_whole = r.checks.size() == 1 && r.checks[0].status == Status::Skipped && r.checks[0].name == r.gate;
  if (!skipped_whole) {
    for (const auto& name : expected_checks(r.gate, profile, rec, r))
      if (!have.count(name)) {
        Check m;
        m.name = name;
        m.status = Status::Fail;
        m.waivable = false;
        m.reason = r.gate == "parity"
                       ? "missing from the imported result (the parity plan of the report's gate profile and both builds' "
                         "GEMM variants requires it)"
                       : "missing from the imported result (the report's gate profile names it)";
        r.checks.push_back(m);
      }
    // The GEMM variants the candidate cannot run are settled by the plan of the report's builds,
    // whatever the file says of them (a claimed "gemm=staged" PASS included), as the gate does.
    if (r.gate == "parity")
      for (const auto& settled : report_parity_plan(profile, rec).settled) {
        std::erase_if(r.checks, [&](const Check& c) { return c.name == settled.name; });
        r.checks.push_back(settled);
      }
  }
  // Numbers of another path or variant than asked are no evidence, however they look.
  reverify_ran_as_asked(r, profile, rec);
  for (auto& c : r.checks) {
    if (c.status != Status::Fail || !c.waivable) continue;
    if (const Waiver* w = profile.waiver_for(r.gate, c.name)) {
      c.status = Status::Waived;
      c.waiver = w->reason;
    }
  }
  settle_from_checks(r);  // no checks at all: FAIL
  return r;
}

}  // namespace pfx::gates

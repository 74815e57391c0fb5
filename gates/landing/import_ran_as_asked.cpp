// Imported runs checked against what their gate asked (see import_ran_as_asked.h).
#include "landing/import_ran_as_asked.h"

#include "ab/ab_gate.h"
#include "accuracy/accuracy_gate.h"
#include "core/ran_as_asked.h"
#include "greedy/greedy_gate.h"
#include "landing/import_rules.h"
#include "parity/parity_plan.h"
#include "run/gate_context.h"
#include "timing/timing_judge.h"

namespace pfx::gates {

using nlohmann::json;

namespace {

// One of the report's builds as the verification sees it.
struct Side {
  json version;     // its `--version --json`, as the report recorded it
  std::string who;  // "the candidate c0ffee000001"
};

Side side(const json& build, const std::string& label) {
  return {build.is_object() ? build.value("version", json()) : json(),
          "the " + label + " " + (build.is_object() ? build.value("id", std::string()) : std::string())};
}

// j[key] where j is an object holding it, else null: the file is untrusted, any shape may come.
json field(const json& j, const char* key) { return j.is_object() && j.contains(key) ? j[key] : json(); }

// One recorded call ({asked, reported}; the file's `asked` is not read) against the ask.
RanAsAsked reverify(const AskedRun& ask, const json& evidence, const Side& s) {
  if (evidence.is_object() && evidence.contains("reported")) return verify_ran_as_asked(ask, evidence["reported"], s.version, s.who);
  RanAsAsked v;
  // A build with --version --json reports what it ran; a result without that report was written
  // by a landing that did not check it, and proves nothing about it.
  if (s.version.is_object())
    v.wrong.push_back("the imported result records nothing of what " + s.who + " reported it ran (its landing did not check it)");
  else
    v.unchecked.push_back("the imported result records nothing of what " + s.who + " reported it ran");
  return v;
}

// A wrong run fails the check, not waivable (a failure already not waivable keeps its own reason);
// otherwise what could not be verified joins its reason.
void apply(Check& c, const RanAsAsked& v) {
  if (c.status == Status::Skipped) return;
  if (!v.ok()) {
    if (c.status != Status::Fail || c.waivable) fail_hard(c, v.reason());
    return;
  }
  const std::string note = v.note();
  if (c.reason.find(note) == std::string::npos) c.reason += note;  // the gate may have said it already
}

// A call behind a check: its role in metrics.ran, what it asked, of which build.
struct RoleAsk {
  std::string role;
  AskedRun ask;
  const Side* side;
  bool required;  // false: a call that only some runs make (accuracy's greedy continuation)
};

void verify_check(Check& c, const std::vector<RoleAsk>& asks) {
  const json ran = field(c.metrics, "ran");
  RanAsAsked v;
  for (const auto& a : asks) {
    const json evidence = field(ran, a.role.c_str());
    if (evidence.is_null() && !a.required) continue;
    v.add(reverify(a.ask, evidence, *a.side));
  }
  apply(c, v);
}

}  // namespace

void reverify_ran_as_asked(GateResult& r, const GateProfile& profile, const LandingRecord& rec) {
  const Side cand = side(rec.candidate, "candidate"), base = side(rec.baseline, "baseline");
  if (r.gate == "parity") {
    const ParityPlan plan = report_parity_plan(profile, rec);
    const AskedRun reference = parity_reference_ask(profile);
    for (auto& c : r.checks)
      for (const auto& run : plan.runs)
        if (run.check == c.name) verify_check(c, {{"run", parity_ask(profile, run), &cand, true}, {"reference", reference, &cand, true}});
  } else if (r.gate == "accuracy") {
    for (auto& c : r.checks)
      for (const auto& case_name : case_names(profile, "accuracy"))
        for (const auto& path : accuracy_paths(profile))
          if (accuracy_check_name(profile, case_name, path) == c.name)
            verify_check(c, {{"run", accuracy_ask(profile, path, "logits"), &cand, true},
                             {"greedy", accuracy_ask(profile, path, "greedy"), &cand, false}});
  } else if (r.gate == "greedy") {
    // "auto" is decided on the host that ran it (the backend a GPU answered on): the result says which.
    std::string backend = profile.string("greedy", "backend", "auto");
    if (backend == "auto") backend = field(r.details, "backend").is_string() ? r.details["backend"].get<std::string>() : "";
    const AskedRun ask = greedy_ask(profile, backend);
    for (auto& c : r.checks)
      for (const auto& case_name : case_names(profile, "greedy"))
        if (case_name == c.name) {
          if (backend.empty()) {  // nothing to check the reports against: proof missing, as for a missing report
            const std::string why = "the imported result does not say which backend gates.greedy.backend 'auto' chose";
            apply(c, base.version.is_object() || cand.version.is_object() ? RanAsAsked{{why}, {}} : RanAsAsked{{}, {why}});
            continue;
          }
          verify_check(c, {{"baseline", ask, &base, true}, {"candidate", ask, &cand, true}});
        }
  } else if (r.gate == "ab") {
    // Every sample of both passes; in an A/A pair both sides are runs of the baseline.
    const AskedRun ask = ab_ask(profile);
    RanAsAsked v;
    const auto samples = [&](const json& pairs, const Side& second) {
      if (!pairs.is_array()) return;
      for (const auto& p : pairs) {
        v.add(reverify(ask, field(field(p, "baseline"), "ran"), base));
        v.add(reverify(ask, field(field(p, "candidate"), "ran"), second));
      }
    };
    samples(field(r.details, "pairs"), cand);
    samples(field(field(r.details, "aa"), "pairs"), base);
    for (auto& c : r.checks) apply(c, v);
  } else if (r.gate == "timing") {
    const AskedRun ask = timing_ask(profile);
    const json models = field(r.details, "models");
    for (const auto& m : models.is_array() ? models : json::array()) {
      const json name = field(m, "model");
      if (!name.is_string()) continue;
      const json ran = field(m, "ran");
      RanAsAsked v;
      for (const auto& [label, s] : {std::pair{"baseline", &base}, std::pair{"candidate", &cand}}) {
        const json runs = field(ran, label);
        if (!runs.is_array() || runs.empty()) v.add(reverify(ask, json(), *s));
        else
          for (const auto& e : runs) v.add(reverify(ask, e, *s));
      }
      // The model's own check and its role budgets ("<model> role <glob>").
      for (auto& c : r.checks)
        if (c.name == name.get<std::string>() || c.name.rfind(name.get<std::string>() + " role ", 0) == 0) apply(c, v);
    }
  }
}

}  // namespace pfx::gates

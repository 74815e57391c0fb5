// Pre-merge checklist rendering (see checklist.h).
#include "report/checklist.h"

#include <algorithm>
#include <sstream>

#include "util/escape.h"

namespace pfx::gates {

std::vector<ChecklistItem> checklist_items(const LandingRecord& r) {
  std::vector<std::string> names;
  for (const auto& g : r.gates) names.push_back(g.gate);
  for (const auto& n : r.enabled_gates)
    if (std::find(names.begin(), names.end(), n) == names.end()) names.push_back(n);
  std::vector<ChecklistItem> items;
  for (const auto& n : names) {
    ChecklistItem it;
    it.gate = n;
    it.result = r.gate(n);
    const GateResult* g = it.result;
    it.done = g && is_passing(g->status);
    it.what = n + ": " + (g ? std::string(to_string(g->status)) : std::string("NOT RUN"));
    if (g) it.what += " — " + (g->evidence.empty() ? g->reason : g->evidence);
    if (!g) it.todo = n + ": run it (`landing gate " + n + " …`) or `landing import` its result from the machine that ran it";
    else if (g->status == Status::Fail) it.todo = n + ": fix — " + g->reason;
    else if (g->status == Status::Skipped) it.todo = n + ": " + (g->needs_gpu ? "run on a GPU host and import — " : "") + g->reason;
    // The reason says what settles it: more A/B pairs, the GPU host's suite run, a human accepting
    // a GEMM variant the candidate no longer offers (parity/parity_plan.h).
    else if (g->status == Status::Inconclusive) it.todo = n + ": undecided — " + g->reason;
    else if (g->status == Status::Waived) it.todo = n + ": reviewer approves the waiver(s)";
    items.push_back(it);
  }
  for (const auto& c : r.profile_changes)
    if (c.loosened) {
      ChecklistItem it;
      it.what = "gate profile: " + c.key + " loosened (" + c.note + ": " + (c.before.empty() ? "—" : c.before) + " → " +
                (c.after.empty() ? "—" : c.after) + ")";
      it.todo = "gate profile: approve " + c.key + " (" + c.note + ": " + (c.before.empty() ? "—" : c.before) + " → " +
                (c.after.empty() ? "—" : c.after) + ")";
      items.push_back(it);
    }
  // The verdict is only as good as the harness that judged it and the results imported into it.
  if (r.harness.is_object() && !r.harness.value("pinned", false)) {
    ChecklistItem it;
    it.what = "harness: not pinned (" + r.harness.value("how", std::string()) + ")";
    it.todo = "harness: not pinned (" + r.harness.value("how", std::string()) + "): land with the baseline's landing or --harness";
    items.push_back(it);
  }
  for (const auto& imp : r.imports)
    if (imp.contains("accepted_mismatch")) {
      ChecklistItem it;
      const std::string what = "the accepted binding mismatch \"" + imp.value("accepted_mismatch", std::string()) + "\" (" +
                               imp.value("mismatches", nlohmann::json::array()).dump() + ")";
      it.what = "imports: " + what;
      it.todo = "imports: approve " + what;
      items.push_back(it);
    }
  return items;
}

std::string render_checklist(const LandingRecord& r) {
  std::ostringstream o;
  o << "Pre-merge checklist for " << r.id << " (candidate " << r.candidate.value("sha", std::string()).substr(0, 12) << " vs baseline "
    << r.baseline.value("sha", std::string()).substr(0, 12) << "): " << to_string(r.verdict) << "\n\n";
  std::vector<std::string> todo;
  for (const auto& it : checklist_items(r)) {
    if (!it.gate.empty()) o << "[" << (it.done ? "x" : " ") << "] " << it.what << "\n";
    if (!it.todo.empty()) todo.push_back(it.todo);
  }
  o << "\n";
  if (todo.empty()) o << "Nothing missing: every required gate passed and the gate profile was not loosened.\n";
  else {
    o << "Missing before merge:\n";
    for (const auto& t : todo) o << "  - " << t << "\n";
  }
  return escape_control(o.str());  // printed to a terminal: reasons may carry candidate output
}

}  // namespace pfx::gates

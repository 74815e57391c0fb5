// Pre-merge checklist rendering (see checklist.h).
#include "report/checklist.h"

#include <sstream>

#include "util/escape.h"

namespace pfx::gates {

std::string render_checklist(const LandingRecord& r) {
  std::ostringstream o;
  o << "Pre-merge checklist for " << r.id << " (candidate " << r.candidate.value("sha", std::string()).substr(0, 12) << " vs baseline "
    << r.baseline.value("sha", std::string()).substr(0, 12) << "): " << to_string(r.verdict) << "\n\n";
  std::vector<std::string> todo;
  std::vector<std::string> names;
  for (const auto& g : r.gates) names.push_back(g.gate);
  for (const auto& n : r.enabled_gates) {
    bool have = false;
    for (const auto& x : names) have |= x == n;
    if (!have) names.push_back(n);
  }
  for (const auto& n : names) {
    const GateResult* g = r.gate(n);
    const bool done = g && is_passing(g->status);
    o << "[" << (done ? "x" : " ") << "] " << n << ": " << (g ? std::string(to_string(g->status)) : std::string("NOT RUN"));
    if (g) o << " — " << (g->evidence.empty() ? g->reason : g->evidence);
    o << "\n";
    if (!g) todo.push_back(n + ": run it (`landing gate " + n + " …`) or `landing import` its result from the machine that ran it");
    else if (g->status == Status::Fail) todo.push_back(n + ": fix — " + g->reason);
    else if (g->status == Status::Skipped) todo.push_back(n + ": " + (g->needs_gpu ? "run on a GPU host and import — " : "") + g->reason);
    else if (g->status == Status::Inconclusive) todo.push_back(n + ": rerun (more pairs, quieter machine) — " + g->reason);
    else if (g->status == Status::Waived) todo.push_back(n + ": reviewer approves the waiver(s)");
    else if (!g->required) {}
  }
  for (const auto& c : r.profile_changes)
    if (c.loosened) todo.push_back("gate profile: approve " + c.key + " (" + c.note + ": " + (c.before.empty() ? "—" : c.before) + " → " +
                                   (c.after.empty() ? "—" : c.after) + ")");
  o << "\n";
  if (todo.empty()) o << "Nothing missing: every required gate passed and the gate profile was not loosened.\n";
  else {
    o << "Missing before merge:\n";
    for (const auto& t : todo) o << "  - " << t << "\n";
  }
  return escape_control(o.str());  // printed to a terminal: reasons may carry candidate output
}

}  // namespace pfx::gates

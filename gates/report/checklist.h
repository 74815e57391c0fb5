// `landing checklist [ID]`: the pre-merge checklist a reviewer ticks — every gate of the profile,
// its status, and what is still missing to land (a gate to run on a GPU host, a failure to fix,
// a loosened threshold or waiver to approve). landing.md opens with the same items as a GFM task
// list (report/markdown.h).
#pragma once
#include <optional>
#include <string>
#include <vector>

#include "report/landing_record.h"

namespace pfx::gates {

// One line of the checklist: a gate of the profile (with its result, or none: not run), or a
// loosened gate-profile key to approve.
struct ChecklistItem {
  std::string gate;               // empty for a profile key
  const GateResult* result = nullptr;
  bool done = false;              // passed (or waived) / nothing to approve
  std::string what;               // "parity: FAIL — evidence", "gate profile: approve …"
  std::string todo;               // what is missing before merge; empty when done and unwaived
};

std::vector<ChecklistItem> checklist_items(const LandingRecord& r);
std::string render_checklist(const LandingRecord& r);

}  // namespace pfx::gates

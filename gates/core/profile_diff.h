// Baseline → candidate gate profile diff, on effective values (core/profile_schema.h: defaults
// applied), so spelling a default out or leaving it implicit changes nothing and switching a gate
// off shows whichever way it was written. Every difference is listed; the ones that lower the bar
// are flagged LOOSENED: a gate disabled or made optional; a changed or dropped input (path,
// backend, model, reference, case, build); a raised max_*, a lowered min_* (or either removed);
// fewer reps, pairs or tokens; a dropped budget; more excluded tests; a new or changed waiver.
#pragma once
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace pfx::gates {

struct ProfileChange {
  std::string key;                 // "gates.parity.max_rel_dev", "gates.parity.cases[7b]", "waivers.greedy:*"
  std::string before, after;       // JSON text; empty when absent
  std::string kind;                // "added", "removed", "changed"
  bool loosened = false;           // highlighted in reports
  std::string note;                // why it counts as loosened ("limit raised", "gate disabled", ...)
};

// `baseline` and `candidate` are literal profiles (as loaded); both are made effective first.
// Loosened changes come first.
std::vector<ProfileChange> diff_profiles(const nlohmann::json& baseline, const nlohmann::json& candidate);
nlohmann::json to_json(const ProfileChange& c);
ProfileChange profile_change_from_json(const nlohmann::json& j);

}  // namespace pfx::gates

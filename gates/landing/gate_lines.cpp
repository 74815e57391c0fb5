// Per-gate result lines with repeated reasons printed once (see gate_lines.h).
#include "landing/gate_lines.h"

#include <sstream>

#include "util/escape.h"

namespace pfx::gates {

std::string shorten_repeated(const std::string& reason, const std::string& earlier, const std::string& earlier_gate) {
  size_t shared = 0;
  while (shared < reason.size() && shared < earlier.size() &&
         reason[reason.size() - 1 - shared] == earlier[earlier.size() - 1 - shared])
    ++shared;
  if (shared < kMinSharedChars) return reason;
  if (shared == reason.size() && shared == earlier.size()) return "the same as " + earlier_gate;
  // Cut at a word start, so the kept head never ends inside a word.
  size_t cut = reason.size() - shared;
  while (cut < reason.size() && cut > 0 && reason[cut - 1] != ' ') ++cut;
  if (reason.size() - cut < kMinSharedChars) return reason;
  std::string head = reason.substr(0, cut);
  while (!head.empty() && head.back() == ' ') head.pop_back();
  return head + " … (as for " + earlier_gate + ")";
}

std::string gate_lines(const std::vector<GateResult>& gates) {
  std::ostringstream out;
  for (size_t i = 0; i < gates.size(); ++i) {
    const auto& g = gates[i];
    std::string reason = g.reason;
    for (size_t k = 0; k < i; ++k) {
      const std::string shorter = shorten_repeated(g.reason, gates[k].reason, gates[k].gate);
      if (shorter.size() < reason.size()) reason = shorter;
    }
    out << "  " << g.gate << ": " << to_string(g.status) << " — " << reason << "\n";
  }
  return escape_control(out.str());  // printed to a terminal: reasons may carry candidate output
}

}  // namespace pfx::gates

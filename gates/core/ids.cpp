// Id grammar checks (see ids.h). Hand-parsed rather than std::regex: the grammar is three tokens.
#include "core/ids.h"

#include "util/error.h"

namespace pfx::gates {

namespace {

constexpr size_t kMinSha = 7, kMaxSha = 40;  // git's shortest abbreviation .. a full SHA-1
constexpr std::string_view kWorktreeMark = "-wt-";

bool is_lower_hex(std::string_view s, size_t min_len, size_t max_len) {
  if (s.size() < min_len || s.size() > max_len) return false;
  for (char c : s)
    if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'))) return false;
  return true;
}

// "-N" with N a decimal ≥ 2 without leading zeros (the ledger's rerun suffix).
bool is_rerun_suffix(std::string_view s) {
  if (s.size() < 2 || s.size() > 7 || s[0] != '-' || s[1] == '0') return false;
  for (char c : s.substr(1))
    if (c < '0' || c > '9') return false;
  return s != "-1";
}

const char* kExpected =
    "expected a hex commit SHA (7-40 digits), or <sha>-wt-<hex> for an uncommitted tree";

}  // namespace

bool is_candidate_id(std::string_view id) {
  const auto wt = id.find(kWorktreeMark);
  if (wt == std::string_view::npos) return is_lower_hex(id, kMinSha, kMaxSha);
  return is_lower_hex(id.substr(0, wt), kMinSha, kMaxSha) && is_lower_hex(id.substr(wt + kWorktreeMark.size()), 6, 64);
}

bool is_report_id(std::string_view id) {
  if (is_candidate_id(id)) return true;
  const auto dash = id.rfind('-');
  return dash != std::string_view::npos && is_rerun_suffix(id.substr(dash)) && is_candidate_id(id.substr(0, dash));
}

void require_candidate_id(std::string_view id, std::string_view where, std::string_view what) {
  if (!is_candidate_id(id)) fail(where, ": ", what, " '", id, "' is not a valid id (", kExpected, ")");
}

void require_report_id(std::string_view id, std::string_view where, std::string_view what) {
  if (!is_report_id(id))
    fail(where, ": ", what, " '", id, "' is not a valid report id (", kExpected, ", optionally with a rerun suffix -N)");
}

}  // namespace pfx::gates

// Gate statuses, the landing verdict they combine into, and the exit codes `landing` returns.
// The rules are DESIGN.md's "Verdicts and exit codes": FAIL if any gate fails, PASS only if every
// required gate passed (or was waived), INCOMPLETE otherwise — never PASS with a required gate skipped.
#pragma once
#include <string>
#include <string_view>
#include <vector>

#include "contract/exit_codes.h"

namespace pfx::gates {

enum class Status { Pass, Fail, Skipped, Inconclusive, Waived };

std::string_view to_string(Status s);
// Parses "PASS", "FAIL", ...; throws pfx::Error naming `where` on anything else.
Status parse_status(std::string_view text, std::string_view where);
// True where the gate's question was answered "yes" (PASS or an accepted WAIVED).
inline bool is_passing(Status s) { return s == Status::Pass || s == Status::Waived; }

enum class Verdict { Pass, Fail, Incomplete };
std::string_view to_string(Verdict v);
Verdict parse_verdict(std::string_view text, std::string_view where);

// Exit codes of `landing`: the project's one table (base/contract/exit_codes.h, listed in
// `landing --help`). Distinct so CI can tell a failing commit from a machine that could not check
// it and from landing itself breaking.
enum ExitCode : int {
  kExitPass = contract::kExitOk,
  kExitFail = contract::kExitFail,
  kExitIncomplete = contract::kExitIncomplete,
  kExitToolError = contract::kExitError,  // landing could not do its job: git, I/O, a bad gate profile, a bug
  kExitUsage = contract::kExitUsage,      // bad command line
};
int exit_code_for(Verdict v);
// `landing gate NAME`: PASS/WAIVED → 0, FAIL → 1, SKIPPED/INCONCLUSIVE → 2.
int exit_code_for(Status s);

struct GateOutcome {
  std::string gate;
  Status status;
  bool required;
};
struct VerdictWithReason {
  Verdict verdict;
  std::string reason;
};
// Combines gate outcomes; `missing_required` names required gates that have no result at all.
VerdictWithReason combine(const std::vector<GateOutcome>& outcomes, const std::vector<std::string>& missing_required);

}  // namespace pfx::gates

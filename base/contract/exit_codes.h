// The one exit-code table of the project's command-line tools: `prefill`, `landing` and
// `kerneltrace` (`landing trace`). Each code means the same thing in all three, so a script or a
// CI step can branch on it without knowing which tool it ran. Every tool's --help prints
// kExitCodeTable; README.md lists it too.
//
// 3 is frozen by the contract with older builds: the gates read "3 from prefill" as "this backend
// cannot run here" (→ SKIPPED), whatever commit the build is of. The other codes are read by the
// gates only as "not 0 and not 3" (a failure), so older builds that used 2 for usage or 1 for
// errors are still judged right.
#pragma once

namespace pfx::contract {

enum ExitCode : int {
  kExitOk = 0,           // success; landing: verdict PASS
  kExitFail = 1,         // it ran and the answer is no: landing verdict FAIL, a traced program failed
  kExitIncomplete = 2,   // landing verdict INCOMPLETE: a required gate skipped, inconclusive or not run
  kExitUnavailable = 3,  // cannot run here: no GPU, a build without CUDA, no CUPTI / no trace produced
  kExitUsage = 4,        // bad command line (unknown command or option, a bad value); nothing ran
  kExitError = 5,        // the tool could not do its work: bad input (named by file and field), I/O, git
};

inline constexpr const char* kExitCodeTable =
    "exit codes (the same for prefill, landing and kerneltrace):\n"
    "  0  OK           success (landing: verdict PASS)\n"
    "  1  FAIL         it ran and the answer is no (landing: a gate failed; kerneltrace: the traced program failed)\n"
    "  2  INCOMPLETE   landing: a required gate was skipped, inconclusive or not run (e.g. no GPU here)\n"
    "  3  UNAVAILABLE  cannot run here: no GPU, a build without CUDA, no CUPTI (no trace produced)\n"
    "  4  USAGE        bad command line; nothing ran\n"
    "  5  ERROR        the tool could not do its work: bad input (the message names the file and field), I/O, git\n";

}  // namespace pfx::contract

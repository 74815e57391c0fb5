// The harness: which `landing` binary judges a landing. The candidate's own landing must never
// judge the candidate alone (it could be changed to say PASS), so by default the baseline build's
// gates/landing/landing judges: a `landing run` or `landing gate` started from any other binary
// builds both revisions, then hands over (exec) to that harness with the same arguments. An
// explicit `--harness BUILD|BINARY` names another judge. The report and every result record the
// harness's version, commit and sha256, and whether it was pinned; a report whose harness is not
// pinned (no landing in the baseline build, or one built from the candidate) is never PASS.
#pragma once
#include <filesystem>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "run/build_cache.h"

namespace pfx::gates {

// capabilities.judging of `landing --version --json`; a baseline landing without "harness"
// predates pinning and cannot be handed over to.
inline constexpr const char* kLandingCapabilities[] = {"harness", "bound-results", "profile-schema"};

struct HarnessId {
  std::filesystem::path exe;
  std::string version, commit, sha256;
  bool dirty = false;
  bool pinned = false;
  std::string how;  // "baseline build …", "--harness …", or why it is not pinned
};
nlohmann::json to_json(const HarnessId& h);

// This process: the compiled-in version and commit, the sha256 of /proc/self/exe.
HarnessId self_identity();

struct HarnessPlan {
  HarnessId id;                               // who judges (pinned or not, with how)
  std::optional<std::filesystem::path> exec;  // set: hand over to this binary instead of judging here
};
// `explicit_harness`: --harness (a build folder holding gates/landing/landing, or the binary);
// empty for the default, the baseline build's landing. `handed_over`: this process was started by
// a hand-over (--harness-exec), so a second one is refused. Throws pfx::Error when an explicit
// harness does not exist or does not answer `--version --json`.
HarnessPlan plan_harness(const std::filesystem::path& explicit_harness, bool handed_over, const Build& baseline,
                         const Build& candidate);

// `argv` with the revisions it names (`--baseline REV`, `--candidate REV`, or their `=` forms)
// replaced by the commits they resolved to, where the sha is not empty: a hand-over must judge the
// commits this process built, not whatever HEAD (or a branch) names when the harness resolves it
// again (a commit made meanwhile was picked up as the candidate).
std::vector<std::string> pin_revisions(const std::vector<std::string>& argv, const std::string& baseline_sha,
                                       const std::string& candidate_sha);

// Replaces this process with `exe` run with `argv` (argv[0] excluded) plus `--harness exe
// --harness-exec`. Returns only on failure (throws pfx::Error).
[[noreturn]] void hand_over(const std::filesystem::path& exe, const std::vector<std::string>& argv);

}  // namespace pfx::gates

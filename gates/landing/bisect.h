// `landing bisect --good REV --bad REV --gate G [--metric GLOB]`: git bisect driven by a gate.
// Each commit git bisect picks is landed against the good commit with that one gate, exactly as
// `landing gate G --baseline GOOD --candidate COMMIT` would (builds cached by commit), and marked
//   bad   the gate FAILs (with --metric: a check whose name matches GLOB FAILs),
//   good  it PASSes (or is WAIVED),
//   skip  it could not decide: SKIPPED, INCONCLUSIVE, or the commit does not build.
// Speed regressions: --gate ab (whole prefill A/B) or timing (per kernel/role, e.g. --metric
// "*role attn_v*"); correctness: parity, accuracy, greedy. Both ends are checked first (good must
// be good, bad must be bad). git's bisect state lives in a worktree of its own under the cache
// (`git bisect start --no-checkout`), so the user's checkout and any bisect of theirs are untouched.
// Every step's gate result is kept in OUT/steps/, and OUT/bisect.{md,json} name the first bad
// commit with its gate result.
#pragma once
#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "core/gate_result.h"
#include "landing/landing_run.h"

namespace pfx::gates {

struct BisectOptions {
  RunOptions run;              // repo, cache, fixtures, gate profile, quiet
  std::string good, bad, gate;
  std::string metric;          // glob over the gate's check names; "" = the gate's own status
  std::filesystem::path out;   // default <cache>/bisect/<good>-<bad>-<gate>-<time>
};

enum class StepVerdict { Good, Bad, Skip };
const char* to_string(StepVerdict v);
// How one gate result marks its commit (see above); `why` says which check decided.
StepVerdict classify(const GateResult& r, const std::string& metric, std::string& why);

struct BisectStep {
  std::string sha, subject;
  std::string role;            // "good end", "bad end" or "step N"
  StepVerdict verdict = StepVerdict::Skip;
  std::string why;
  GateResult result;
  std::string evidence;        // file under OUT/steps/
};

struct BisectOutcome {
  std::string good, bad;                 // the ends, full SHAs
  std::string first_bad;                 // full SHA; "" when undecided
  std::vector<std::string> could_be;     // undecided: the commits skipping left open
  std::vector<BisectStep> steps;
  std::filesystem::path out;
  std::string problem;                   // why the bisect could not start (an end did not verify)
};

// Throws pfx::Error for tool failures (git, unreadable profile, an existing non-empty OUT).
BisectOutcome landing_bisect(const BisectOptions& opt);

std::string render_bisect_markdown(const BisectOptions& opt, const BisectOutcome& o);
nlohmann::json bisect_to_json(const BisectOptions& opt, const BisectOutcome& o);

}  // namespace pfx::gates

// `landing run` and `landing gate`: resolve the two revisions, read both gate profiles, build both
// (cached worktrees), run the enabled gates, and (for run) append the report to the ledger.
#pragma once
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "run/build_cache.h"
#include "core/gate_result.h"

namespace pfx::gates {

struct RunOptions {
  std::string baseline = "HEAD";
  std::string candidate = "WORKTREE";
  std::string gates_profile = "profiles/gates/default.yaml";
  std::filesystem::path repo;        // default: the git repository around the current directory
  std::filesystem::path out;         // reports folder (run) or results folder (gate)
  std::filesystem::path cache;       // default <repo>/.landing
  std::filesystem::path fixtures;    // default $PFX_FIXTURES, else <repo>/../shared/fixtures
  std::vector<std::string> only;     // run only these gates (landing gate NAME)
  // Prebuilt mode (a GPU host without git): build folders made elsewhere, ids as the other
  // machine's report has them; the gate profile is read from the file system.
  std::filesystem::path baseline_build, candidate_build;
  std::string baseline_id, candidate_id;
  bool quiet = false;
  // `landing gate suite --suite-labels gpu` on a GPU host: only the tests with these CTest labels
  // run there; the result is a share of the suite, complete only once `landing import` joins it
  // with a run of the whole suite (suite/suite_judge.h).
  std::vector<std::string> suite_labels;
  bool same_expected = false;        // an A/A run on purpose: no warning when the two are the same
  // The judging landing (landing/harness.h): --harness (empty: the baseline build's); whether
  // this process was started by a hand-over; the command line to hand over with.
  std::filesystem::path harness;
  bool handed_over = false;
  bool judge_here = false;  // bisect: judge in this process, never hand over (recorded as not pinned)
  std::vector<std::string> argv;
};

// Returns the process exit code (verdict for run, gate status for gate). Throws pfx::Error for
// tool failures (git, unreadable profile).
int landing_run(const RunOptions& opt);
int landing_gate(const RunOptions& opt);

// What `landing gate` computes before it writes anything: both builds (cached by commit) and the
// results of the gates in opt.only (a failed build is the one result "build").
struct GateEvaluation {
  Build baseline, candidate;
  std::filesystem::path cache;
  std::vector<GateResult> results;
};
GateEvaluation evaluate_gates(const RunOptions& opt);

}  // namespace pfx::gates

// `landing run` and `landing gate`: their options and checks; the work is landing_run.h's.
#include <algorithm>
#include <iostream>

#include "core/status.h"
#include "landing/commands.h"
#include "landing/landing_cli.h"
#include "landing/landing_run.h"

namespace pfx::gates {

namespace {

void require_revisions(const cli::po::variables_map& vm) {
  if (!vm.count("baseline") || !vm.count("candidate")) throw cli::UsageError("--baseline and --candidate are required");
}

// The options run and gate share, in their --help order: the revisions (gate: or builds made
// elsewhere, and the suite's GPU-host share), the folder results go to, where to build, the
// harness, --quiet.
void add_landing_options(cli::po::options_description& opts, RunOptions& run, bool prebuilt, const char* results_folder) {
  cli::add_revision_options(opts, run);
  if (prebuilt) cli::add_prebuilt_options(opts, run);
  cli::add_reports_option(opts, run, results_folder);
  cli::add_repo_option(opts, run);
  cli::add_cache_options(opts, run);
  if (prebuilt) cli::add_suite_share_option(opts, run);  // gate only: the GPU host's share of the suite
  cli::add_harness_options(opts, run);
  cli::add_quiet_option(opts, run);
}

}  // namespace

int cmd_run(int argc, char** argv) {
  const cli::CommandHelp help{
      "run", "landing run --baseline REV --candidate REV|WORKTREE [--gates PROFILE] [--out DIR]",
      R"(Build both revisions (git worktrees under .landing/, cached by commit; WORKTREE = the
uncommitted working tree), run every gate the gate profile enables, append the report
DIR/<id>/{landing.md,landing.html,landing.json,junit.xml} and update DIR/index.md.
Progress on stderr; the report folder and the verdict on stdout.)"};
  RunOptions run;
  const auto vm = cli::parse_command(help, argc, argv, false, [&run](cli::po::options_description& opts) {
    add_landing_options(opts, run, false, "reports folder, the ledger (default <repo>/reports)");
  });
  if (!vm) return kExitPass;
  require_revisions(*vm);
  run.argv.assign(argv, argv + argc);  // for the hand-over to the pinned harness
  return landing_run(run);
}

int cmd_gate(int argc, char** argv) {
  const cli::CommandHelp help{
      "gate",
      "landing gate NAME... --baseline REV --candidate REV|WORKTREE [--gates PROFILE] [--out DIR]\n"
      "       landing gate NAME... --baseline-build DIR --candidate-build DIR [--baseline-id ID --candidate-id ID]",
      R"(Run the named gates alone (parity, accuracy, greedy, ptxas, suite, timing, ab); each result
goes to DIR/gates/NAME.json (default .landing/results/<candidate id>/), to be joined to a
report with `landing import DIR`. With --baseline-build/--candidate-build the gates run on
builds made elsewhere (a GPU host with a copy of the tree but no git): the ids default to
the commits the binaries report; the gate profile is read as a plain file.)"};
  RunOptions run;
  const auto vm = cli::parse_command(help, argc, argv, true, [&run](cli::po::options_description& opts) {
    add_landing_options(opts, run, true, "results folder (default .landing/results/<candidate id>)");
  });
  if (!vm) return kExitPass;
  run.argv.assign(argv, argv + argc);  // for the hand-over to the pinned harness
  run.only = cli::positional(*vm);
  if (run.only.empty()) throw cli::UsageError("which gate? (landing gate NAME...)");
  cli::check_gate_names(run.only);
  if (!run.suite_labels.empty() && std::find(run.only.begin(), run.only.end(), "suite") == run.only.end())
    throw cli::UsageError("--suite-labels selects the suite gate's share: name the gate suite");
  const bool prebuilt = vm->count("baseline-build") || vm->count("candidate-build");
  if (prebuilt) {
    if (!vm->count("baseline-build") || !vm->count("candidate-build"))
      throw cli::UsageError("--baseline-build and --candidate-build go together");
    if (vm->count("baseline") || vm->count("candidate"))
      throw cli::UsageError("give revisions to build (--baseline/--candidate) or builds made elsewhere "
                            "(--baseline-build/--candidate-build), not both");
  } else {
    if (vm->count("baseline-id") || vm->count("candidate-id"))
      throw cli::UsageError("--baseline-id/--candidate-id go with --baseline-build/--candidate-build");
    require_revisions(*vm);
  }
  return landing_gate(run);
}

}  // namespace pfx::gates

// The command-line conventions every `landing` subcommand follows: its own options only (an option
// of another subcommand is an unknown option here), `landing CMD --help` showing that command's
// synopsis, options and the exit-code table, and bad command lines thrown as UsageError before
// anything is built or run (exit 4, base/contract/exit_codes.h).
#pragma once
#include <boost/program_options.hpp>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "landing/landing_run.h"

namespace pfx::gates::cli {

namespace po = boost::program_options;

struct UsageError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// What `landing CMD --help` prints above the options.
struct CommandHelp {
  std::string name;      // "run"
  std::string synopsis;  // "landing run --baseline REV --candidate REV|WORKTREE [--gates PROFILE] [--out DIR]"
  std::string about;     // a paragraph, already wrapped
};

// An empty option group laid out for a terminal (100 columns).
po::options_description command_options(const std::string& caption);
// Parses argv (argv[0] is the subcommand) against `opts` (to which it adds --help); positional
// arguments are collected (positional()). Prints the help and returns nullopt on --help. Throws
// UsageError on anything the command does not take.
std::optional<po::variables_map> parse_command(const CommandHelp& help, po::options_description& opts, int argc,
                                               char** argv, bool takes_positional);
std::vector<std::string> positional(const po::variables_map& vm);
std::string help_text(const CommandHelp& help, const po::options_description& opts);

// Option groups shared by several subcommands; each writes into `run`.
void add_revision_options(po::options_description& opts, RunOptions& run);   // --baseline --candidate --gates
void add_prebuilt_options(po::options_description& opts, RunOptions& run);   // --baseline-build … --candidate-id
void add_repo_option(po::options_description& opts, RunOptions& run);        // --repo
void add_cache_options(po::options_description& opts, RunOptions& run);      // --cache --fixtures
void add_reports_option(po::options_description& opts, RunOptions& run, const char* what);  // --out
// --harness BUILD and --harness-exec (landing/harness.h).
void add_harness_options(po::options_description& opts, RunOptions& run);
void add_quiet_option(po::options_description& opts, RunOptions& run);

// The reports folder a command reads or writes: --out, else <repo>/reports.
std::filesystem::path reports_dir(const RunOptions& run);

// The gates `landing gate` and `landing bisect` accept; throws UsageError naming a bad one.
void check_gate_names(const std::vector<std::string>& names);

// `landing --version [--json]`.
int print_version(bool json);

}  // namespace pfx::gates::cli

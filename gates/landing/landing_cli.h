// The command-line conventions every `landing` subcommand follows: its own options only (an option
// of another subcommand is an unknown option here), `landing CMD --help` showing that command's
// synopsis, options and the exit-code table, and bad command lines thrown as UsageError before
// anything is built or run (exit 4, base/contract/exit_codes.h).
#pragma once
#include <boost/program_options.hpp>
#include <filesystem>
#include <functional>
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

// Every subcommand's head: builds its option group ("<name> options", laid out for a terminal of
// 100 columns), lets `add_options` fill it (parse adds --help), and parses argv (argv[0] is the
// subcommand); positional arguments are collected (positional()) when the command takes them.
// Prints the help and returns nullopt on --help. Throws UsageError on anything the command does
// not take.
std::optional<po::variables_map> parse_command(const CommandHelp& help, int argc, char** argv, bool takes_positional,
                                               const std::function<void(po::options_description&)>& add_options);
std::vector<std::string> positional(const po::variables_map& vm);
std::string help_text(const CommandHelp& help, const po::options_description& opts);

// A path option's value, written to `dst` as given (po::value<std::filesystem::path> would stop at
// the first space).
po::typed_value<std::string>* path_value(std::filesystem::path& dst, const char* value_name = "DIR");

// Option groups shared by several subcommands; each writes into `run`.
void add_revision_options(po::options_description& opts, RunOptions& run);   // --baseline --candidate --gates
void add_prebuilt_options(po::options_description& opts, RunOptions& run);   // --baseline-build … --candidate-id
void add_repo_option(po::options_description& opts, RunOptions& run);        // --repo
void add_cache_options(po::options_description& opts, RunOptions& run);      // --cache --fixtures
void add_reports_option(po::options_description& opts, RunOptions& run, const char* what);  // --out
// --harness BUILD and --harness-exec (landing/harness.h).
// --suite-labels L1,L2: the GPU host's share of the suite gate (gate only).
void add_suite_share_option(po::options_description& opts, RunOptions& run);
void add_harness_options(po::options_description& opts, RunOptions& run);
void add_quiet_option(po::options_description& opts, RunOptions& run);

// The reports folder a command reads or writes: --out, else <repo>/reports.
std::filesystem::path reports_dir(const RunOptions& run);

// The gates `landing gate` and `landing bisect` accept; throws UsageError naming a bad one.
void check_gate_names(const std::vector<std::string>& names);

// `landing --version [--json]`.
int print_version(bool json);

}  // namespace pfx::gates::cli

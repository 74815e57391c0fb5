// landing's command-line conventions (see landing_cli.h).
#include "landing/landing_cli.h"

#include <iostream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "cli/version.h"
#include "contract/exit_codes.h"
#include "core/gate_profile.h"
#include "landing/harness.h"
#include "run/git.h"

namespace pfx::gates::cli {

namespace fs = std::filesystem;

std::string help_text(const CommandHelp& help, const po::options_description& opts) {
  std::ostringstream os;
  os << "usage: " << help.synopsis << "\n\n" << help.about << "\n";
  if (!opts.options().empty()) os << "\n" << opts;
  os << "\n" << contract::kExitCodeTable;
  return os.str();
}

std::optional<po::variables_map> parse_command(const CommandHelp& help, int argc, char** argv, bool takes_positional,
                                               const std::function<void(po::options_description&)>& add_options) {
  po::options_description opts(help.name + " options", 100, 50);
  add_options(opts);
  opts.add_options()("help,h", "this help");
  po::options_description hidden;
  hidden.add_options()("args", po::value<std::vector<std::string>>());
  po::options_description parsed;
  parsed.add(opts).add(hidden);
  po::positional_options_description pos;
  pos.add("args", -1);
  po::variables_map vm;
  try {
    po::store(po::command_line_parser(argc, argv).options(parsed).positional(pos).run(), vm);
    if (vm.count("help")) {
      std::cout << help_text(help, opts);
      return std::nullopt;
    }
    po::notify(vm);
  } catch (const po::error& e) {
    throw UsageError(e.what());
  }
  if (!takes_positional && vm.count("args"))
    throw UsageError("unexpected argument '" + vm["args"].as<std::vector<std::string>>().front() + "'");
  return vm;
}

std::vector<std::string> positional(const po::variables_map& vm) {
  return vm.count("args") ? vm["args"].as<std::vector<std::string>>() : std::vector<std::string>{};
}

po::typed_value<std::string>* path_value(fs::path& dst, const char* value_name) {
  return po::value<std::string>()->value_name(value_name)->notifier([&dst](const std::string& v) { dst = v; });
}

void add_revision_options(po::options_description& opts, RunOptions& run) {
  opts.add_options()
      ("baseline", po::value(&run.baseline)->value_name("REV"), "what the candidate is compared with (a commit-ish)")
      ("candidate", po::value(&run.candidate)->value_name("REV|WORKTREE"),
       "the change to land: a commit-ish, or WORKTREE for the uncommitted working tree")
      ("gates", po::value(&run.gates_profile)->value_name("PROFILE")->default_value(run.gates_profile),
       "gate profile, read from each revision's tree");
}

void add_prebuilt_options(po::options_description& opts, RunOptions& run) {
  opts.add_options()
      ("baseline-build", path_value(run.baseline_build), "a baseline build folder made elsewhere (no git needed here)")
      ("candidate-build", path_value(run.candidate_build), "the candidate's build folder made elsewhere")
      ("baseline-id", po::value(&run.baseline_id)->value_name("ID"), "the baseline's id as the other machine's report has it")
      ("candidate-id", po::value(&run.candidate_id)->value_name("ID"), "the candidate's id (default: the commit its binary reports)");
}

void add_repo_option(po::options_description& opts, RunOptions& run) {
  opts.add_options()("repo", path_value(run.repo), "the git repository (default: the one around the current directory)");
}

void add_cache_options(po::options_description& opts, RunOptions& run) {
  opts.add_options()
      ("cache", path_value(run.cache), "worktrees and builds (default <repo>/.landing)")
      ("fixtures", path_value(run.fixtures), "test fixtures (default $PFX_FIXTURES, else <repo>/../shared/fixtures)");
}

void add_reports_option(po::options_description& opts, RunOptions& run, const char* what) {
  opts.add_options()("out", path_value(run.out), what);
}

void add_suite_share_option(po::options_description& opts, RunOptions& run) {
  opts.add_options()(
      "suite-labels", po::value<std::string>()->value_name("L1,L2")->notifier([&run](const std::string& v) {
        run.suite_labels.clear();
        std::stringstream in(v);
        for (std::string label; std::getline(in, label, ',');) {
          // A label becomes part of a ctest regex: letters, digits, '-' and '_' only.
          if (label.empty() || label.find_first_not_of("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_") !=
                                   std::string::npos)
            throw UsageError("--suite-labels: expected CTest labels of letters, digits, '-' and '_' separated by commas, got '" + v + "'");
          run.suite_labels.push_back(label);
        }
      }),
      "suite gate on a GPU host: run only the tests with these CTest labels (e.g. gpu); the result is a share, "
      "complete once `landing import` joins it with a run of the whole suite");
}

void add_harness_options(po::options_description& opts, RunOptions& run) {
  opts.add_options()
      ("harness", path_value(run.harness, "BUILD"),
       "the landing that judges: a build folder or the binary (default: the baseline build's gates/landing/landing)")
      ("harness-exec", po::bool_switch(&run.handed_over), "(set by a hand-over to the harness; refuses a second one)");
}

void add_quiet_option(po::options_description& opts, RunOptions& run) {
  opts.add_options()("quiet", po::bool_switch(&run.quiet), "no progress on stderr");
}

fs::path reports_dir(const RunOptions& run) {
  if (!run.out.empty()) return fs::absolute(run.out);
  return repo_root(run.repo.empty() ? fs::current_path() : fs::absolute(run.repo)) / "reports";
}

void check_gate_names(const std::vector<std::string>& names) {
  const auto& known = known_gates();
  for (const auto& g : names) {
    bool ok = false;
    for (const auto& k : known) ok |= k == g;
    if (ok) continue;
    std::string list;
    for (size_t i = 0; i < known.size(); ++i) list += (i ? (i + 1 == known.size() ? " or " : ", ") : "") + known[i];
    throw UsageError("unknown gate '" + g + "' (expected " + list + ")");
  }
}

int print_version(bool json) {
  if (!json) {
    std::cout << "landing " << PFX_VERSION << " (commit " << PFX_GIT_COMMIT << (PFX_GIT_DIRTY ? ", dirty" : "") << ")\n";
    return contract::kExitOk;
  }
  nlohmann::json j = {{"name", "landing"},
                      {"version", PFX_VERSION},
                      {"commit", PFX_GIT_COMMIT},
                      {"dirty", PFX_GIT_DIRTY},
                      {"capabilities",
                       {{"subcommands", {"run", "gate", "import", "report", "checklist", "bisect", "compare", "history", "trace"}},
                        {"gates", known_gates()}, {"judging", kLandingCapabilities}}}};
  std::cout << j.dump() << "\n";
  return contract::kExitOk;
}

}  // namespace pfx::gates::cli

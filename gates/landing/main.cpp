// landing: lands a change — builds baseline and candidate, runs the gates, writes the report.
//   landing run --baseline REV --candidate REV|WORKTREE [--gates profiles/gates/default.yaml] [--out reports/]
//   landing gate NAME … | landing report ID | landing import DIR | landing checklist [ID] | landing trace …
// `landing --help` lists the exit codes.
#include <boost/program_options.hpp>
#include <filesystem>
#include <iostream>
#include <string>
#include <vector>

#include "core/git.h"
#include "core/status.h"
#include "landing/landing_import.h"
#include "landing/landing_run.h"
#include "report/checklist.h"
#include "report/ledger.h"
#ifdef PFX_HAVE_TRACE
#include "trace/trace_cli.h"
#endif
#include "util/error.h"

namespace po = boost::program_options;
namespace fs = std::filesystem;
using namespace pfx::gates;

namespace {

const char* kUsage = R"(landing: is the change still correct, is it faster, by how much, and where?

usage:
  landing run --baseline REV --candidate REV|WORKTREE [--gates PROFILE] [--out DIR]
      Build both revisions (git worktrees under .landing/, cached by commit; WORKTREE = the
      uncommitted working tree), run every gate the gate profile enables, append the report
      DIR/<id>/{landing.md,landing.html,landing.json,junit.xml} (DIR default reports/) and update
      DIR/index.md. Progress on stderr; the report folder and verdict on stdout.
  landing gate NAME --baseline REV --candidate REV|WORKTREE [--gates PROFILE] [--out DIR]
      Run one gate alone (parity, accuracy, greedy, ptxas, suite, timing, ab); its result goes to
      DIR/gates/NAME.json (default .landing/results/<candidate id>/).
  landing gate NAME… --baseline-build DIR --candidate-build DIR [--baseline-id ID --candidate-id ID]
      The same on builds made elsewhere (a GPU host with a copy of the tree but no git): the ids
      default to the commits the binaries report; the gate profile is read as a plain file.
  landing import DIR [--out REPORTS] [--into ID]
      Add gate results produced on another machine (a report or results folder) to the same
      candidate's report here and re-render it.
  landing report ID [--out REPORTS]
      Re-render a report (md, html, junit) from its landing.json.
  landing checklist [ID] [--out REPORTS]
      Print the pre-merge checklist of a report (default: the newest).
  landing trace …
      The CUPTI kernel tracer (`landing trace --help`).

common options:
  --gates PROFILE   gate profile, read from each revision's tree (default profiles/gates/default.yaml)
  --repo DIR        the git repository (default: the one around the current directory)
  --cache DIR       worktrees and builds (default <repo>/.landing)
  --fixtures DIR    test fixtures (default $PFX_FIXTURES, else <repo>/../shared/fixtures)
  --quiet           no progress on stderr

exit codes (run, gate, import, checklist):
  0  PASS        every required gate passed (or was waived)
  1  FAIL        a gate failed (or a build failed)
  2  INCOMPLETE  a required gate was skipped (no GPU, old baseline), inconclusive or not run
  3  TOOL ERROR  landing itself could not work (git, unreadable profile or report, I/O)
  4  USAGE       bad command line
)";

struct Common {
  RunOptions run;
  std::string into;
  std::vector<std::string> positional;
};

Common parse_common(int argc, char** argv, bool revisions) {
  Common c;
  std::string repo, out, cache, fixtures, baseline_build, candidate_build;
  po::options_description opts;
  opts.add_options()("help,h", "")("baseline", po::value(&c.run.baseline))("candidate", po::value(&c.run.candidate))(
      "gates", po::value(&c.run.gates_profile))("out", po::value(&out))("repo", po::value(&repo))("cache", po::value(&cache))(
      "fixtures", po::value(&fixtures))("into", po::value(&c.into))("baseline-build", po::value(&baseline_build))(
      "candidate-build", po::value(&candidate_build))("baseline-id", po::value(&c.run.baseline_id))(
      "candidate-id", po::value(&c.run.candidate_id))("quiet", po::bool_switch(&c.run.quiet))(
      "args", po::value(&c.positional));
  po::positional_options_description pos;
  pos.add("args", -1);
  po::variables_map vm;
  po::store(po::command_line_parser(argc, argv).options(opts).positional(pos).run(), vm);
  po::notify(vm);
  if (vm.count("help")) {
    std::cout << kUsage;
    std::exit(kExitPass);
  }
  const bool prebuilt = vm.count("baseline-build") || vm.count("candidate-build");
  if (revisions && !prebuilt && (!vm.count("baseline") || !vm.count("candidate")))
    throw po::error("--baseline and --candidate are required");
  if (prebuilt && (!vm.count("baseline-build") || !vm.count("candidate-build")))
    throw po::error("--baseline-build and --candidate-build go together");
  c.run.baseline_build = baseline_build;
  c.run.candidate_build = candidate_build;
  c.run.repo = repo;
  c.run.out = out;
  c.run.cache = cache;
  c.run.fixtures = fixtures;
  return c;
}

fs::path reports_dir(const Common& c) {
  if (!c.run.out.empty()) return fs::absolute(c.run.out);
  return repo_root(c.run.repo.empty() ? fs::current_path() : fs::absolute(c.run.repo)) / "reports";
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::cerr << kUsage;
    return kExitUsage;
  }
  const std::string cmd = argv[1];
  if (cmd == "--help" || cmd == "-h" || cmd == "help") {
    std::cout << kUsage;
    return kExitPass;
  }
  if (cmd == "trace") {
#ifndef PFX_HAVE_TRACE
    std::cerr << "landing trace: this landing was built without the tracer (gates/trace)\n";
    return kExitToolError;
#else
    std::string name = "landing trace";
    std::vector<char*> args = {name.data()};
    for (int i = 2; i < argc; ++i) args.push_back(argv[i]);
    return pfx::trace::trace_main(static_cast<int>(args.size()), args.data());
#endif
  }
  try {
    // argv[1] is the subcommand: parse the rest.
    if (cmd == "run") {
      auto c = parse_common(argc - 1, argv + 1, true);
      if (!c.positional.empty()) throw po::error("unexpected argument '" + c.positional.front() + "'");
      return landing_run(c.run);
    }
    if (cmd == "gate") {
      auto c = parse_common(argc - 1, argv + 1, true);
      if (c.positional.empty()) throw po::error("landing gate NAME: which gate?");
      c.run.only = c.positional;
      return landing_gate(c.run);
    }
    if (cmd == "import") {
      auto c = parse_common(argc - 1, argv + 1, false);
      if (c.positional.size() != 1) throw po::error("landing import DIR: one folder expected");
      return landing_import(c.positional[0], reports_dir(c), c.into, c.run.quiet);
    }
    if (cmd == "report" || cmd == "checklist") {
      auto c = parse_common(argc - 1, argv + 1, false);
      if (c.positional.size() > 1 || (cmd == "report" && c.positional.empty()))
        throw po::error("landing " + cmd + (cmd == "report" ? " ID" : " [ID]"));
      Ledger ledger(reports_dir(c));
      const auto id = c.positional.empty() ? ledger.latest() : ledger.find(c.positional[0]);
      if (!id) pfx::fail(reports_dir(c).string(), ": no report ", c.positional.empty() ? std::string("yet") : c.positional[0]);
      LandingRecord rec = read_landing_record(ledger.dir() / *id / "landing.json");
      if (cmd == "report") {
        ledger.update(rec);
        std::cout << "report: " << (ledger.dir() / *id).string() << "\nverdict: " << to_string(rec.verdict) << "\n";
        return kExitPass;
      }
      std::cout << render_checklist(rec);
      return exit_code_for(rec.verdict);
    }
    std::cerr << "landing: unknown command '" << cmd << "'\n\n" << kUsage;
    return kExitUsage;
  } catch (const po::error& e) {
    std::cerr << "landing " << cmd << ": " << e.what() << "\n(see landing --help)\n";
    return kExitUsage;
  } catch (const std::exception& e) {
    std::cerr << "landing " << cmd << ": error: " << e.what() << "\n";
    return kExitToolError;
  }
}

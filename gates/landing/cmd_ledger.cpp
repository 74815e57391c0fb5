// `landing import`, `landing report` and `landing checklist`: commands on reports already in the
// ledger (landing_import.h, report/ledger.h, report/checklist.h).
#include <iostream>

#include "landing/commands.h"
#include "landing/gate_lines.h"
#include "landing/landing_cli.h"
#include "landing/landing_import.h"
#include "report/checklist.h"
#include "report/ledger.h"
#include "util/error.h"

namespace pfx::gates {

namespace {

// The report an optional ID names (default: the newest), with its ledger.
std::string find_report(const Ledger& ledger, const std::vector<std::string>& ids) {
  const auto id = ids.empty() ? ledger.latest() : ledger.find(ids[0]);
  if (!id) fail(ledger.dir().string(), ": no report ", ids.empty() ? std::string("yet") : ids[0]);
  return *id;
}

}  // namespace

int cmd_import(int argc, char** argv) {
  const cli::CommandHelp help{
      "import", "landing import DIR [--out REPORTS] [--into ID] [--accept-mismatch REASON]",
      R"(Add gate results produced on another machine (a report folder, or a results folder of
`landing gate`) to the same candidate's newest report here, and re-render it. Each result
must be bound to the report (candidate and baseline ids, prefill and effective-profile
sha256s, a pinned harness) or the import is refused, unless --accept-mismatch gives the
reason (the report shows it). Imported statuses are re-judged, never taken as given.)"};
  RunOptions run;
  std::string into, accept;
  const auto vm = cli::parse_command(help, argc, argv, true, [&](cli::po::options_description& opts) {
    cli::add_reports_option(opts, run, "reports folder (default <repo>/reports)");
    opts.add_options()("into", cli::po::value(&into)->value_name("ID"), "the report to add them to (default: the candidate's newest)")(
        "accept-mismatch", cli::po::value(&accept)->value_name("REASON"),
        "import results not bound to the report anyway, for this reason (shown in the report)");
    cli::add_repo_option(opts, run);
    cli::add_quiet_option(opts, run);
  });
  if (!vm) return kExitPass;
  const auto dirs = cli::positional(*vm);
  if (dirs.size() != 1) throw cli::UsageError("one folder of results expected (landing import DIR)");
  if (vm->count("accept-mismatch") && accept.find_first_not_of(" \t") == std::string::npos)
    throw cli::UsageError("--accept-mismatch needs a reason (it is shown in the report)");
  return landing_import(dirs[0], cli::reports_dir(run), into, accept, run.quiet);
}

namespace {

int report_or_checklist(int argc, char** argv, bool checklist) {
  const cli::CommandHelp help =
      checklist ? cli::CommandHelp{"checklist", "landing checklist [ID] [--out REPORTS]",
                                   R"(Print the pre-merge checklist of a report (default: the newest): every gate,
its status, and what is missing (runs to do, failures, waivers and loosened
thresholds to approve). Exits with the report's verdict code.)"}
                : cli::CommandHelp{"report", "landing report ID [--out REPORTS]",
                                   R"(Re-render a report (landing.md, landing.html, junit.xml) and its index entry
from its landing.json.)"};
  RunOptions run;
  const auto vm = cli::parse_command(help, argc, argv, true, [&run](cli::po::options_description& opts) {
    cli::add_reports_option(opts, run, "reports folder (default <repo>/reports)");
    cli::add_repo_option(opts, run);
  });
  if (!vm) return kExitPass;
  const auto ids = cli::positional(*vm);
  if (ids.size() > 1 || (!checklist && ids.empty())) throw cli::UsageError(help.synopsis.substr(std::string("landing ").size()));
  Ledger ledger(cli::reports_dir(run));
  const std::string id = find_report(ledger, ids);
  LandingRecord rec = read_landing_record(ledger.dir() / id / "landing.json");
  if (checklist) {
    std::cout << render_checklist(rec);
    return exit_code_for(rec.verdict);
  }
  ledger.update(rec);
  std::cout << "report: " << (ledger.dir() / id).string() << "\nverdict: " << to_string(rec.verdict) << "\n"
            << gate_lines(rec.gates);
  return kExitPass;
}

}  // namespace

int cmd_report(int argc, char** argv) { return report_or_checklist(argc, argv, false); }
int cmd_checklist(int argc, char** argv) { return report_or_checklist(argc, argv, true); }

}  // namespace pfx::gates

// `landing history [--metric GLOB] [--json | --bencher [ID]]`: the ledger's numbers over time on
// the terminal (report/history.h), as JSON, or as Bencher Metric Format (report/bencher.h).
#include <iostream>

#include "report/index_html.h"
#include "report/landing_record.h"

#include "run/git.h"
#include "core/status.h"
#include "landing/commands.h"
#include "landing/landing_cli.h"
#include "report/bencher.h"
#include "report/history.h"

namespace pfx::gates {

int cmd_history(int argc, char** argv) {
  const cli::CommandHelp help{
      "history", "landing history [--metric GLOB] [--json | --bencher [ID] | --html FILE] [--out REPORTS]",
      R"(Every figure the ledger's landings measured, per metric and per commit in commit order (git's
topological order where the repository knows the commits), with the change points a windowed
Mann-Whitney U test finds; a commit measured twice (one landing's candidate, the next one's
baseline) shows both measurements. reports/index.html draws the same data. --metric picks
series by a glob over their keys ('ab: *', '*tok/s*'); --bencher prints one report's numbers
(default the newest) in Bencher Metric Format for `bencher run --adapter json`; --html writes
the trend page (what the ledger keeps as REPORTS/index.html; its links are relative to REPORTS).)"};
  RunOptions run;
  std::string metric, bencher, html;
  bool json = false;
  const auto vm = cli::parse_command(help, argc, argv, false, [&](cli::po::options_description& opts) {
    opts.add_options()("metric", cli::po::value(&metric)->value_name("GLOB"), "series whose key matches GLOB")
        ("json", cli::po::bool_switch(&json), "print JSON (schema landing-history/1)")
        ("bencher", cli::po::value(&bencher)->value_name("ID")->implicit_value("latest"),
         "print report ID (default the newest) in Bencher Metric Format")
        ("html", cli::po::value(&html)->value_name("FILE"), "write the trend page (index.html) to FILE");
    cli::add_reports_option(opts, run, "reports folder (default <repo>/reports)");
    cli::add_repo_option(opts, run);
  });
  if (!vm) return kExitPass;
  if (static_cast<size_t>(json) + vm->count("bencher") + vm->count("html") > 1) throw cli::UsageError("give one of --json, --bencher, --html");
  const auto reports = cli::reports_dir(run);
  std::optional<std::filesystem::path> repo;
  const auto here = run.repo.empty() ? std::filesystem::current_path() : std::filesystem::absolute(run.repo);
  if (git_result(here, {"rev-parse", "--show-toplevel"}).ok()) repo = repo_root(here);
  const History h = load_history(reports, repo);
  if (vm->count("bencher")) {
    if (h.reports.empty()) throw std::runtime_error(reports.string() + ": no reports in the ledger");
    std::cout << bencher_metric_format(h, bencher == "latest" ? h.reports.back().id : bencher).dump(2) << "\n";
    return kExitPass;
  }
  if (!html.empty()) {
    write_text_atomic(html, render_index_html(h));
    std::cout << "wrote " << html << "\n";
    return kExitPass;
  }
  const auto series = select_series(h, metric);
  if (!metric.empty() && series.empty()) throw std::runtime_error("no series matches --metric '" + metric + "'");
  if (json) std::cout << history_to_json(h, series).dump(2) << "\n";
  else std::cout << render_history_text(h, series);
  return kExitPass;
}

}  // namespace pfx::gates

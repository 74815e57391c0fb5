// landing.md and summary.md as a CommonMark library reads them (markdown_gfm_check.py, with
// Debian's markdown-it-py): task list first, real list items, the results table, one <details> per
// gate, no absolute folder of the machine that ran the landing, relative links that resolve. Over the
// sample record (with a reproduce command carrying the checkout's absolute folder) and over every
// report of the project's own ledger (reports/), re-rendered. The rendered HTML of the newest real
// report is kept in the build's test artifacts (PFX_ARTIFACTS_DIR/step-summary.html).
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <unistd.h>

#include "util/process.h"
#include "landing/gate_registry.h"
#include "report/history.h"
#include "report/index_html.h"
#include "report/ledger.h"
#include "report/markdown.h"
#include "sample_record.h"

using namespace pfx;
using namespace pfx::gates;
namespace fs = std::filesystem;

namespace {
ProcessResult check(const fs::path& md, size_t gates, const std::vector<std::string>& extra) {
  ProcessSpec s;
  s.argv = {PFX_MD_PYTHON, PFX_MD_CHECK, md.string(), "--gates", std::to_string(gates)};
  s.argv.insert(s.argv.end(), extra.begin(), extra.end());
  s.timeout_s = 60;
  s.merge_stderr_into_stdout = true;
  return run_process(s);
}

fs::path scratch(const std::string& what) {
  const fs::path dir = fs::temp_directory_path() / ("pfx-gfm-" + what + "-" + std::to_string(::getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir);
  return dir;
}
}  // namespace

TEST(MarkdownGfm, SampleRecordRendersAsLists) {
  auto r = sample_record();
  r.repo = "/home/ci/checkout";
  for (auto& g : r.gates)
    if (g.gate == "parity")
      g.command = "landing gate parity --baseline-build /home/ci/checkout/.landing/build/0c1d2e3f4a5b --candidate-build "
                  "/home/ci/checkout/.landing/build/f2b9e54aaaaa --fixtures /home/ci/shared/fixtures";
  const fs::path dir = scratch("sample");
  std::ofstream(dir / "landing.md") << render_markdown(r);
  std::ofstream(dir / "summary.md") << render_markdown(r, MarkdownOptions{true});
  for (const char* f : {"landing.md", "summary.md"}) {
    const auto res = check(dir / f, r.gates.size(), {"--forbid", "/home/ci"});
    EXPECT_TRUE(res.ok()) << f << ":\n" << res.out;
  }
  const std::string md = render_markdown(r);
  EXPECT_NE(md.find("--baseline-build .landing/build/0c1d2e3f4a5b"), std::string::npos) << md;
  EXPECT_NE(md.find("--fixtures ../shared/fixtures"), std::string::npos);
  fs::remove_all(dir);
}

TEST(MarkdownGfm, TheCheckerCatchesTheOldLayout) {
  // The pre-GFM layout: '•' lines, no task list, no <details>: every one of those is reported.
  const fs::path dir = scratch("old");
  std::ofstream(dir / "old.md") << "# 1 · landing a vs b — PASS\n\n## 4. Verification\n\n• ✅ **parity PASS**: ok\n"
                                   "• ✅ **ptxas PASS**: ok\n  — reproduce: `landing gate ptxas --candidate-build /abs/build`\n";
  const auto res = check(dir / "old.md", 2, {});
  EXPECT_EQ(res.exit_code, 1) << res.out;
  for (const char* what : {"expected 'Before merge'", "run-on paragraph", "<details>", "absolute path"})
    EXPECT_NE(res.out.find(what), std::string::npos) << what << "\n" << res.out;
  fs::remove_all(dir);
}

TEST(MarkdownGfm, EveryReportOfTheRealLedger) {
  register_legacy_output_readers();  // the ledger's results are landing-gate-result/1
  const fs::path dir = scratch("ledger");
  fs::copy(PFX_LEDGER_DIR, dir / "reports", fs::copy_options::recursive);
  const fs::path reports = dir / "reports";
  std::ofstream(reports / "index.html") << render_index_html(load_history(reports, std::nullopt));
  std::string newest;
  for (const auto& e : fs::directory_iterator(reports)) {
    if (!fs::exists(e.path() / "landing.json")) continue;
    const auto rec = read_landing_record(e.path() / "landing.json");
    write_report_files(e.path(), rec);
    ASSERT_FALSE(rec.repo.empty());
    const std::string parent = fs::path(rec.repo).parent_path().string() + "/";
    for (const char* f : {"landing.md", "summary.md"}) {
      const auto res = check(e.path() / f, rec.gates.size(),
                             {"--forbid", rec.repo, "--forbid", parent, "--links", e.path().string()});
      EXPECT_TRUE(res.ok()) << e.path().filename() << "/" << f << ":\n" << res.out;
    }
    if (rec.next.empty()) newest = e.path().string();
  }
  ASSERT_FALSE(newest.empty());
  const fs::path html = fs::path(PFX_ARTIFACTS_DIR) / "step-summary.html";
  fs::create_directories(html.parent_path());
  const auto res = check(fs::path(newest) / "summary.md", 7, {"--html", html.string()});
  EXPECT_TRUE(res.ok()) << res.out;
  EXPECT_GT(fs::file_size(html), 2000u);
  fs::remove_all(dir);
}

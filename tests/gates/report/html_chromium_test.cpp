// Opens a rendered landing.html, and reports/index.html over the project's own ledger, in headless Chromium (Debian package `chromium`) and checks that
// the page ran its check script, every chart laid out with a real size, and the console stayed
// free of errors. Chromium missing is a failure: scripts/bootstrap.sh installs it.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>
#include <unistd.h>

#include "landing/gate_registry.h"
#include "report/history.h"
#include "report/html.h"
#include "report/index_html.h"
#include "sample_record.h"
#include "util/process.h"

using namespace pfx;
using namespace pfx::gates;
namespace fs = std::filesystem;

namespace {
std::string slurp(const fs::path& p) {
  std::ifstream in(p);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

fs::path chromium() {
  for (const char* n : {"chromium", "chromium-browser", "google-chrome"})
    if (auto p = find_on_path(n); !p.empty()) return p;
  return {};
}

ProcessResult run_chromium(const std::vector<std::string>& extra, const fs::path& profile) {
  ProcessSpec s;
  s.argv = {chromium().string(), "--headless", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
            "--no-first-run", "--user-data-dir=" + profile.string(), "--enable-logging=stderr", "--v=0"};
  s.argv.insert(s.argv.end(), extra.begin(), extra.end());
  s.timeout_s = 90;
  return run_process(s);
}

// Loads `page` headless and returns the number of charts the page's check script counted, after
// asserting it reported every chart laid out and the console stayed free of errors; -1 on failure.
int charts_laid_out(const fs::path& page, const fs::path& profile) {
  const auto r = run_chromium({"--virtual-time-budget=5000", "--dump-dom", "file://" + page.string()}, profile);
  EXPECT_TRUE(r.ok()) << r.describe() << "\n" << r.tail(20);
  std::smatch m;
  if (!std::regex_search(r.out, m, std::regex("data-rendered=\"([^\"]*)\""))) {
    ADD_FAILURE() << "no data-rendered: " << r.out.substr(0, 400);
    return -1;
  }
  EXPECT_EQ(m[1], "ok");
  // Console messages come out as "CONSOLE(...)" lines with --enable-logging.
  std::stringstream log(r.err);
  for (std::string line; std::getline(log, line);) {
    const bool console = line.find("CONSOLE") != std::string::npos;
    EXPECT_FALSE(console && (line.find("rror") != std::string::npos || line.find("Uncaught") != std::string::npos)) << line;
  }
  if (!std::regex_search(r.out, m, std::regex("data-charts=\"([0-9]+)\""))) return -1;
  return std::stoi(m[1]);
}
}  // namespace

TEST(HtmlInChromium, RendersChartsWithoutConsoleErrors) {
  ASSERT_FALSE(chromium().empty()) << "headless Chromium not found: install the Debian package chromium (scripts/bootstrap.sh)";
  const fs::path dir = fs::temp_directory_path() / ("pfx-html-" + std::to_string(::getpid()));
  fs::create_directories(dir);
  const fs::path page = dir / "landing.html";
  std::ofstream(page) << render_html(sample_record());
  EXPECT_EQ(charts_laid_out(page, dir / "profile"), 2);  // per-kernel bars + A/B samples
  EXPECT_NE(slurp(page).find("<table class=\"ptxas\">"), std::string::npos);
  // And a screenshot is not blank: a PNG much larger than an empty page's.
  const auto shot = run_chromium({"--window-size=1000,1400", "--screenshot=" + (dir / "shot.png").string(), "file://" + page.string()},
                                 dir / "profile2");
  ASSERT_TRUE(fs::exists(dir / "shot.png")) << shot.tail(10);
  EXPECT_GT(fs::file_size(dir / "shot.png"), 20000u);
  fs::remove_all(dir);
}

// The trend page over the real ledger (reports/): laid out, no console errors, and a screenshot kept
// in the build's test artifacts (PFX_ARTIFACTS_DIR/index.png) for a reviewer.
TEST(IndexHtmlInChromium, RealLedgerRendersAndScreenshots) {
  ASSERT_FALSE(chromium().empty()) << "headless Chromium not found: install the Debian package chromium (scripts/bootstrap.sh)";
  const fs::path dir = fs::temp_directory_path() / ("pfx-index-" + std::to_string(::getpid()));
  fs::create_directories(dir);
  register_legacy_output_readers();  // the ledger's results are landing-gate-result/1
  // Into a copy of the ledger, so the page's relative links resolve as they do in reports/.
  fs::copy(PFX_LEDGER_DIR, dir / "reports", fs::copy_options::recursive);
  const fs::path page = dir / "reports" / "index.html";
  std::ofstream(page) << render_index_html(load_history(dir / "reports", std::nullopt));
  EXPECT_GT(charts_laid_out(page, dir / "profile"), 20);  // the headline, every role, and the folded rest
  const fs::path shot = fs::path(PFX_ARTIFACTS_DIR) / "index.png";
  fs::create_directories(shot.parent_path());
  fs::remove(shot);
  const auto s = run_chromium({"--window-size=1000,1600", "--screenshot=" + shot.string(), "file://" + page.string()}, dir / "profile2");
  ASSERT_TRUE(fs::exists(shot)) << s.tail(10);
  EXPECT_GT(fs::file_size(shot), 20000u);
  fs::remove_all(dir);
}

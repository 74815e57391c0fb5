// Opens a rendered landing.html in headless Chromium (Debian package `chromium`) and checks that
// the page ran its check script, every chart laid out with a real size, and the console stayed
// free of errors. Chromium missing is a failure: scripts/bootstrap.sh installs it.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>
#include <unistd.h>

#include "report/html.h"
#include "sample_record.h"
#include "util/process.h"

using namespace pfx;
using namespace pfx::gates;
namespace fs = std::filesystem;

namespace {
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
}  // namespace

TEST(HtmlInChromium, RendersChartsWithoutConsoleErrors) {
  ASSERT_FALSE(chromium().empty()) << "headless Chromium not found: install the Debian package chromium (scripts/bootstrap.sh)";
  const fs::path dir = fs::temp_directory_path() / ("pfx-html-" + std::to_string(::getpid()));
  fs::create_directories(dir);
  const fs::path page = dir / "landing.html";
  std::ofstream(page) << render_html(sample_record());
  const auto r = run_chromium({"--virtual-time-budget=5000", "--dump-dom", "file://" + page.string()}, dir / "profile");
  ASSERT_TRUE(r.ok()) << r.describe() << "\n" << r.tail(20);
  std::smatch m;
  ASSERT_TRUE(std::regex_search(r.out, m, std::regex("data-rendered=\"([^\"]*)\""))) << r.out.substr(0, 400);
  EXPECT_EQ(m[1], "ok");
  ASSERT_TRUE(std::regex_search(r.out, m, std::regex("data-charts=\"([0-9]+)\"")));
  EXPECT_EQ(m[1], "2");  // per-kernel bars + A/B samples
  EXPECT_NE(r.out.find("<table class=\"ptxas\">"), std::string::npos);
  // Console messages come out as "CONSOLE(...)" lines with --enable-logging.
  std::stringstream log(r.err);
  for (std::string line; std::getline(log, line);) {
    const bool console = line.find("CONSOLE") != std::string::npos;
    EXPECT_FALSE(console && (line.find("rror") != std::string::npos || line.find("Uncaught") != std::string::npos)) << line;
  }
  // And a screenshot is not blank: a PNG much larger than an empty page's.
  const auto shot = run_chromium({"--window-size=1000,1400", "--screenshot=" + (dir / "shot.png").string(), "file://" + page.string()},
                                 dir / "profile2");
  ASSERT_TRUE(fs::exists(dir / "shot.png")) << shot.tail(10);
  EXPECT_GT(fs::file_size(dir / "shot.png"), 20000u);
  fs::remove_all(dir);
}

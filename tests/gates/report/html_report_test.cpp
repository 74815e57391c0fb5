// landing.html over the project's own ledger (reports/, two real H200 landings): sections numbered
// from 1, the index link to the trend page, the per-role stacked bars (the enclosing 'prefill' range
// left out of the stack), whiskers on the per-kernel bars, unchanged ptxas rows folded, and no
// absolute folder of the machine that ran it.
#include <gtest/gtest.h>

#include <filesystem>

#include "landing/gate_registry.h"
#include "report/html.h"
#include "report/landing_record.h"

using namespace pfx::gates;
namespace fs = std::filesystem;

namespace {
bool has(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }
}  // namespace

TEST(HtmlReport, RealLedgerReportLayout) {
  register_legacy_output_readers();
  const auto rec = read_landing_record(fs::path(PFX_LEDGER_DIR) / "70ce6323b89a" / "landing.json");
  const std::string html = render_html(rec);
  size_t last = 0;
  for (const char* h : {"<h2>1. Verification</h2>", "<h2>2. Results</h2>", "<h2>3. Figures</h2>", "<h2>4. Gate profile</h2>",
                        "<h2>5. Environment</h2>"}) {
    const size_t at = html.find(h);
    ASSERT_NE(at, std::string::npos) << h;
    EXPECT_GT(at, last) << h;
    last = at;
  }
  EXPECT_TRUE(has(html, "<a href=\"../index.html\">Index</a>"));
  EXPECT_TRUE(has(html, "id=\"chart-roles-0-stacked\""));
  EXPECT_TRUE(has(html, "<line class=\"whisker\""));
  // ptxas: 123 kernels, the changed ones shown, the unchanged rest folded.
  EXPECT_TRUE(has(html, "<details class=\"unchanged\"><summary>83 unchanged rows</summary>"));
  EXPECT_FALSE(has(html, rec.repo + "/"));
  EXPECT_TRUE(has(html, "--baseline-build .landing/build/1496b5935407"));
}

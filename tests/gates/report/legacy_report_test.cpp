// A landing record written before gate results had rows and tables (landing-gate-result/1, from a
// real H200 report; data/README.md) renders its results section exactly as the renderer of that
// time did, through each gate's legacy reader, and gains the figures the gates now draw.
#include <gtest/gtest.h>

#include <fstream>
#include <iterator>

#include "landing/gate_registry.h"
#include "report/html.h"
#include "report/landing_record.h"
#include "report/markdown.h"

using namespace pfx::gates;

TEST(LegacyReport, VersionOneRecordRendersItsResultsAsBefore) {
  register_legacy_output_readers();
  const auto rec = read_landing_record(PFX_REPORT_DATA "/landing-v1.json");
  const std::string md = render_markdown(rec);
  std::ifstream in(PFX_REPORT_DATA "/landing-v1.results.md");
  const std::string expected{std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
  ASSERT_FALSE(expected.empty());
  EXPECT_NE(md.find(expected), std::string::npos) << md;
  EXPECT_NE(md.find("Result: pp512 tok/s 26886.2 → 27556.9 (+2.5%); llama-7b-q4km: GPU time"), std::string::npos);
  ASSERT_NE(rec.headline_row(), nullptr);
  EXPECT_EQ(rec.headline_row()->metric, "pp512 tok/s");
  const std::string html = render_html(rec);
  EXPECT_NE(html.find("id=\"chart-kernels-0\""), std::string::npos);
  EXPECT_NE(html.find("id=\"chart-ab\""), std::string::npos);
  EXPECT_NE(html.find("<td>56 → 48</td>"), std::string::npos);  // k_attn_decode_split<64> registers
}

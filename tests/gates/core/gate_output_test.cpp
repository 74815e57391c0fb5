// Typed gate figures (core/gate_output.h): the text forms every renderer shares, the JSON round
// trip of rows and tables inside a gate result, clear errors on malformed figures, verdicts copied
// from the judging checks (waivers included), and a version-1 result read through its gate's
// registered legacy reader.
#include <gtest/gtest.h>

#include "core/gate_result.h"
#include "util/error.h"

using namespace pfx::gates;
using nlohmann::json;

namespace {
GateResult with_figures() {
  GateResult r;
  r.gate = "timing";
  Row row;
  row.metric = "k_gemm";
  row.label = "kernel k_gemm (ns)";
  row.unit = "ns";
  row.format = kGrouped;
  row.baseline = number_cell(2549248);
  row.candidate = number_cell(2046848);
  row.delta = -502400;
  row.delta_pct = -19.708;
  row.noise_pct = 1.5;
  row.ci_pct = std::array<double, 2>{-20.1, -19.2};
  row.check = "budget";
  row.headline = true;
  r.rows.push_back(row);
  Table t;
  t.id = "ptxas";
  t.title = "resources";
  t.columns = {{"kernel", "", {}}, {"regs", "", kInteger}, {"spill", "B", kInteger}};
  t.rows.push_back({{text_cell("k_gemm"), compared_cell(85, 87), number_cell(0)}, "budget"});
  t.rows.push_back({{Cell{std::nullopt, false, std::nullopt, "k_new", "new"}, compared_cell(std::nullopt, 32), Cell{}}});
  t.note = "Removed since baseline: []";
  t.chart.kind = Chart::Kind::bars;
  t.chart.label = "kernel";
  t.chart.max_rows = 15;
  r.tables.push_back(t);
  r.checks = {{"budget", Status::Fail, "over budget"}};
  return r;
}
}  // namespace

TEST(GateOutput, TextFormsAreSharedByEveryRenderer) {
  EXPECT_EQ(format_number(2549248.4, kGrouped), "2,549,248");
  EXPECT_EQ(format_number(29696, kInteger), "29696");
  EXPECT_EQ(format_number(1568.66, fixed_format(1)), "1568.7");
  EXPECT_EQ(format_number(3.2e-5, kSci), "3.20e-05");
  EXPECT_EQ(format_number(0.938, kFraction), "93.8%");
  EXPECT_EQ(format_number(13.31, kSignedPercent), "+13.3%");
  EXPECT_EQ(cell_text(compared_cell(85, 87), kInteger), "85 → 87");
  EXPECT_EQ(cell_text(compared_cell(2, 2), kInteger), "2");
  EXPECT_EQ(cell_text(compared_cell(std::nullopt, 2), kInteger), "? → 2");
  EXPECT_EQ(cell_text(text_cell("166/0/3"), kInteger), "166/0/3");
  EXPECT_EQ(cell_text(Cell{}, kInteger), "");
  Row r;
  r.delta_pct = -19.7;
  EXPECT_EQ(delta_text(r), "-19.7%");
  r.note = "added";
  EXPECT_EQ(delta_text(r), "added");
  EXPECT_EQ(column_header({"spill", "B", kInteger}), "spill B");
  EXPECT_EQ(column_header({"kernel", "", {}}), "kernel");
}

TEST(GateOutput, RowsAndTablesRoundTripAndTakeTheirChecksVerdict) {
  GateResult r = with_figures();
  settle_from_checks(r);
  ASSERT_TRUE(r.rows[0].verdict);
  EXPECT_EQ(*r.rows[0].verdict, Status::Fail);
  EXPECT_EQ(*r.tables[0].rows[0].verdict, Status::Fail);
  EXPECT_FALSE(r.tables[0].rows[1].verdict);  // names no check
  r.checks[0].status = Status::Waived;  // what finish() does with a waiver
  sync_verdicts(r);
  EXPECT_EQ(*r.rows[0].verdict, Status::Waived);
  const json j = to_json(r);
  EXPECT_EQ(j["schema"], "landing-gate-result/2");
  const GateResult back = gate_result_from_json(j, "r.json");
  EXPECT_EQ(back.rows, r.rows);
  EXPECT_EQ(back.tables, r.tables);
  EXPECT_EQ(to_json(back), j);
  ASSERT_NE(back.headline(), nullptr);
  EXPECT_EQ(back.headline()->metric, "k_gemm");
}

TEST(GateOutput, MalformedFiguresNameTheField) {
  json j = to_json(with_figures());
  j["tables"][0]["rows"][0]["cells"].erase(0);
  try {
    gate_result_from_json(j, "r.json");
    FAIL() << "accepted a row with too few cells";
  } catch (const pfx::Error& e) {
    EXPECT_NE(std::string(e.what()).find("r.json: gate timing: tables[0].rows[0]: field 'cells' must be an array of 3"), std::string::npos)
        << e.what();
  }
  j = to_json(with_figures());
  j["rows"][0]["format"]["style"] = "roman";
  try {
    gate_result_from_json(j, "r.json");
    FAIL() << "accepted format style roman";
  } catch (const pfx::Error& e) {
    EXPECT_NE(std::string(e.what()).find("rows[0].format.style: 'roman'"), std::string::npos) << e.what();
  }
}

TEST(GateOutput, VersionOneResultsGetFiguresFromTheirGatesReader) {
  register_legacy_output_reader("legacytest", [](GateResult& r) {
    Row row;
    row.metric = "from details";
    row.candidate = number_cell(r.details.value("x", 0.0));
    r.rows.push_back(row);
  });
  json v1 = {{"schema", "landing-gate-result/1"}, {"gate", "legacytest"}, {"status", "PASS"}, {"details", {{"x", 7}}}};
  const GateResult r = gate_result_from_json(v1, "old.json");
  ASSERT_EQ(r.rows.size(), 1u);
  EXPECT_EQ(r.rows[0].candidate.value, 7);
  v1["gate"] = "nobody";  // no reader: it reads, without figures
  EXPECT_TRUE(gate_result_from_json(v1, "old.json").rows.empty());
}

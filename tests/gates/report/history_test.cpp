// The ledger's history over the project's own ledger (reports/: two H200 landings, 1496b59 measured
// by both) and over synthetic series: the commit order, the drift of a commit measured twice, the
// change-point test, `landing history`'s JSON, the Bencher export and the trend page's structure.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <random>
#include <unistd.h>

#include "stats/change_points.h"
#include "landing/gate_registry.h"
#include "report/bencher.h"
#include "report/history.h"
#include "report/index_html.h"
#include "report/ledger.h"
#include "sample_record.h"
#include "temp_dir.h"
#include "util/error.h"

using namespace pfx::gates;
namespace fs = std::filesystem;

namespace {
const fs::path kLedger = PFX_LEDGER_DIR;
// The ledger's reports are landing-gate-result/1: their figures come from the gates' legacy readers.
const bool kReaders = (register_legacy_output_readers(), true);
bool has(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }
const HistorySeries& series(const History& h, const std::string& key) {
  for (const auto& s : h.series)
    if (s.key == key) return s;
  throw std::runtime_error("no series " + key);
}
}  // namespace

TEST(ChangePoints, OneStepFoundWhereItIs) {
  std::mt19937 rng(7);
  std::normal_distribution<double> noise(0, 1);
  std::vector<std::vector<double>> per_commit;
  for (int c = 0; c < 10; ++c) {
    std::vector<double> reps;
    for (int k = 0; k < 6; ++k) reps.push_back((c < 6 ? 100 : 110) + noise(rng));
    per_commit.push_back(reps);
  }
  const auto cps = change_points(per_commit);
  ASSERT_EQ(cps.size(), 1u);
  EXPECT_EQ(cps[0].index, 6u);
  EXPECT_LT(cps[0].p, kChangeAlpha);
  EXPECT_NEAR(cps[0].before, 100, 1.5);
  EXPECT_NEAR(cps[0].after, 110, 1.5);
}

TEST(ChangePoints, NoneInNoise) {
  std::mt19937 rng(11);
  std::normal_distribution<double> noise(100, 1);
  std::vector<std::vector<double>> per_commit(12);
  for (auto& reps : per_commit)
    for (int k = 0; k < 6; ++k) reps.push_back(noise(rng));
  EXPECT_TRUE(change_points(per_commit).empty());
  EXPECT_TRUE(change_points({}).empty());
  EXPECT_TRUE(change_points({{1.0}}).empty());
}

TEST(History, RealLedgerShowsTheDriftOf1496b59) {
  const History h = load_history(kLedger, std::nullopt);
  ASSERT_EQ(h.reports.size(), 2u);
  EXPECT_EQ(h.reports[0].id, "1496b5935407");
  EXPECT_EQ(h.reports[1].id, "70ce6323b89a");
  // Without git, commits in the order the ledger first saw them: landing 1's baseline, its
  // candidate (landing 2's baseline), landing 2's candidate.
  ASSERT_EQ(h.commits.size(), 3u);
  EXPECT_FALSE(h.git_order);
  EXPECT_EQ(h.commits[1].substr(0, 7), "1496b59");
  ASSERT_FALSE(h.series.empty());
  const HistorySeries& ab = h.series.front();  // the report's headline first
  EXPECT_TRUE(ab.primary);
  EXPECT_EQ(ab.key, "ab: whole prefill pp512 tok/s (A/B median)");
  ASSERT_EQ(ab.points.size(), 3u);
  const auto& twice = ab.points[1];
  ASSERT_EQ(twice.measurements.size(), 2u);
  EXPECT_EQ(twice.measurements[0].side, "candidate");
  EXPECT_EQ(twice.measurements[1].side, "baseline");
  EXPECT_NEAR(twice.measurements[0].value, 27407, 1);
  EXPECT_NEAR(twice.measurements[1].value, 26886, 1);
  EXPECT_EQ(twice.measurements[0].samples.size(), 6u);
  EXPECT_EQ(twice.measurements[1].samples.size(), 10u);
  ASSERT_EQ(ab.drifts.size(), 1u);
  EXPECT_EQ(ab.drifts[0].point, 1u);
  EXPECT_NEAR(ab.drifts[0].pct, -1.90, 0.01);
  ASSERT_TRUE(ab.drifts[0].p);
  EXPECT_GT(*ab.drifts[0].p, 0);
  EXPECT_LE(*ab.drifts[0].p, 1);
  // Per-role GPU time from the timing gate's judged role table: every role, every landing.
  const auto& role = series(h, "timing: llama-7b-q4km role attn_v (ns)");
  EXPECT_TRUE(role.headline);
  EXPECT_EQ(role.points.size(), 3u);
  EXPECT_EQ(role.unit, "ns");
  // Three commits cannot show a change point with 3-commit windows at p < 0.01.
  EXPECT_TRUE(ab.changes.empty());
}

TEST(History, JsonTextAndMetricSelection) {
  const History h = load_history(kLedger, std::nullopt);
  const auto picked = select_series(h, "ab: *");
  ASSERT_EQ(picked.size(), 1u);
  const auto j = history_to_json(h, picked);
  EXPECT_EQ(j["schema"], "landing-history/1");
  EXPECT_EQ(j["change_test"]["name"], "windowed two-sided Mann-Whitney U");
  ASSERT_EQ(j["series"].size(), 1u);
  ASSERT_EQ(j["series"][0]["drift"].size(), 1u);
  EXPECT_EQ(j["series"][0]["drift"][0]["first_report"], "1496b5935407");
  EXPECT_EQ(j["series"][0]["drift"][0]["second_report"], "70ce6323b89a");
  const auto text = render_history_text(h, picked);
  EXPECT_TRUE(has(text, "drift: measured again by 70ce6323b89a: -1.90%")) << text;
  EXPECT_TRUE(select_series(h, "no such *").empty());
}

TEST(History, BencherMetricFormatOfOneReport) {
  const History h = load_history(kLedger, std::nullopt);
  const auto bmf = bencher_metric_format(h, "70ce6323b89a");
  const auto& ab = bmf.at("ab: whole prefill pp512 tok/s (A/B median)").at("throughput");
  EXPECT_NEAR(ab.at("value").get<double>(), 27557, 1);
  EXPECT_LE(ab.at("lower_value").get<double>(), ab.at("value").get<double>());
  EXPECT_GE(ab.at("upper_value").get<double>(), ab.at("value").get<double>());
  EXPECT_TRUE(bmf.at("timing: llama-7b-q4km role attn_v (ns)").contains("latency"));
  EXPECT_EQ(bencher_measure("regs"), "regs");
  EXPECT_THROW(bencher_metric_format(h, "nosuch"), pfx::Error);
}

TEST(IndexHtml, SectionsLinksAndCharts) {
  const History h = load_history(kLedger, std::nullopt);
  const auto html = render_index_html(h);
  EXPECT_TRUE(has(html, "<h2>1. Landings</h2>"));
  EXPECT_TRUE(has(html, "<h2>2. Commits measured twice</h2>"));
  EXPECT_TRUE(has(html, "<h2>3. Trends</h2>"));
  EXPECT_TRUE(has(html, "href=\"1496b5935407/landing.html\""));
  EXPECT_TRUE(has(html, "href=\"70ce6323b89a/landing.html\""));
  EXPECT_TRUE(has(html, "href=\"latest/landing.html\""));
  EXPECT_TRUE(has(html, "-1.90%"));
  expect_self_contained(html);
  EXPECT_TRUE(has(html, "class=\"whisker\""));
  EXPECT_TRUE(has(html, "<details class=\"more\">"));
}

TEST(IndexHtml, LedgerWritesItAndPointsLatest) {
  const pfx::test::TempDir tmp("history");
  const fs::path& dir = tmp.path();
  for (int i = 0; i < 2; ++i) append_to_ledger(dir, sample_record());
  ASSERT_TRUE(fs::exists(dir / "index.html"));
  ASSERT_TRUE(fs::is_symlink(dir / "latest"));
  EXPECT_EQ(fs::read_symlink(dir / "latest"), "abcdef0-2");
  EXPECT_TRUE(fs::exists(dir / "latest" / "landing.md"));
  const History h = load_history(dir, std::nullopt);
  EXPECT_EQ(h.reports.size(), 2u);
  fs::remove_all(dir);
  EXPECT_THROW(load_history(dir, std::nullopt), pfx::Error);
}

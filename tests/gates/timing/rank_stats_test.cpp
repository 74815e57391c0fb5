// The timing gate's statistics (stats/rank_test.h's U test, stats/stats.h's bootstrap, timing/
// timing_judge.h) on hand-made samples whose answers are known: the landing-2 "−26.1%" that was
// noise, unchanged code, movers by significance, and role budgets judged on the interval's bound.
#include <gtest/gtest.h>

#include "stats/rank_test.h"
#include "stats/stats.h"
#include "timing/timing_judge.h"

using namespace pfx::gates;
using nlohmann::json;

TEST(TimingStats, FiveRepsCanReachAlphaThreeCannot) {
  // Why the schema asks for ≥ 5 repetitions: fully separated samples are the strongest evidence
  // there is, and at 3 vs 3 even that is p = 0.1 (stats/rank_test.h, exact without ties).
  EXPECT_NEAR(mann_whitney_u({1, 2, 3, 4, 5}, {6, 7, 8, 9, 10}).p_two_sided, 2.0 / 252, 1e-12);
  EXPECT_NEAR(mann_whitney_u({1, 2, 3}, {4, 5, 6}).p_two_sided, 2.0 / 20, 1e-12);
}

TEST(TimingStats, BootstrapIntervalOfTheMedianChange) {
  const auto ci = bootstrap_median_change_pct({100, 100, 100, 100, 100}, {110, 110, 110, 110, 110}, 0.95);
  EXPECT_NEAR(ci.lo, 10.0, 1e-9);
  EXPECT_NEAR(ci.hi, 10.0, 1e-9);
  const auto wide = bootstrap_median_change_pct({100, 90, 110, 95, 105}, {100, 130, 95, 120, 105}, 0.95);
  EXPECT_LT(wide.lo, 0.0);
  EXPECT_GT(wide.hi, 10.0);
}

TEST(TimingJudge, Landing2HeadlineWasNoise) {
  // landing 2's "k_rmsnorm_warp −26.1%": [1309, 955, 1322] → [967, 950, 1342] µs.
  json row = {{"key", "k_rmsnorm_warp"}, {"status", "changed"}, {"baseline_samples_ns", {1309e3, 955e3, 1322e3}},
              {"candidate_samples_ns", {967e3, 950e3, 1342e3}}};
  judge_timing_row(row, 0.05);
  EXPECT_EQ(row["verdict"], "SAME");
  EXPECT_GT(row["p_value"].get<double>(), 0.5);
  EXPECT_NEAR(row["delta_pct"].get<double>(), -26.1, 0.1);
}

TEST(TimingJudge, UnchangedCodeIsNeverAMover) {
  json row = {{"key", "k"}, {"status", "changed"}, {"sass", "unchanged"}, {"baseline_samples_ns", {100, 101, 102, 103, 104}},
              {"candidate_samples_ns", {200, 201, 202, 203, 204}}};
  judge_timing_row(row, 0.05);
  EXPECT_EQ(row["verdict"], "unchanged code");
}

namespace {
json model_with_role(std::vector<double> a, std::vector<double> b, const std::string& sass = "changed") {
  json row = {{"key", "attn_v"}, {"status", "changed"}, {"sass", sass}, {"baseline_samples_ns", a}, {"candidate_samples_ns", b}};
  json krow = row;
  krow["key"] = "k_gemm";
  return {{"model", "toy"}, {"reps", a.size()}, {"kernels", json::array({krow})}, {"roles", json::array({row})}};
}
Status role_status(json m, double budget) {
  TimingSettings s;
  s.role_budgets = json::array({{{"role", "attn*"}, {"max_regression_pct", budget}}});
  for (const auto& c : judge_timing_evidence(m, s))
    if (c.name == "toy role attn_v") return c.status;
  return Status::Skipped;
}
}  // namespace

TEST(TimingJudge, RoleBudgetOnTheIntervalBound) {
  const std::vector<double> base = {1000, 1002, 998, 1001, 999};
  // +20% and tight: even the interval's low end is beyond a 10% budget.
  EXPECT_EQ(role_status(model_with_role(base, {1200, 1202, 1198, 1201, 1199}), 10), Status::Fail);
  // +2%: the whole interval is within 10%.
  EXPECT_EQ(role_status(model_with_role(base, {1020, 1022, 1018, 1021, 1019}), 10), Status::Pass);
  // +10% with noise that spans the budget: undecided, not a guess.
  EXPECT_EQ(role_status(model_with_role(base, {1000, 1250, 1100, 960, 1180}), 10), Status::Inconclusive);
  // The same +20% in code whose SASS did not change: noise, never a budget failure.
  EXPECT_EQ(role_status(model_with_role(base, {1200, 1202, 1198, 1201, 1199}, "unchanged"), 10), Status::Pass);
}

TEST(TimingJudge, MoversRankedBySignificanceOrNone) {
  json m = model_with_role({1, 2, 3, 4, 5}, {1, 2, 3, 4, 5});
  judge_timing_evidence(m, TimingSettings{});
  EXPECT_TRUE(m["movers"].empty());
  EXPECT_NE(m["evidence"].get<std::string>().find("no significant change"), std::string::npos) << m["evidence"];
  json n = model_with_role({100, 101, 102, 103, 104}, {150, 151, 152, 153, 154});
  judge_timing_evidence(n, TimingSettings{});
  ASSERT_EQ(n["movers"].size(), 1u);
  EXPECT_EQ(n["movers"][0]["verdict"], "SLOWER");
  EXPECT_NE(n["evidence"].get<std::string>().find("top movers"), std::string::npos);
}

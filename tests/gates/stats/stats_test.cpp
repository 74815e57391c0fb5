// A/B statistics: median, bootstrap CI, and the decision rule (improved / no change / regressed /
// undecided) on constructed ratio series.
#include <gtest/gtest.h>

#include "stats/stats.h"

using namespace pfx::gates;

TEST(Stats, MedianAndPercentile) {
  EXPECT_DOUBLE_EQ(median({3, 1, 2}), 2);
  EXPECT_DOUBLE_EQ(median({4, 1, 2, 3}), 2.5);
  EXPECT_DOUBLE_EQ(percentile({0, 10}, 0.25), 2.5);
  EXPECT_NEAR(stddev({1, 2, 3, 4}), 1.2909944, 1e-6);
}

TEST(Stats, BootstrapIsReproducibleAndBracketsTheMedian) {
  std::vector<double> v = {1.0, 1.2, 0.9, 1.1, 1.05, 0.95, 1.3, 1.0};
  const auto a = bootstrap_median_ci(v), b = bootstrap_median_ci(v);
  EXPECT_DOUBLE_EQ(a.lo, b.lo);
  EXPECT_DOUBLE_EQ(a.hi, b.hi);
  EXPECT_LE(a.lo, median(v));
  EXPECT_GE(a.hi, median(v));
  EXPECT_GE(a.lo, 0.9);
  EXPECT_LE(a.hi, 1.3);
}

TEST(AbDecision, ImprovedNoChangeRegressedUndecided) {
  // +13% in every pair (the seed's r39): improved, wins 6/6.
  auto a = analyse_pairs({1.13, 1.12, 1.14, 1.13, 1.135, 1.125}, 2.0);
  EXPECT_EQ(a.decision, AbDecision::Improved);
  EXPECT_EQ(a.wins, 6);
  EXPECT_NEAR(a.median_delta_pct, 13.0, 0.3);
  // A/A-like noise around 0: no change.
  a = analyse_pairs({1.002, 0.998, 1.001, 0.999, 1.0, 1.003}, 2.0);
  EXPECT_EQ(a.decision, AbDecision::NoChange);
  // -10% everywhere: regressed.
  a = analyse_pairs({0.9, 0.91, 0.89, 0.9, 0.905, 0.895}, 2.0);
  EXPECT_EQ(a.decision, AbDecision::Regressed);
  EXPECT_EQ(a.wins, 0);
  // Wild noise straddling the threshold: undecided (more pairs).
  a = analyse_pairs({0.9, 1.1, 0.95, 1.06, 0.97, 1.02}, 2.0);
  EXPECT_EQ(a.decision, AbDecision::Undecided);
}

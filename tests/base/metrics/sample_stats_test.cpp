// Order statistics of samples (base/metrics/sample_stats.h): median and percentile interpolation,
// sample stddev, and the relative spread the timing gate reports as run-to-run noise.
#include <gtest/gtest.h>

#include "metrics/sample_stats.h"

TEST(SampleStats, MedianPercentileStddevSpread) {
  EXPECT_DOUBLE_EQ(pfx::median({}), 0);
  EXPECT_DOUBLE_EQ(pfx::median({3, 1, 2}), 2);
  EXPECT_DOUBLE_EQ(pfx::percentile({0, 10}, 0.25), 2.5);
  EXPECT_DOUBLE_EQ(pfx::stddev({5}), 0);
  EXPECT_DOUBLE_EQ(pfx::spread_pct({90, 100, 110}, 100), 20);
  EXPECT_DOUBLE_EQ(pfx::spread_pct({1, 2}, 0), 0);  // no median to relate to
  EXPECT_DOUBLE_EQ(pfx::spread_pct({}, 5), 0);
}

// compare_logits / argmax / first_divergence: the metrics every gate quotes.
#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "metrics/compare.h"

namespace {

TEST(CompareLogits, IdenticalLogitsAreZeroDeviationFullAgreement) {
  const std::vector<float> a = {1, 2, 3, -4, 0.5f, 0.25f};
  const pfx::LogitStats s = pfx::compare_logits(a.data(), a.data(), 2, 3);
  EXPECT_EQ(s.max_abs_diff, 0.0);
  EXPECT_EQ(s.rel, 0.0);
  EXPECT_EQ(s.nmse, 0.0);
  EXPECT_EQ(s.max_abs_ref, 4.0);
  EXPECT_EQ(s.top1_agreement, 1.0);
  EXPECT_FALSE(s.has_nan);
}

TEST(CompareLogits, KnownDeviationNmseAndTop1) {
  const std::vector<float> ref = {1, 2, 3, 4, 0, 0};   // argmax rows: 2, 0
  const std::vector<float> a = {1, 2, 3.5f, 4, 4.5f, 0};  // argmax rows: 2, 1
  const pfx::LogitStats s = pfx::compare_logits(a.data(), ref.data(), 2, 3);
  EXPECT_DOUBLE_EQ(s.max_abs_diff, 4.5);
  EXPECT_DOUBLE_EQ(s.rel, 4.5 / 4.0);
  EXPECT_DOUBLE_EQ(s.nmse, (0.25 + 20.25) / (1 + 4 + 9 + 16));
  EXPECT_DOUBLE_EQ(s.top1_agreement, 0.5);
}

TEST(CompareLogits, NanIsFlagged) {
  const std::vector<float> ref = {1, 2};
  const std::vector<float> a = {NAN, 2};
  EXPECT_TRUE(pfx::compare_logits(a.data(), ref.data(), 1, 2).has_nan);
  const std::vector<float> inf = {1, INFINITY};
  EXPECT_TRUE(pfx::compare_logits(inf.data(), ref.data(), 1, 2).has_nan);
}

TEST(Argmax, TiesGoToTheLowestIdAndNanNeverWins) {
  const std::vector<float> v = {1, 3, 3, 2};
  EXPECT_EQ(pfx::argmax(v.data(), 4), 1);
  const std::vector<float> n = {NAN, -5, -7};
  EXPECT_EQ(pfx::argmax(n.data(), 3), 1);
  EXPECT_EQ(pfx::argmax(v.data(), 0), -1);
}

TEST(FirstDivergence, IndexOrMinusOne) {
  const std::vector<int32_t> a = {1, 2, 3}, b = {1, 2, 4}, c = {1, 2};
  EXPECT_EQ(pfx::first_divergence(a, a), -1);
  EXPECT_EQ(pfx::first_divergence(a, b), 2);
  EXPECT_EQ(pfx::first_divergence(a, c), 2);
}

TEST(FormatStats, NamesEveryNumber) {
  const std::vector<float> ref = {1, 2, 3, 4}, a = {1, 2, 3, 4.5f};
  const std::string s = pfx::format_stats(pfx::compare_logits(a.data(), ref.data(), 2, 2), 2);
  EXPECT_NE(s.find("max|d|/max|ref| 1.250e-01"), std::string::npos) << s;
  EXPECT_NE(s.find("top-1 100.0% (2/2 rows)"), std::string::npos) << s;
  EXPECT_NE(s.find("NMSE"), std::string::npos) << s;
}

}  // namespace

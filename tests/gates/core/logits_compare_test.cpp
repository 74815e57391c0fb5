// Logits metrics on the real fixtures: llama.cpp's logits vs the float64 oracle must reproduce
// the figures fixtures/DEVIATIONS.md records (max rel, NMSE, top-1), and NaN is found.
#include <gtest/gtest.h>

#include <filesystem>
#include <limits>

#include "core/logits_compare.h"
#include "util/fixtures.h"

using namespace pfx::gates;

namespace {
pfx::NpyArray load(const std::string& rel) {
  const auto p = pfx::fixtures_dir() / rel;
  if (!std::filesystem::exists(p)) throw std::runtime_error("fixture missing: " + p.string() + " (set PFX_FIXTURES)");
  return pfx::read_npy(p);
}
}  // namespace

TEST(LogitsCompare, ReproducesDeviationsOnRealFixtures) {
  // DEVIATIONS.md: kq256-q4km.lily 1.79e-02, NMSE 3.07e-04, top-1 93.8%; q6k.lily 1.69e-02, 2.99e-04, 100%.
  auto c = compare_logits(load("llama.cpp/kq256-q4km.lily.logits.npy"), load("oracle/kq256-q4km.lily.logits.npy"));
  ASSERT_TRUE(c.shape_match);
  EXPECT_NEAR(c.max_rel_dev, 1.79e-2, 0.005e-2);
  EXPECT_NEAR(c.nmse, 3.07e-4, 0.005e-4);
  EXPECT_NEAR(c.top1_agreement, 0.9375, 1e-9);
  EXPECT_EQ(c.top1_mismatch_positions.size(), 1u);
  c = compare_logits(load("llama.cpp/kq256-q6k.lily.logits.npy"), load("oracle/kq256-q6k.lily.logits.npy"));
  EXPECT_NEAR(c.max_rel_dev, 1.69e-2, 0.005e-2);
  EXPECT_DOUBLE_EQ(c.top1_agreement, 1.0);
}

TEST(LogitsCompare, IdenticalIsZeroAndShapeMismatchIsReported) {
  const auto a = load("oracle/stories260K.once.logits.npy");
  const auto c = compare_logits(a, a);
  EXPECT_EQ(c.max_abs_diff, 0);
  EXPECT_EQ(c.nmse, 0);
  EXPECT_EQ(c.top1_agreement, 1);
  const auto b = load("oracle/stories260K.lily.logits.npy");
  const auto m = compare_logits(a, b);
  EXPECT_FALSE(m.shape_match);
  EXPECT_NE(m.shape_error.find("[5,512] vs reference [15,512]"), std::string::npos);
}

TEST(LogitsCompare, NonFiniteValuesAreLocated) {
  auto a = load("oracle/stories260K.once.logits.npy");
  a.data[2 * 512 + 17] = std::numeric_limits<float>::quiet_NaN();
  a.data[4 * 512 + 1] = std::numeric_limits<float>::infinity();
  const auto nf = find_non_finite(a);
  EXPECT_EQ(nf.count, 2);
  EXPECT_EQ(nf.first_row, 2);
  EXPECT_EQ(nf.first_col, 17);
}

// Logits metrics on the real fixtures: llama.cpp's logits vs the float64 oracle must reproduce
// the figures fixtures/DEVIATIONS.md records (max rel, NMSE, top-1), and NaN is found. Small
// hand-worked arrays pin the worst position, ties and the mismatch list beside the shared metrics.
#include <gtest/gtest.h>

#include <filesystem>
#include <limits>
#include <string>
#include <vector>

#include "logits/logits_compare.h"
#include "util/error.h"
#include "util/fixtures.h"

using namespace pfx::gates;

namespace {
pfx::NpyArray array(int64_t rows, int64_t cols, std::vector<float> data) {
  pfx::NpyArray a;
  a.shape = {rows, cols};
  a.data = std::move(data);
  return a;
}
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

TEST(LogitsCompare, WorstPositionTiesAndMetricsOnHandWorkedArrays) {
  // |Δ|: 0.5 at (0,2), 1 at (1,3), 1 at (2,1), 0.25 at (3,3). Row 0: ref ties tokens 1 and 2
  // (→ 1), test picks 2: a mismatch. Row 3: test ties tokens 0 and 3 (→ 0), as does ref: agreement.
  const auto ref = array(4, 4, {1, 3, 3, 0, 2, 0, 0, 0, 0, 0, 0, 4, 5, 0, 0, 4.75f});
  const auto test = array(4, 4, {1, 3, 3.5f, 0, 2, 0, 0, -1, 0, 1, 0, 4, 5, 0, 0, 5});
  const auto c = compare_logits(test, ref);
  ASSERT_TRUE(c.shape_match);
  EXPECT_EQ(c.positions, 4);
  EXPECT_EQ(c.vocab, 4);
  EXPECT_EQ(c.max_abs_diff, 1.0);
  EXPECT_EQ(c.max_abs_ref, 5.0);
  EXPECT_DOUBLE_EQ(c.max_rel_dev, 0.2);
  EXPECT_DOUBLE_EQ(c.nmse, (0.25 + 1 + 1 + 0.0625) / (1 + 9 + 9 + 4 + 16 + 25 + 4.75 * 4.75));
  EXPECT_DOUBLE_EQ(c.top1_agreement, 0.75);
  EXPECT_EQ(c.top1_mismatch_positions, std::vector<int64_t>{0});
  // Two elements share the largest |Δ|: the first in row-major order is reported.
  EXPECT_EQ(c.worst_row, 1);
  EXPECT_EQ(c.worst_col, 3);
  EXPECT_EQ(c.worst_value, -1.0);
  EXPECT_EQ(c.worst_ref, 0.0);
  const auto j = to_json(c);
  EXPECT_EQ(j["worst"]["position"], 1);
  EXPECT_EQ(j["worst"]["token"], 3);
  EXPECT_EQ(j["top1_mismatch_positions"], nlohmann::json::array({0}));
  EXPECT_FALSE(j.contains("shape_error"));
}

TEST(LogitsCompare, MismatchListStopsAtEightAndIdenticalHasNoWorst) {
  std::vector<float> ref, test;
  for (int r = 0; r < 10; ++r) {
    ref.insert(ref.end(), {1, 0});
    test.insert(test.end(), {0, 1});
  }
  const auto c = compare_logits(array(10, 2, test), array(10, 2, ref));
  EXPECT_EQ(c.top1_agreement, 0);
  EXPECT_EQ(c.top1_mismatch_positions, (std::vector<int64_t>{0, 1, 2, 3, 4, 5, 6, 7}));
  const auto same = compare_logits(array(10, 2, ref), array(10, 2, ref));
  EXPECT_EQ(same.worst_row, -1);
  EXPECT_EQ(same.worst_col, -1);
  EXPECT_TRUE(same.top1_mismatch_positions.empty());
}

TEST(LogitsCompare, NonFiniteInputIsRefusedWithItsPosition) {
  auto test = array(3, 2, {1, 2, 3, 4, 5, 6});
  const auto ref = test;
  test.data[2 * 2 + 1] = std::numeric_limits<float>::quiet_NaN();
  try {
    compare_logits(test, ref);
    FAIL() << "a NaN in the test logits was compared";
  } catch (const pfx::Error& e) {
    EXPECT_NE(std::string(e.what()).find("test logits at position 2, token 1"), std::string::npos) << e.what();
  }
}

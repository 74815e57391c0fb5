// diff_residual_dirs on synthetic dump directories written with pfx::write_npy: identical dumps
// show no divergence, a perturbation planted at layer 3 is found at layer 3 with the earlier
// layers' deviation stated, and incomplete or mismatched dumps are errors that name the file.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cmath>
#include <filesystem>
#include <limits>
#include <string>
#include <vector>

#include "logits/residual_diff.h"
#include "util/error.h"
#include "util/npy.h"
#include "temp_dir.h"

namespace fs = std::filesystem;
using namespace pfx::gates;

namespace {

constexpr int kLayers = 6;
constexpr int64_t kTokens = 3, kEmbd = 8;

// A fresh folder per test, removed afterwards.
class ResidualDiffTest : public pfx::test::TempDirTest {
 protected:
  void SetUp() override {
    fs::create_directories(root_ / "fast");
    fs::create_directories(root_ / "generic");
  }

  // The residual of layer `layer`: smooth values of magnitude ~layer+1, the same in every dump.
  static std::vector<float> residual(int layer) {
    std::vector<float> v(kTokens * kEmbd);
    for (size_t i = 0; i < v.size(); ++i) v[i] = static_cast<float>((layer + 1) * std::sin(0.7 * static_cast<double>(i) + layer));
    return v;
  }
  void write(const std::string& run, int layer, const std::vector<float>& v, std::vector<int64_t> shape = {kTokens, kEmbd}) {
    pfx::write_npy(root_ / run / pfx::contract::residual_dump_file_name(layer, 0), v.data(), shape);
  }
  void write_identical() {
    for (int l = 0; l < kLayers; ++l) {
      write("fast", l, residual(l));
      write("generic", l, residual(l));
    }
  }
  ResidualDiff diff(double bound = 1e-5) { return diff_residual_dirs(root_ / "fast", root_ / "generic", bound); }
  std::string error_of(double bound = 1e-5) {
    try {
      diff(bound);
    } catch (const pfx::Error& e) {
      return e.what();
    }
    return "(no error)";
  }
};

bool has(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

}  // namespace

TEST_F(ResidualDiffTest, IdenticalDumpsHaveNoDivergence) {
  write_identical();
  const auto d = diff();
  ASSERT_EQ(d.layers.size(), static_cast<size_t>(kLayers));
  EXPECT_EQ(d.first_diverging, -1);
  for (int l = 0; l < kLayers; ++l) {
    EXPECT_EQ(d.layers[static_cast<size_t>(l)].layer, l);
    EXPECT_EQ(d.layers[static_cast<size_t>(l)].max_rel, 0.0);
    EXPECT_EQ(d.layers[static_cast<size_t>(l)].nmse, 0.0);
  }
  EXPECT_TRUE(has(describe(d), "residual stream within 1.00e-05 through blk.5")) << describe(d);
  EXPECT_TRUE(to_json(d)["first_diverging_layer"].is_null());
}

TEST_F(ResidualDiffTest, PerturbationAtLayerThreeIsTheFirstDivergence) {
  // Layers 0-2 carry rounding-size noise (below the bound), layer 3 onwards a real deviation that
  // grows as later layers build on it.
  std::vector<float> test3, ref3;
  for (int l = 0; l < kLayers; ++l) {
    auto ref = residual(l);
    auto test = ref;
    const double scale = static_cast<double>(l + 1);  // max |ref| of this layer, about
    if (l < 3) test[5] += static_cast<float>(1e-7 * scale * (l + 1));
    else for (size_t i = 0; i < test.size(); i += 4) test[i] += static_cast<float>(1e-3 * scale * (l - 2));
    write("fast", l, test);
    write("generic", l, ref);
    if (l == 3) test3 = test, ref3 = ref;
  }
  const auto d = diff(1e-5);
  ASSERT_EQ(d.first_diverging, 3);
  EXPECT_EQ(d.layers[3].layer, 3);
  EXPECT_GT(d.layers[3].max_rel, 1e-4);
  EXPECT_LT(d.max_rel_before, 1e-6);
  EXPECT_GT(d.max_rel_before, 0.0);
  // The NMSE is the shared logits metric's: sum Δ² / sum ref², worked out here from what was written.
  double sq_diff = 0, sq_ref = 0;
  for (size_t i = 0; i < ref3.size(); ++i) {
    const double delta = static_cast<double>(test3[i]) - ref3[i];
    sq_diff += delta * delta;
    sq_ref += static_cast<double>(ref3[i]) * ref3[i];
  }
  EXPECT_NEAR(d.layers[3].nmse, sq_diff / sq_ref, 1e-12);
  const std::string text = describe(d);
  EXPECT_TRUE(has(text, "first diverging layer blk.3 (max-rel ")) << text;
  EXPECT_TRUE(has(text, "; blk.0-2 ≤ ")) << text;
  const auto j = to_json(d);
  EXPECT_EQ(j["first_diverging_layer"], 3);
  ASSERT_EQ(j["layers"].size(), static_cast<size_t>(kLayers));
  EXPECT_EQ(j["layers"][3]["layer"], 3);
  EXPECT_DOUBLE_EQ(j["layers"][3]["max_rel"].get<double>(), d.layers[3].max_rel);
  EXPECT_TRUE(j["layers"][3].contains("nmse"));
  // A bound above every layer's deviation: no divergence.
  EXPECT_EQ(diff(1.0).first_diverging, -1);
}

TEST_F(ResidualDiffTest, NonFiniteValueCountsAsDivergence) {
  write_identical();
  auto v = residual(1);
  v[2] = std::numeric_limits<float>::quiet_NaN();
  write("fast", 1, v);
  const auto d = diff();
  EXPECT_EQ(d.first_diverging, 1);
  EXPECT_TRUE(d.layers[1].non_finite);
  EXPECT_TRUE(has(describe(d), "first diverging layer blk.1 (NaN/inf; blk.0 ≤ 0.00e+00)")) << describe(d);
}

TEST_F(ResidualDiffTest, DivergenceAtLayerZeroSaysSo) {
  write_identical();
  auto v = residual(0);
  v[0] += 0.5f;
  write("fast", 0, v);
  const auto d = diff();
  EXPECT_EQ(d.first_diverging, 0);
  EXPECT_TRUE(has(describe(d), "first diverging layer blk.0 (max-rel ")) << describe(d);
  EXPECT_TRUE(has(describe(d), "already at the first layer")) << describe(d);
}

TEST_F(ResidualDiffTest, OtherPromptOffsetsAndFilesAreIgnored) {
  write_identical();
  pfx::write_npy(root_ / "fast" / pfx::contract::residual_dump_file_name(0, 512), residual(0).data(), {kTokens, kEmbd});
  std::vector<float> junk(kTokens * kEmbd, 9.f);
  pfx::write_npy(root_ / "fast" / "notes.npy", junk.data(), {kTokens, kEmbd});
  EXPECT_EQ(diff().layers.size(), static_cast<size_t>(kLayers));
}

TEST_F(ResidualDiffTest, MissingLayerFileInOneDumpIsNamed) {
  write_identical();
  fs::remove(root_ / "generic" / "blk.4.pos0.npy");
  const std::string e = error_of();
  EXPECT_TRUE(has(e, (root_ / "generic" / "blk.4.pos0.npy").string() + ": missing")) << e;
  EXPECT_TRUE(has(e, (root_ / "fast" / "blk.4.pos0.npy").string() + " exists")) << e;
  // and the other way round
  write("generic", 4, residual(4));
  fs::remove(root_ / "fast" / "blk.2.pos0.npy");
  EXPECT_TRUE(has(error_of(), (root_ / "fast" / "blk.2.pos0.npy").string() + ": missing")) << error_of();
}

TEST_F(ResidualDiffTest, GapInBothDumpsIsAnError) {
  write_identical();
  fs::remove(root_ / "fast" / "blk.1.pos0.npy");
  fs::remove(root_ / "generic" / "blk.1.pos0.npy");
  const std::string e = error_of();
  EXPECT_TRUE(has(e, "blk.1.pos0.npy: missing in both dumps")) << e;
}

TEST_F(ResidualDiffTest, ShapeMismatchNamesBothFiles) {
  write_identical();
  std::vector<float> longer(static_cast<size_t>((kTokens + 1) * kEmbd), 1.f);
  write("fast", 2, longer, {kTokens + 1, kEmbd});
  const std::string e = error_of();
  EXPECT_TRUE(has(e, (root_ / "fast" / "blk.2.pos0.npy").string() + ": shape [4,8] but ")) << e;
  EXPECT_TRUE(has(e, (root_ / "generic" / "blk.2.pos0.npy").string() + " has [3,8]")) << e;
  // Not [tokens, n_embd] at all
  write("fast", 2, residual(2), {kTokens * kEmbd});
  EXPECT_TRUE(has(error_of(), "expected float32 [tokens, n_embd]")) << error_of();
}

TEST_F(ResidualDiffTest, EmptyOrMissingDirectoryIsAnError) {
  EXPECT_TRUE(has(error_of(), (root_ / "fast").string() + ": no blk.N.pos0.npy files")) << error_of();
  for (int l = 0; l < kLayers; ++l) write("fast", l, residual(l));
  fs::remove_all(root_ / "generic");
  EXPECT_TRUE(has(error_of(), (root_ / "generic").string() + ": not a directory")) << error_of();
}

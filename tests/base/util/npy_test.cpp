#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "util/error.h"
#include "util/fixtures.h"
#include "util/npy.h"

namespace fs = std::filesystem;

TEST(Npy, RoundTripsFloat32) {
  const fs::path p = fs::temp_directory_path() / "pfx_npy_roundtrip.npy";
  const std::vector<float> v = {1.f, -2.5f, 3.25f, 0.f, 1e-7f, 6.f};
  pfx::write_npy(p, v.data(), {2, 3});
  const auto a = pfx::read_npy(p);
  ASSERT_EQ(a.shape, (std::vector<int64_t>{2, 3}));
  EXPECT_EQ(a.data, v);
  fs::remove(p);
}

TEST(Npy, RefusesOverwriteWhenAsked) {
  const fs::path p = fs::temp_directory_path() / "pfx_npy_nooverwrite.npy";
  const float x = 1.f;
  pfx::write_npy(p, &x, {1});
  EXPECT_THROW(pfx::write_npy(p, &x, {1}, /*overwrite=*/false), pfx::Error);
  fs::remove(p);
}

TEST(Npy, RejectsGarbageWithFileName) {
  const fs::path p = fs::temp_directory_path() / "pfx_npy_garbage.npy";
  std::ofstream(p) << "not numpy";
  try {
    pfx::read_npy(p);
    FAIL() << "expected an error";
  } catch (const pfx::Error& e) {
    EXPECT_NE(std::string(e.what()).find("pfx_npy_garbage.npy"), std::string::npos) << e.what();
  }
  fs::remove(p);
}

TEST(Npy, ReadsTheFixtureLogits) {
  const fs::path p = pfx::fixtures_dir() / "llama.cpp" / "stories260K.once.logits.npy";
  ASSERT_TRUE(fs::exists(p)) << "fixture missing: " << p << " (set PFX_FIXTURES)";
  const auto a = pfx::read_npy(p);
  ASSERT_EQ(a.shape.size(), 2u);
  EXPECT_EQ(a.shape[1], 512);
  EXPECT_EQ(static_cast<int64_t>(a.data.size()), a.shape[0] * 512);
}

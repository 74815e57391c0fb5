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

namespace {
// A v1 .npy with the given header dict and `data_bytes` zero bytes of data.
fs::path hostile_npy(const std::string& name, const std::string& dict, size_t data_bytes) {
  const fs::path p = fs::temp_directory_path() / name;
  std::string header = dict;
  while ((10 + header.size() + 1) % 64) header.push_back(' ');
  header.push_back('\n');
  std::ofstream out(p, std::ios::binary | std::ios::trunc);
  out.write("\x93NUMPY\x01\x00", 8);
  const char hl[2] = {static_cast<char>(header.size() & 0xff), static_cast<char>(header.size() >> 8)};
  out.write(hl, 2);
  out << header << std::string(data_bytes, '\0');
  return p;
}

std::string npy_error(const fs::path& p) {
  try {
    (void)pfx::read_npy(p);
  } catch (const pfx::Error& e) {
    return e.what();
  }
  return "(no error)";
}
}  // namespace

// The case: a 20-digit dimension used to end in "stoll"; a product past the file's data
// used to be allocated. Both are now errors naming the file and the shape, before any allocation.
TEST(Npy, OversizedShapesAreClearErrors) {
  const fs::path digits = hostile_npy("pfx_npy_digits.npy", "{'descr': '<f4', 'fortran_order': False, 'shape': (99999999999999999999999, 2), }", 8);
  std::string msg = npy_error(digits);
  EXPECT_NE(msg.find("pfx_npy_digits.npy"), std::string::npos) << msg;
  EXPECT_NE(msg.find("does not fit a 64-bit count"), std::string::npos) << msg;
  const fs::path product = hostile_npy("pfx_npy_product.npy", "{'descr': '<f4', 'fortran_order': False, 'shape': (4294967296, 4294967296), }", 8);
  msg = npy_error(product);
  EXPECT_NE(msg.find("needs more data than the 8 bytes after the header"), std::string::npos) << msg;
  const fs::path big = hostile_npy("pfx_npy_big.npy", "{'descr': '<f8', 'fortran_order': False, 'shape': (1000000, 1000), }", 64);
  msg = npy_error(big);
  EXPECT_NE(msg.find("'(1000000, 1000)'"), std::string::npos) << msg;
  for (const auto& p : {digits, product, big}) fs::remove(p);
}

TEST(Npy, HostileHeadersAreClearErrors) {
  const fs::path esc = hostile_npy("pfx_npy_esc.npy", "{'descr': '\x1b[2J', 'fortran_order': False, 'shape': (1,), }", 4);
  const std::string msg = npy_error(esc);
  EXPECT_NE(msg.find("'\\x1b[2J'"), std::string::npos) << msg;  // dtype shown escaped
  EXPECT_EQ(msg.find('\x1b'), std::string::npos) << msg;
  // A header longer than numpy's limit is refused before it is read.
  const fs::path longer = hostile_npy("pfx_npy_long.npy", "{'descr': '" + std::string(20000, 'a') + "', }", 0);
  std::ofstream(longer, std::ios::binary | std::ios::in | std::ios::out).seekp(8).write("\x30\x75", 2);  // 30000
  EXPECT_NE(npy_error(longer).find("exceeds 10000 bytes"), std::string::npos) << npy_error(longer);
  fs::remove(esc);
  fs::remove(longer);
}

// Dequantization bit for bit against gguf-py (llama.cpp's own Python reader, whose numpy
// dequantizers follow ggml's definitions): every tensor of every fixture model, plus synthetic
// tensors holding random blocks of each supported format and every f16/bf16 bit pattern.
// Expected values are produced at test time by tests/engine/gguf/gguf_py_dump.py.
#include <gtest/gtest.h>

#include <iostream>
#include <map>
#include <random>

#include "engine/gguf/gguf_py_dump.h"
#include "engine/gguf/python_runner.h"
#include "gguf/gguf.h"
#include "gguf/writer.h"
#include "quant/blocks.h"
#include "quant/dequant.h"
#include "quant/fp16.h"
#include "util/error.h"
#include "util/fixtures.h"
#include "util/npy.h"

namespace fs = std::filesystem;
using pfx::gguf::File;
using pfx::quant::Type;

namespace {

// Compares every tensor of `path` with gguf-py's dequantization; returns elements compared per type.
std::map<Type, int64_t> compare_file_with_gguf_py(const fs::path& path, bool nan_payload_free) {
  std::map<Type, int64_t> compared;
  const File f = File::open(path);
  pfx::test::TempDir dir("dequant_dump");
  std::string error;
  const auto py = pfx::test::gguf_py_dump(path, dir.path(), &error);
  if (!py) {
    ADD_FAILURE() << error;
    return compared;
  }
  if (py->tensors.size() != f.tensors().size()) {
    ADD_FAILURE() << path << ": gguf-py sees " << py->tensors.size() << " tensors, we see " << f.tensors().size();
    return compared;
  }
  for (size_t k = 0; k < f.tensors().size(); ++k) {
    const auto& t = f.tensors()[k];
    SCOPED_TRACE(path.filename().string() + ": " + t.name + " (" + std::string(pfx::quant::type_name(t.type)) + ")");
    EXPECT_EQ(py->tensors[k].name, t.name);
    if (!py->tensors[k].npy) {
      ADD_FAILURE() << "gguf-py cannot dequantize this tensor's type";
      continue;
    }
    const auto want = pfx::read_npy(*py->tensors[k].npy);
    std::vector<float> got(static_cast<size_t>(t.n_elements));
    pfx::quant::dequantize_row(t.type, f.tensor_data(t), got.data(), t.n_elements);
    const std::string diff = pfx::test::bitwise_diff(want.data, got.data(), t.n_elements, nan_payload_free);
    EXPECT_EQ(diff, "");
    if (diff.empty()) compared[t.type] += t.n_elements;
  }
  return compared;
}

uint16_t random_finite_half(std::mt19937& rng) {
  for (;;) {
    const auto h = static_cast<uint16_t>(rng());
    if ((h & 0x7C00) != 0x7C00) return h;
  }
}

// Random bytes for n blocks of a format, with the fp16 scale fields replaced by finite values.
template <class Block>
std::vector<uint8_t> random_blocks(int64_t n, uint32_t seed, void (*fix)(Block&, std::mt19937&)) {
  std::mt19937 rng(seed);
  std::vector<Block> blocks(static_cast<size_t>(n));
  auto* raw = reinterpret_cast<uint8_t*>(blocks.data());
  for (size_t i = 0; i < blocks.size() * sizeof(Block); ++i) raw[i] = static_cast<uint8_t>(rng());
  for (auto& b : blocks) fix(b, rng);
  return std::vector<uint8_t>(raw, raw + blocks.size() * sizeof(Block));
}

}  // namespace

TEST(DequantBitExact, EveryFixtureTensorMatchesGgufPy) {
  std::map<Type, int64_t> total;
  int files = 0;
  for (const auto& e : fs::directory_iterator(pfx::fixtures_dir() / "models")) {
    if (e.path().extension() != ".gguf") continue;
    ++files;
    for (const auto& [type, n] : compare_file_with_gguf_py(e.path(), false)) total[type] += n;
  }
  ASSERT_GE(files, 6) << "fixture models missing under " << pfx::fixtures_dir();
  for (Type t : {Type::F32, Type::F16, Type::Q8_0, Type::Q4_K, Type::Q6_K}) {
    EXPECT_GT(total[t], 0) << "no " << pfx::quant::type_name(t) << " tensor was compared";
  }
  for (const auto& [type, n] : total) {
    std::cout << "  bit-exact vs gguf-py: " << pfx::quant::type_name(type) << " " << n << " values\n";
  }
}

TEST(DequantBitExact, SyntheticBlocksAndAllHalfPatternsMatchGgufPy) {
  using namespace pfx::quant;
  pfx::test::TempDir dir("dequant_synth");
  pfx::gguf::Writer w;
  struct Blob {
    std::string name;
    std::vector<int64_t> dims;
    Type type;
    std::vector<uint8_t> bytes;
  };
  std::vector<Blob> blobs;
  std::vector<uint8_t> all_halves(65536 * 2);
  for (uint32_t h = 0; h < 65536; ++h) std::memcpy(&all_halves[h * 2], &h, 2);
  blobs.push_back({"f16.all", {65536}, Type::F16, all_halves});
  blobs.push_back({"bf16.all", {65536}, Type::BF16, all_halves});
  blobs.push_back({"q4_0.rand", {32 * 8, 64}, Type::Q4_0,
                   random_blocks<BlockQ4_0>(8 * 64, 1, [](BlockQ4_0& b, std::mt19937& r) { b.d = random_finite_half(r); })});
  blobs.push_back({"q4_1.rand", {32 * 8, 64}, Type::Q4_1, random_blocks<BlockQ4_1>(8 * 64, 6, [](BlockQ4_1& b, std::mt19937& r) {
                     b.d = random_finite_half(r);
                     b.m = random_finite_half(r);
                   })});
  blobs.push_back({"q5_0.rand", {32 * 8, 64}, Type::Q5_0,
                   random_blocks<BlockQ5_0>(8 * 64, 7, [](BlockQ5_0& b, std::mt19937& r) { b.d = random_finite_half(r); })});
  blobs.push_back({"q5_1.rand", {32 * 8, 64}, Type::Q5_1, random_blocks<BlockQ5_1>(8 * 64, 8, [](BlockQ5_1& b, std::mt19937& r) {
                     b.d = random_finite_half(r);
                     b.m = random_finite_half(r);
                   })});
  blobs.push_back({"q8_0.rand", {32 * 8, 64}, Type::Q8_0,
                   random_blocks<BlockQ8_0>(8 * 64, 2, [](BlockQ8_0& b, std::mt19937& r) { b.d = random_finite_half(r); })});
  blobs.push_back({"q4_K.rand", {256 * 4, 32}, Type::Q4_K, random_blocks<BlockQ4_K>(4 * 32, 3, [](BlockQ4_K& b, std::mt19937& r) {
                     b.d = random_finite_half(r);
                     b.dmin = random_finite_half(r);
                   })});
  blobs.push_back({"q5_K.rand", {256 * 4, 32}, Type::Q5_K, random_blocks<BlockQ5_K>(4 * 32, 4, [](BlockQ5_K& b, std::mt19937& r) {
                     b.d = random_finite_half(r);
                     b.dmin = random_finite_half(r);
                   })});
  blobs.push_back({"q6_K.rand", {256 * 4, 32}, Type::Q6_K,
                   random_blocks<BlockQ6_K>(4 * 32, 5, [](BlockQ6_K& b, std::mt19937& r) { b.d = random_finite_half(r); })});
  for (const auto& b : blobs) {
    const auto* bytes = &b.bytes;
    w.add_tensor(b.name, b.dims, b.type, [bytes](uint8_t* dst) { std::memcpy(dst, bytes->data(), bytes->size()); });
  }
  const fs::path path = dir / "synthetic.gguf";
  w.write(path);
  // numpy may convert f16 through the CPU's F16C unit, which quiets signaling NaNs; NaN payload
  // is then compared loosely for f16 only (bf16 and every non-NaN value are compared bit for bit).
  const auto compared = compare_file_with_gguf_py(path, /*nan_payload_free=*/true);
  for (Type t : {Type::F16, Type::BF16, Type::Q4_0, Type::Q4_1, Type::Q5_0, Type::Q5_1, Type::Q8_0, Type::Q4_K,
                 Type::Q5_K, Type::Q6_K}) {
    EXPECT_GT(compared.count(t) ? compared.at(t) : 0, 0) << type_name(t);
  }
  // bf16 NaNs bit for bit too: gguf-py shifts the bits, so there is no excuse for a difference.
  const File f = File::open(path);
  const auto& bf = f.tensor("bf16.all");
  for (uint32_t h = 0; h < 65536; ++h) {
    float y;
    dequantize_row(Type::BF16, f.tensor_data(bf) + 2 * h, &y, 1);
    ASSERT_EQ(pfx::test::bits_of(y), h << 16);
  }
}

TEST(Dequant, Q8KIsScaleTimesQuant) {
  using namespace pfx::quant;
  BlockQ8_K b{};
  b.d = 0.037f;
  for (int i = 0; i < QK_K; ++i) b.qs[i] = static_cast<int8_t>(i - 128);
  float y[QK_K];
  dequantize_row(Type::Q8_K, &b, y, QK_K);
  for (int i = 0; i < QK_K; ++i) ASSERT_EQ(y[i], 0.037f * static_cast<float>(i - 128));
}

TEST(Dequant, GetScaleMinK4UnpacksSixBitFields) {
  // Pack 8 known (scale, min) pairs the way q4_K stores them, then unpack.
  uint8_t q[12] = {};
  const uint8_t sc[8] = {1, 63, 17, 42, 5, 60, 33, 48}, mn[8] = {62, 0, 9, 31, 63, 7, 50, 21};
  for (int j = 0; j < 8; ++j) {
    if (j < 4) {
      q[j] = sc[j];
      q[j + 4] = mn[j];
    } else {
      q[j + 4] = static_cast<uint8_t>((sc[j] & 0xF) | ((mn[j] & 0xF) << 4));
      q[j - 4] = static_cast<uint8_t>(q[j - 4] | ((sc[j] >> 4) << 6));
      q[j] = static_cast<uint8_t>(q[j] | ((mn[j] >> 4) << 6));
    }
  }
  for (int j = 0; j < 8; ++j) {
    uint8_t d, m;
    pfx::quant::get_scale_min_k4(j, q, &d, &m);
    EXPECT_EQ(d, sc[j]) << j;
    EXPECT_EQ(m, mn[j]) << j;
  }
}

TEST(Dequant, UnsupportedTypesAndBadLengthsThrow) {
  std::vector<uint8_t> src(4096);
  std::vector<float> dst(1024);
  EXPECT_THROW(pfx::quant::dequantize_row(Type::Q2_K, src.data(), dst.data(), 256), pfx::Error);
  EXPECT_THROW(pfx::quant::dequantize_row(Type::IQ4_XS, src.data(), dst.data(), 256), pfx::Error);
  EXPECT_THROW(pfx::quant::dequantize_row(Type::Q4_K, src.data(), dst.data(), 100), pfx::Error);
  EXPECT_THROW(pfx::quant::dequantize_row(static_cast<Type>(4), src.data(), dst.data(), 32), pfx::Error);
}

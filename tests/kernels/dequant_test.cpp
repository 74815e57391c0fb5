// GPU weight decoding (dequant_to_f16 / dequant_to_f32 / embed_tokens) against the reference
// dequantizer pfx::quant::dequantize_row, bit for bit, on random blocks of every supported type.
#include <gtest/gtest.h>

#include <cstring>

#include "gpu_test_support.h"
#include "kernels/kernels.h"
#include "quant/blocks.h"
#include "quant/dequant.h"
#include "quant/types.h"
#include "util/error.h"

namespace pfx::kernels::test {
namespace {

using quant::Type;

// Random finite fp16 bits of magnitude in [2^-12, 2^2): realistic block scales, never zero.
uint16_t random_scale_bits() {
  const float mag = std::ldexp(uniform(1.0f, 2.0f), static_cast<int>(rng()() % 14) - 12);
  return float_to_half((rng()() & 1) ? -mag : mag);
}

// rows x cols elements of `type` in GGUF layout: random bytes everywhere, then the fp16 scale
// fields (d, dmin) set to finite values so the reference has no inf/NaN.
std::vector<uint8_t> random_tensor(Type type, int64_t rows, int64_t cols) {
  const int64_t bytes = rows * quant::row_bytes(type, cols);
  std::vector<uint8_t> data(static_cast<size_t>(bytes));
  for (auto& b : data) b = static_cast<uint8_t>(rng()());
  const int64_t n = rows * cols;
  // Every block's fp16 scale d, then its m (q4_1, q5_1) or dmin (q4_K, q5_K) where it has one.
  auto scales = [&](auto* blocks, int64_t block_size) {
    for (int64_t i = 0; i < n / block_size; ++i) {
      auto& b = blocks[i];
      b.d = random_scale_bits();
      if constexpr (requires { b.m; }) b.m = random_scale_bits();
      if constexpr (requires { b.dmin; }) b.dmin = random_scale_bits();
    }
  };
  switch (type) {
    case Type::F32: {
      auto* f = reinterpret_cast<float*>(data.data());
      for (int64_t i = 0; i < n; ++i) {
        // Mostly ordinary values, some beyond the fp16 range (-> inf) and some in its subnormal range.
        const int kind = static_cast<int>(rng()() % 10);
        f[i] = kind == 0 ? uniform(-1e5f, 1e5f) : kind == 1 ? uniform(-1e-6f, 1e-6f) : uniform(-4.0f, 4.0f);
      }
      break;
    }
    case Type::F16: {
      auto* h = reinterpret_cast<uint16_t*>(data.data());
      for (int64_t i = 0; i < n; ++i)
        if (((h[i] >> 10) & 0x1F) == 0x1F) h[i] &= 0xBFFF;  // no inf/NaN: clear the exponent's top bit
      break;
    }
    case Type::BF16: {
      auto* h = reinterpret_cast<uint16_t*>(data.data());
      for (int64_t i = 0; i < n; ++i)
        if (((h[i] >> 7) & 0xFF) == 0xFF) h[i] &= 0xBFFF;
      break;
    }
    case Type::Q8_0: scales(reinterpret_cast<quant::BlockQ8_0*>(data.data()), 32); break;
    case Type::Q4_0: scales(reinterpret_cast<quant::BlockQ4_0*>(data.data()), 32); break;
    case Type::Q5_0: scales(reinterpret_cast<quant::BlockQ5_0*>(data.data()), 32); break;
    case Type::Q4_1: scales(reinterpret_cast<quant::BlockQ4_1*>(data.data()), 32); break;
    case Type::Q5_1: scales(reinterpret_cast<quant::BlockQ5_1*>(data.data()), 32); break;
    case Type::Q4_K: scales(reinterpret_cast<quant::BlockQ4_K*>(data.data()), 256); break;
    case Type::Q5_K: scales(reinterpret_cast<quant::BlockQ5_K*>(data.data()), 256); break;
    case Type::Q6_K: scales(reinterpret_cast<quant::BlockQ6_K*>(data.data()), 256); break;
    default: ADD_FAILURE() << "random_tensor: no generator for " << quant::type_name(type);
  }
  return data;
}

std::vector<float> reference(Type type, const std::vector<uint8_t>& data, int64_t rows, int64_t cols) {
  std::vector<float> out(static_cast<size_t>(rows * cols));
  const int64_t rb = quant::row_bytes(type, cols);
  for (int64_t r = 0; r < rows; ++r) quant::dequantize_row(type, data.data() + r * rb, out.data() + r * cols, cols);
  return out;
}

struct Case {
  Type type;
  std::vector<std::pair<int64_t, int64_t>> shapes;  // rows, cols
};

std::vector<Case> cases() {
  const std::vector<std::pair<int64_t, int64_t>> k256 = {{1, 256}, {7, 512}, {33, 4096}, {3, 11008}};
  const std::vector<std::pair<int64_t, int64_t>> k32 = {{1, 32}, {7, 96}, {33, 4096}, {5, 11008}};
  const std::vector<std::pair<int64_t, int64_t>> k1 = {{1, 1}, {7, 13}, {1, 8}, {33, 4096}, {3, 1001}};
  return {{Type::F32, k1},  {Type::F16, k1},  {Type::BF16, k1}, {Type::Q8_0, k32},  {Type::Q4_0, k32},
          {Type::Q4_1, k32}, {Type::Q5_0, k32}, {Type::Q5_1, k32}, {Type::Q4_K, k256}, {Type::Q5_K, k256},
          {Type::Q6_K, k256}};
}

class DequantTest : public ::testing::TestWithParam<Case> {};

TEST_P(DequantTest, BitExactToF16AndF32) {
  PFX_REQUIRE_GPU();
  const Case& c = GetParam();
  Stream stream;
  for (const auto& [rows, cols] : c.shapes) {
    SCOPED_TRACE(std::string(quant::type_name(c.type)) + " " + std::to_string(rows) + "x" + std::to_string(cols));
    const auto data = random_tensor(c.type, rows, cols);
    const auto ref = reference(c.type, data, rows, cols);
    DeviceBuffer<uint8_t> w(data);
    DeviceBuffer<uint16_t> out16(ref.size());
    DeviceBuffer<float> out32(ref.size());
    out16.poison();
    out32.poison();
    const auto id = static_cast<uint32_t>(c.type);
    dequant_to_f16(id, w.get(), out16.get(), rows, cols, stream.get());
    dequant_to_f32(id, w.get(), out32.get(), rows, cols, stream.get());
    stream.sync();

    std::vector<uint16_t> want16(ref.size());
    if (c.type == Type::F16) {
      std::memcpy(want16.data(), data.data(), want16.size() * 2);  // the identity on the bits
    } else {
      for (size_t i = 0; i < ref.size(); ++i) want16[i] = float_to_half(ref[i]);
    }
    EXPECT_TRUE(compare_bits("fp16 out", out16.download(), want16));
    EXPECT_TRUE(compare_bits("fp32 out", out32.download(), ref));
  }
}

INSTANTIATE_TEST_SUITE_P(Types, DequantTest, ::testing::ValuesIn(cases()),
                         [](const auto& tp) { return std::string(quant::type_name(tp.param.type)); });

TEST(Dequant, RejectsUnsupportedTypeAndShape) {
  // Checked on the host before any CUDA call: runs without a GPU too.
  uint16_t dummy[16] = {};
  EXPECT_THROW(dequant_to_f16(static_cast<uint32_t>(Type::Q2_K), dummy, dummy, 1, 256, nullptr), pfx::Error);
  EXPECT_THROW(dequant_to_f16(static_cast<uint32_t>(Type::Q4_K), dummy, dummy, 1, 100, nullptr), pfx::Error);
  EXPECT_THROW(dequant_to_f32(9999u, dummy, reinterpret_cast<float*>(dummy), 1, 32, nullptr), pfx::Error);
  EXPECT_FALSE(dequant_supported(static_cast<uint32_t>(Type::Q3_K)));
  EXPECT_TRUE(dequant_supported(static_cast<uint32_t>(Type::Q6_K)));
}

class EmbedTest : public ::testing::TestWithParam<Type> {};

TEST_P(EmbedTest, RowsMatchReferenceAndBadIdsGiveNaN) {
  PFX_REQUIRE_GPU();
  const Type type = GetParam();
  const int64_t vocab = 97;
  const int D = 512;
  const auto table = random_tensor(type, vocab, D);
  const auto ref = reference(type, table, vocab, D);
  DeviceBuffer<uint8_t> w(table);
  Stream stream;
  for (int T : {1, 7, 33, 512}) {
    SCOPED_TRACE("T=" + std::to_string(T));
    std::vector<int32_t> ids(static_cast<size_t>(T));
    for (auto& id : ids) id = static_cast<int32_t>(rng()() % vocab);
    ids.back() = static_cast<int32_t>(vocab - 1);  // the last row of the table
    const bool with_bad = T >= 7;
    if (with_bad) ids[3] = static_cast<int32_t>(vocab);  // out of range -> NaN row
    DeviceBuffer<int32_t> d_ids(ids);
    DeviceBuffer<float> x(static_cast<size_t>(T) * D);
    x.poison();
    embed_tokens(static_cast<uint32_t>(type), w.get(), vocab, d_ids.get(), T, D, x.get(), stream.get());
    stream.sync();
    const auto got = x.download();
    std::vector<float> want(got.size());
    std::vector<float> got_valid, want_valid;
    for (int t = 0; t < T; ++t) {
      if (with_bad && t == 3) {
        for (int d = 0; d < D; ++d) EXPECT_TRUE(std::isnan(got[static_cast<size_t>(t) * D + d])) << "bad id row, d=" << d;
        continue;
      }
      for (int d = 0; d < D; ++d) {
        got_valid.push_back(got[static_cast<size_t>(t) * D + d]);
        want_valid.push_back(ref[static_cast<size_t>(ids[t]) * D + d]);
      }
    }
    EXPECT_TRUE(compare_bits("embedding rows", got_valid, want_valid));
  }
}

INSTANTIATE_TEST_SUITE_P(Types, EmbedTest,
                         ::testing::Values(Type::F32, Type::F16, Type::BF16, Type::Q8_0, Type::Q4_0, Type::Q4_1,
                                           Type::Q5_0, Type::Q5_1, Type::Q4_K, Type::Q5_K, Type::Q6_K),
                         [](const auto& tp) { return std::string(quant::type_name(tp.param)); });

}  // namespace
}  // namespace pfx::kernels::test

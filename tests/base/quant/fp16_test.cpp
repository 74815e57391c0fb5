// fp16/bf16 scalar conversions: exhaustive against the compiler's IEEE _Float16 (round to
// nearest even) and against ggml's documented bf16 rounding and NaN rules.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>

#include "quant/fp16.h"

using namespace pfx::quant;

namespace {
uint32_t bits(float f) {
  uint32_t u;
  std::memcpy(&u, &f, 4);
  return u;
}
float from_bits(uint32_t u) {
  float f;
  std::memcpy(&f, &u, 4);
  return f;
}
}  // namespace

#if defined(__FLT16_MAX__)
TEST(Fp16, ToFp32IsExactForAllHalfValues) {
  for (uint32_t h = 0; h <= 0xFFFF; ++h) {
    const uint16_t hb = static_cast<uint16_t>(h);
    _Float16 ref;
    std::memcpy(&ref, &hb, 2);
    const float want = static_cast<float>(ref);
    const float got = fp16_to_fp32(hb);
    if (std::isnan(want)) {
      ASSERT_TRUE(std::isnan(got)) << std::hex << h;
      // Payload and sign kept: the top mantissa bits are the half's mantissa.
      ASSERT_EQ(bits(got), (static_cast<uint32_t>(h & 0x8000) << 16) | 0x7F800000u | ((h & 0x3FFu) << 13)) << std::hex << h;
    } else {
      ASSERT_EQ(bits(got), bits(want)) << std::hex << h;
    }
  }
}

TEST(Fp16, FromFp32RoundsToNearestEvenLikeIeee) {
  // Every 331st float bit pattern (covers all exponents, subnormals, ties by the checks below).
  for (uint64_t u = 0; u <= 0xFFFFFFFFull; u += 331) {
    const float f = from_bits(static_cast<uint32_t>(u));
    if (std::isnan(f)) continue;
    const _Float16 ref = static_cast<_Float16>(f);
    uint16_t want;
    std::memcpy(&want, &ref, 2);
    ASSERT_EQ(fp32_to_fp16(f), want) << std::hex << u;
  }
  // Exact ties and boundaries.
  const float cases[] = {0.f, -0.f, 1.f, 1.f + 0x1p-11f, 1.f + 3 * 0x1p-11f, 65504.f, 65519.99f, 65520.f, 1e9f,
                         0x1p-14f, 0x1p-24f, 0x1p-25f, 0x1.8p-25f, 0x1p-26f, 3 * 0x1p-25f, 0x1.ffcp-15f,
                         std::numeric_limits<float>::infinity(), -std::numeric_limits<float>::infinity(),
                         std::numeric_limits<float>::denorm_min()};
  for (float f : cases) {
    const _Float16 ref = static_cast<_Float16>(f);
    uint16_t want;
    std::memcpy(&want, &ref, 2);
    EXPECT_EQ(fp32_to_fp16(f), want) << f;
  }
}
#else
TEST(Fp16, CompilerHasFloat16) { GTEST_SKIP() << "this compiler has no _Float16; exhaustive checks need it"; }
#endif

TEST(Fp16, RoundTripsEveryNonNanHalf) {
  for (uint32_t h = 0; h <= 0xFFFF; ++h) {
    const float f = fp16_to_fp32(static_cast<uint16_t>(h));
    if (std::isnan(f)) continue;
    ASSERT_EQ(fp32_to_fp16(f), h) << std::hex << h;
  }
}

TEST(Fp16, NanBecomesGgmlQuietNan) {
  EXPECT_EQ(fp32_to_fp16(std::numeric_limits<float>::quiet_NaN()), 0x7E00);
  EXPECT_EQ(fp32_to_fp16(-std::numeric_limits<float>::quiet_NaN()), 0xFE00);
  EXPECT_EQ(fp32_to_fp16(from_bits(0x7F800001u)), 0x7E00);  // signaling NaN with a tiny payload
}

TEST(Bf16, ToFp32IsTheHighHalf) {
  for (uint32_t h = 0; h <= 0xFFFF; ++h) ASSERT_EQ(bits(bf16_to_fp32(static_cast<uint16_t>(h))), h << 16);
}

TEST(Bf16, FromFp32RoundsToNearestEven) {
  EXPECT_EQ(fp32_to_bf16(1.f), 0x3F80);
  EXPECT_EQ(fp32_to_bf16(from_bits(0x3F808000u)), 0x3F80);  // tie, even stays
  EXPECT_EQ(fp32_to_bf16(from_bits(0x3F818000u)), 0x3F82);  // tie, odd rounds up
  EXPECT_EQ(fp32_to_bf16(from_bits(0x3F808001u)), 0x3F81);  // above the tie
  EXPECT_EQ(fp32_to_bf16(from_bits(0x7F7FFFFFu)), 0x7F80);  // FLT_MAX rounds to inf
  EXPECT_EQ(fp32_to_bf16(-0.f), 0x8000);
  // Exhaustive check of the rounding rule on a sample of patterns: result is the nearer of the
  // two neighbouring bf16 values, ties to even.
  for (uint64_t u = 0; u <= 0xFFFFFFFFull; u += 331) {
    const uint32_t x = static_cast<uint32_t>(u);
    if ((x & 0x7FFFFFFFu) >= 0x7F800000u) continue;
    const uint32_t lo = x >> 16, rem = x & 0xFFFF;
    const uint32_t want = rem > 0x8000 || (rem == 0x8000 && (lo & 1)) ? lo + 1 : lo;
    ASSERT_EQ(fp32_to_bf16(from_bits(x)), want) << std::hex << x;
  }
}

TEST(Bf16, NanStaysNanAndQuiet) {
  // 0x7F800001 would truncate to 0x7F80 (inf) without the forced quiet bit.
  EXPECT_EQ(fp32_to_bf16(from_bits(0x7F800001u)), 0x7F80 | 64);
  EXPECT_EQ(fp32_to_bf16(from_bits(0xFFC00000u)), 0xFFC0);
  EXPECT_TRUE(std::isnan(bf16_to_fp32(fp32_to_bf16(std::numeric_limits<float>::quiet_NaN()))));
}

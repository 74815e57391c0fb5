// Scalar half-precision conversions with ggml's semantics: IEEE binary16 with round-to-nearest-
// even (as F16C and ggml's portable path give), and bfloat16 with ggml's rounding and NaN rule.
// Header-only; every function is exact and branch-light enough to call per element.
#pragma once
#include <cstdint>
#include <cstring>

namespace pfx::quant {

namespace detail {
inline uint32_t float_bits(float f) {
  uint32_t u;
  std::memcpy(&u, &f, sizeof u);
  return u;
}
inline float bits_float(uint32_t u) {
  float f;
  std::memcpy(&f, &u, sizeof f);
  return f;
}
}  // namespace detail

// binary16 → binary32; exact for every input (subnormals, ±inf, NaN payloads kept).
inline float fp16_to_fp32(uint16_t h) {
  const uint32_t sign = static_cast<uint32_t>(h & 0x8000u) << 16;
  const uint32_t exp = (h >> 10) & 0x1Fu;
  const uint32_t man = h & 0x3FFu;
  if (exp == 0x1F) return detail::bits_float(sign | 0x7F800000u | (man << 13));  // inf / NaN
  if (exp != 0) return detail::bits_float(sign | ((exp + 112u) << 23) | (man << 13));  // 127-15
  // zero or subnormal: man * 2^-24, computed exactly in float.
  const float mag = static_cast<float>(man) * detail::bits_float(0x33800000u);  // 2^-24
  return detail::bits_float(sign | detail::float_bits(mag));
}

// binary32 → binary16, round to nearest, ties to even; overflow → ±inf; NaN → sign | 0x7E00
// (ggml's portable conversion's quiet NaN).
inline uint16_t fp32_to_fp16(float f) {
  const uint32_t x = detail::float_bits(f);
  const uint16_t sign = static_cast<uint16_t>((x >> 16) & 0x8000u);
  const uint32_t mag = x & 0x7FFFFFFFu;
  if (mag > 0x7F800000u) return sign | 0x7E00u;        // NaN
  if (mag >= 0x477FF000u) return sign | 0x7C00u;       // ≥ 65520 rounds to inf (and inf itself)
  if (mag >= 0x38800000u) {                            // ≥ 2^-14: a normal half
    // Add half an ulp minus one, plus the lsb that survives, so ties go to even; a mantissa
    // carry correctly bumps the exponent. Then rebias 127 → 15 (subtract 112 << 23).
    const uint32_t rounded = mag + 0xFFFu + ((mag >> 13) & 1u);
    return sign | static_cast<uint16_t>((rounded - 0x38000000u) >> 13);
  }
  // Below the normal range: the half result is a multiple of 2^-24. Adding 0.5f puts |f| into
  // the binade whose ulp is 2^-24, so the FPU's own round-to-nearest-even does the rounding and
  // the low mantissa bits are the half's subnormal mantissa (0x400 = smallest normal is right).
  const float shifted = detail::bits_float(mag) + 0.5f;
  return sign | static_cast<uint16_t>(detail::float_bits(shifted) - 0x3F000000u);
}

// bfloat16 → binary32: the high half of the float.
inline float bf16_to_fp32(uint16_t h) { return detail::bits_float(static_cast<uint32_t>(h) << 16); }

// binary32 → bfloat16 as ggml does: round to nearest even on the dropped 16 bits; NaN keeps its
// top bits and is forced quiet (bit 6 of the result set) so truncation never makes it inf.
inline uint16_t fp32_to_bf16(float f) {
  const uint32_t x = detail::float_bits(f);
  if ((x & 0x7FFFFFFFu) > 0x7F800000u) return static_cast<uint16_t>((x >> 16) | 64u);
  return static_cast<uint16_t>((x + 0x7FFFu + ((x >> 16) & 1u)) >> 16);
}

}  // namespace pfx::quant

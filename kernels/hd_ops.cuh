// Host-device twins of the device intrinsics the bit-exact decoders use (byte permute, funnel
// shift, single-rounding fp32 and fp16x2 arithmetic, fp16 conversions, read-only loads), and
// ggml's 6-bit scale unpacking of q4_K / q5_K: every function is __host__ __device__, the device
// pass the intrinsic itself, the host pass its exact IEEE twin, so tests/kernels/gemm run the very
// decoders on the CPU against quant::dequantize_row. One set for the kernels (dequant_decode.cuh,
// gemm_fast_weights.cuh, gemm_ws_layout.cuh, gemm_fast_gemv_tile.cuh).
#pragma once
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <cmath>
#include <cstdint>
#include <cstring>

#include "quant/fp16.h"

#define PFX_HD __host__ __device__ __forceinline__
// `#pragma unroll` for the device pass only (the host compiler warns about it).
#ifdef __CUDA_ARCH__
#define PFX_HD_UNROLL _Pragma("unroll")
#else
#define PFX_HD_UNROLL
#endif

namespace pfx::kernels::dev {

PFX_HD uint32_t byte_perm(uint32_t x, uint32_t y, uint32_t s) {
#ifdef __CUDA_ARCH__
  return __byte_perm(x, y, s);
#else
  const uint64_t v = (static_cast<uint64_t>(y) << 32) | x;
  uint32_t r = 0;
  for (int i = 0; i < 4; ++i) r |= static_cast<uint32_t>((v >> (8 * ((s >> (4 * i)) & 7u))) & 0xFFu) << (8 * i);
  return r;
#endif
}
PFX_HD uint32_t funnel_r(uint32_t lo, uint32_t hi, uint32_t sh) {
#ifdef __CUDA_ARCH__
  return __funnelshift_r(lo, hi, sh);
#else
  return static_cast<uint32_t>(((static_cast<uint64_t>(hi) << 32) | lo) >> (sh & 31u));
#endif
}
// The high 32 bits of (hi:lo) << (sh % 32) (shf.l.wrap); funnel_l(x, x, r) rotates x left by r.
PFX_HD uint32_t funnel_l(uint32_t lo, uint32_t hi, uint32_t sh) {
#ifdef __CUDA_ARCH__
  return __funnelshift_l(lo, hi, sh);
#else
  return static_cast<uint32_t>((((static_cast<uint64_t>(hi) << 32) | lo) << (sh & 31u)) >> 32);
#endif
}
// The same bits as another 32-bit type (device and host: a register move once optimised).
template <class To, class From>
PFX_HD To same_bits(From v) {
  static_assert(sizeof(To) == sizeof(From), "same_bits: equal sizes");
  To t;
  std::memcpy(&t, &v, sizeof t);
  return t;
}
PFX_HD float bits_float(uint32_t u) { return same_bits<float>(u); }
PFX_HD uint32_t float_bits(float f) { return same_bits<uint32_t>(f); }
// p rounded down to a multiple of 16 bytes (the cp.async chunk that holds it).
PFX_HD const uint8_t* floor16(const uint8_t* p) {
  return reinterpret_cast<const uint8_t*>(reinterpret_cast<uintptr_t>(p) & ~static_cast<uintptr_t>(15));
}
PFX_HD bool signbit_set(float f) {
#ifdef __CUDA_ARCH__
  return (__float_as_uint(f) >> 31) != 0u;
#else
  return std::signbit(f);
#endif
}
// Single-rounding fp32 arithmetic that nvcc may not contract (host: one IEEE operation each; the
// tests build host code with -ffp-contract=off).
PFX_HD float fmul_rn(float a, float b) {
#ifdef __CUDA_ARCH__
  return __fmul_rn(a, b);
#else
  return a * b;
#endif
}
PFX_HD float fsub_rn(float a, float b) {
#ifdef __CUDA_ARCH__
  return __fsub_rn(a, b);
#else
  return a - b;
#endif
}
PFX_HD float fma_rn(float a, float b, float c) {
#ifdef __CUDA_ARCH__
  return __fmaf_rn(a, b, c);
#else
  return std::fma(a, b, c);
#endif
}
PFX_HD float half_bits_to_float(uint32_t bits16) {
#ifdef __CUDA_ARCH__
  return __half2float(__ushort_as_half(static_cast<unsigned short>(bits16 & 0xFFFFu)));
#else
  return quant::fp16_to_fp32(static_cast<uint16_t>(bits16 & 0xFFFFu));
#endif
}
// Two fp32 -> one register of two fp16, round to nearest even (cvt.rn.f16x2.f32); lo in bits 0-15.
PFX_HD uint32_t pack_half2_rn(float lo, float hi) {
#ifdef __CUDA_ARCH__
  const __half2 h = __floats2half2_rn(lo, hi);
  return *reinterpret_cast<const uint32_t*>(&h);
#else
  return static_cast<uint32_t>(quant::fp32_to_fp16(lo)) | (static_cast<uint32_t>(quant::fp32_to_fp16(hi)) << 16);
#endif
}
// Per half: fp16_rn(a − b) (kSub, HSUB2) or fp16_rn(a · b) (kMul, HMUL2.RN); host: the fp32
// result of two halves' difference/product as used here is exact, so rounding it once to fp16 is
// the same. One body for both, so the two operations cannot drift apart in their half handling.
enum class Half2Op { kSub, kMul };
template <Half2Op Op>
PFX_HD uint32_t half2_op(uint32_t a, uint32_t b) {
#ifdef __CUDA_ARCH__
  const __half2 x = *reinterpret_cast<const __half2*>(&a), y = *reinterpret_cast<const __half2*>(&b);
  __half2 r;
  if constexpr (Op == Half2Op::kSub)
    r = __hsub2(x, y);
  else
    r = __hmul2_rn(x, y);
  return *reinterpret_cast<const uint32_t*>(&r);
#else
  const auto op = [](float x, float y) { return Op == Half2Op::kSub ? x - y : x * y; };
  return pack_half2_rn(op(half_bits_to_float(a), half_bits_to_float(b)),
                       op(half_bits_to_float(a >> 16), half_bits_to_float(b >> 16)));
#endif
}
PFX_HD uint32_t hsub2(uint32_t a, uint32_t b) { return half2_op<Half2Op::kSub>(a, b); }
PFX_HD uint32_t hmul2_rn(uint32_t a, uint32_t b) { return half2_op<Half2Op::kMul>(a, b); }

// A read-only global load (ld.global.nc).
template <class T>
PFX_HD T ldg_ro(const T* p) {
#ifdef __CUDA_ARCH__
  return __ldg(p);
#else
  return *p;
#endif
}

// ggml's get_scale_min_k4: 6-bit scale and min of sub-block j (0..7) of a q4_K / q5_K block, from
// its 12 scale bytes q.
PFX_HD void scale_min_k4(int j, const uint8_t* q, int& sc, int& m) {
  if (j < 4) {
    sc = q[j] & 63;
    m = q[j + 4] & 63;
  } else {
    sc = (q[j + 4] & 0xF) | ((q[j - 4] >> 6) << 4);
    m = (q[j + 4] >> 4) | ((q[j] >> 6) << 4);
  }
}

}  // namespace pfx::kernels::dev

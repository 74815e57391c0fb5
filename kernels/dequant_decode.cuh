// Per-type decoders of ggml weight blocks, following ggml's dequantize_row_* operation for
// operation: the same fp32 products and differences, each rounded separately (__fmul_rn /
// __fsub_rn keep nvcc from contracting them into an FMA, which would change the last bit).
// decode8(row_base, i0, out) writes elements i0 .. i0+7 of a row; i0 is a multiple of 8, so the
// eight share one sub-block scale in every format. Used by dequant.cu and embed.cu; a fast GEMM
// that must produce the same fp16 weights can use them too.
#pragma once
#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <cstdint>

#include "quant/blocks.h"

namespace pfx::kernels::dev {

using quant::BlockQ4_0;
using quant::BlockQ4_1;
using quant::BlockQ4_K;
using quant::BlockQ5_0;
using quant::BlockQ5_1;
using quant::BlockQ5_K;
using quant::BlockQ6_K;
using quant::BlockQ8_0;

__device__ __forceinline__ float fp16_bits_to_f32(uint16_t h) { return __half2float(__ushort_as_half(h)); }

// ggml's get_scale_min_k4: 6-bit scale and min of sub-block j (0..7) of a q4_K / q5_K block.
__device__ __forceinline__ void scale_min_k4(int j, const uint8_t* q, int& sc, int& m) {
  if (j < 4) {
    sc = q[j] & 63;
    m = q[j + 4] & 63;
  } else {
    sc = (q[j + 4] & 0xF) | ((q[j - 4] >> 6) << 4);
    m = (q[j + 4] >> 4) | ((q[j] >> 6) << 4);
  }
}

struct DecodeF32 {
  static constexpr int kBlock = 1;
  static constexpr int kBlockBytes = 4;
  static constexpr int kAlign = 4;
  __device__ static void decode8(const uint8_t* base, int64_t i0, float (&o)[8]) {
    const float* p = reinterpret_cast<const float*>(base) + i0;
#pragma unroll
    for (int k = 0; k < 8; ++k) o[k] = p[k];
  }
  __device__ static float decode1(const uint8_t* base, int64_t i) { return reinterpret_cast<const float*>(base)[i]; }
};

struct DecodeF16 {
  static constexpr int kBlock = 1;
  static constexpr int kBlockBytes = 2;
  static constexpr int kAlign = 2;
  __device__ static void decode8(const uint8_t* base, int64_t i0, float (&o)[8]) {
    const uint16_t* p = reinterpret_cast<const uint16_t*>(base) + i0;
#pragma unroll
    for (int k = 0; k < 8; ++k) o[k] = fp16_bits_to_f32(p[k]);
  }
  __device__ static float decode1(const uint8_t* base, int64_t i) {
    return fp16_bits_to_f32(reinterpret_cast<const uint16_t*>(base)[i]);
  }
};

struct DecodeBF16 {
  static constexpr int kBlock = 1;
  static constexpr int kBlockBytes = 2;
  static constexpr int kAlign = 2;
  __device__ static float one(uint16_t b) { return __uint_as_float(static_cast<uint32_t>(b) << 16); }
  __device__ static void decode8(const uint8_t* base, int64_t i0, float (&o)[8]) {
    const uint16_t* p = reinterpret_cast<const uint16_t*>(base) + i0;
#pragma unroll
    for (int k = 0; k < 8; ++k) o[k] = one(p[k]);
  }
  __device__ static float decode1(const uint8_t* base, int64_t i) {
    return one(reinterpret_cast<const uint16_t*>(base)[i]);
  }
};

// q8_0: y = q * d.
struct DecodeQ8_0 {
  static constexpr int kBlock = 32;
  static constexpr int kBlockBytes = sizeof(BlockQ8_0);
  static constexpr int kAlign = 2;
  __device__ static void decode8(const uint8_t* base, int64_t i0, float (&o)[8]) {
    const BlockQ8_0& b = reinterpret_cast<const BlockQ8_0*>(base)[i0 / kBlock];
    const int j0 = static_cast<int>(i0 % kBlock);
    const float d = fp16_bits_to_f32(b.d);
#pragma unroll
    for (int k = 0; k < 8; ++k) o[k] = __fmul_rn(static_cast<float>(b.qs[j0 + k]), d);
  }
};

// q4_0: y = (nibble - 8) * d; element j < 16 in the low nibble of qs[j], j >= 16 in the high nibble of qs[j-16].
struct DecodeQ4_0 {
  static constexpr int kBlock = 32;
  static constexpr int kBlockBytes = sizeof(BlockQ4_0);
  static constexpr int kAlign = 2;
  __device__ static void decode8(const uint8_t* base, int64_t i0, float (&o)[8]) {
    const BlockQ4_0& b = reinterpret_cast<const BlockQ4_0*>(base)[i0 / kBlock];
    const int j0 = static_cast<int>(i0 % kBlock);
    const float d = fp16_bits_to_f32(b.d);
    const int shift = j0 < 16 ? 0 : 4;
    const int q0 = j0 % 16;
#pragma unroll
    for (int k = 0; k < 8; ++k) o[k] = __fmul_rn(static_cast<float>(((b.qs[q0 + k] >> shift) & 0xF) - 8), d);
  }
};

// ---- q4_1, q5_0, q5_1 (generic path; added for issue 13's quant mixes) ----
// Element j of a 32-block: 4 low bits in the low nibble of qs[j] (j < 16) or the high nibble of
// qs[j-16]; q5_*'s 5th bit is bit j of qh (little-endian uint32). q4_1/q5_1: y = q * d + m;
// q5_0: y = (q - 16) * d.
__device__ __forceinline__ int low_bits_32(const uint8_t* qs, int j) { return j < 16 ? qs[j] & 0xF : qs[j - 16] >> 4; }
__device__ __forceinline__ uint32_t high_bits_32(const uint8_t* qh) {
  return static_cast<uint32_t>(qh[0]) | (static_cast<uint32_t>(qh[1]) << 8) | (static_cast<uint32_t>(qh[2]) << 16) |
         (static_cast<uint32_t>(qh[3]) << 24);
}

struct DecodeQ4_1 {
  static constexpr int kBlock = 32;
  static constexpr int kBlockBytes = sizeof(BlockQ4_1);
  static constexpr int kAlign = 2;
  __device__ static void decode8(const uint8_t* base, int64_t i0, float (&o)[8]) {
    const BlockQ4_1& b = reinterpret_cast<const BlockQ4_1*>(base)[i0 / kBlock];
    const int j0 = static_cast<int>(i0 % kBlock);
    const float d = fp16_bits_to_f32(b.d), m = fp16_bits_to_f32(b.m);
#pragma unroll
    for (int k = 0; k < 8; ++k) o[k] = __fadd_rn(__fmul_rn(static_cast<float>(low_bits_32(b.qs, j0 + k)), d), m);
  }
};

struct DecodeQ5_0 {
  static constexpr int kBlock = 32;
  static constexpr int kBlockBytes = sizeof(BlockQ5_0);
  static constexpr int kAlign = 2;
  __device__ static void decode8(const uint8_t* base, int64_t i0, float (&o)[8]) {
    const BlockQ5_0& b = reinterpret_cast<const BlockQ5_0*>(base)[i0 / kBlock];
    const int j0 = static_cast<int>(i0 % kBlock);
    const float d = fp16_bits_to_f32(b.d);
    const uint32_t qh = high_bits_32(b.qh);
#pragma unroll
    for (int k = 0; k < 8; ++k) {
      const int j = j0 + k;
      const int q = (low_bits_32(b.qs, j) | static_cast<int>(((qh >> j) & 1) << 4)) - 16;
      o[k] = __fmul_rn(static_cast<float>(q), d);
    }
  }
};

struct DecodeQ5_1 {
  static constexpr int kBlock = 32;
  static constexpr int kBlockBytes = sizeof(BlockQ5_1);
  static constexpr int kAlign = 2;
  __device__ static void decode8(const uint8_t* base, int64_t i0, float (&o)[8]) {
    const BlockQ5_1& b = reinterpret_cast<const BlockQ5_1*>(base)[i0 / kBlock];
    const int j0 = static_cast<int>(i0 % kBlock);
    const float d = fp16_bits_to_f32(b.d), m = fp16_bits_to_f32(b.m);
    const uint32_t qh = high_bits_32(b.qh);
#pragma unroll
    for (int k = 0; k < 8; ++k) {
      const int j = j0 + k;
      const int q = low_bits_32(b.qs, j) | static_cast<int>(((qh >> j) & 1) << 4);
      o[k] = __fadd_rn(__fmul_rn(static_cast<float>(q), d), m);
    }
  }
};

// q4_K: 4 chunks of 64; in chunk c, sub-block 2c is the low nibbles of qs[32c .. 32c+31], 2c+1 the
// high nibbles. y = (d*sc) * q - (dmin*m).
struct DecodeQ4_K {
  static constexpr int kBlock = 256;
  static constexpr int kBlockBytes = sizeof(BlockQ4_K);
  static constexpr int kAlign = 2;
  __device__ static void decode8(const uint8_t* base, int64_t i0, float (&o)[8]) {
    const BlockQ4_K& b = reinterpret_cast<const BlockQ4_K*>(base)[i0 / kBlock];
    const int i = static_cast<int>(i0 % kBlock);
    const int chunk = i / 64, high = (i / 32) % 2, l0 = i % 32;
    int sc, m;
    scale_min_k4(2 * chunk + high, b.scales, sc, m);
    const float d1 = __fmul_rn(fp16_bits_to_f32(b.d), static_cast<float>(sc));
    const float m1 = __fmul_rn(fp16_bits_to_f32(b.dmin), static_cast<float>(m));
    const uint8_t* q = b.qs + 32 * chunk + l0;
    const int shift = high ? 4 : 0;
#pragma unroll
    for (int k = 0; k < 8; ++k) o[k] = __fsub_rn(__fmul_rn(d1, static_cast<float>((q[k] >> shift) & 0xF)), m1);
  }
};

// q5_K: q4_K plus a fifth bit: bit (2*chunk + high) of qh[l] adds 16.
struct DecodeQ5_K {
  static constexpr int kBlock = 256;
  static constexpr int kBlockBytes = sizeof(BlockQ5_K);
  static constexpr int kAlign = 2;
  __device__ static void decode8(const uint8_t* base, int64_t i0, float (&o)[8]) {
    const BlockQ5_K& b = reinterpret_cast<const BlockQ5_K*>(base)[i0 / kBlock];
    const int i = static_cast<int>(i0 % kBlock);
    const int chunk = i / 64, high = (i / 32) % 2, l0 = i % 32;
    int sc, m;
    scale_min_k4(2 * chunk + high, b.scales, sc, m);
    const float d1 = __fmul_rn(fp16_bits_to_f32(b.d), static_cast<float>(sc));
    const float m1 = __fmul_rn(fp16_bits_to_f32(b.dmin), static_cast<float>(m));
    const uint8_t* ql = b.qs + 32 * chunk + l0;
    const uint8_t* qh = b.qh + l0;
    const int shift = high ? 4 : 0;
    const int hbit = 2 * chunk + high;
#pragma unroll
    for (int k = 0; k < 8; ++k) {
      const int q = ((ql[k] >> shift) & 0xF) + (((qh[k] >> hbit) & 1) ? 16 : 0);
      o[k] = __fsub_rn(__fmul_rn(d1, static_cast<float>(q)), m1);
    }
  }
};

// q6_K: 2 halves of 128; in half n, quarter r (32 elements) takes 4 bits from ql (low nibble of
// ql[l] / ql[l+32] for r = 0 / 1, high nibble for r = 2 / 3) and 2 bits from qh[l] >> (2r);
// scale sc[l/16 + 2r]. y = (d * sc) * (q - 32).
struct DecodeQ6_K {
  static constexpr int kBlock = 256;
  static constexpr int kBlockBytes = sizeof(BlockQ6_K);
  static constexpr int kAlign = 2;
  __device__ static void decode8(const uint8_t* base, int64_t i0, float (&o)[8]) {
    const BlockQ6_K& b = reinterpret_cast<const BlockQ6_K*>(base)[i0 / kBlock];
    const int i = static_cast<int>(i0 % kBlock);
    const int half = i / 128, r = (i % 128) / 32, l0 = i % 32;
    const uint8_t* ql = b.ql + 64 * half + l0 + ((r & 1) ? 32 : 0);
    const uint8_t* qh = b.qh + 32 * half + l0;
    const int8_t* sc = b.scales + 8 * half;
    const float ds = __fmul_rn(fp16_bits_to_f32(b.d), static_cast<float>(sc[l0 / 16 + 2 * r]));
    const int lshift = (r >= 2) ? 4 : 0;
    const int hshift = 2 * r;
#pragma unroll
    for (int k = 0; k < 8; ++k) {
      const int q = (((ql[k] >> lshift) & 0xF) | (((qh[k] >> hshift) & 3) << 4)) - 32;
      o[k] = __fmul_rn(ds, static_cast<float>(q));
    }
  }
};

}  // namespace pfx::kernels::dev

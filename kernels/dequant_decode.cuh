// Per-type decoders of ggml weight blocks, following ggml's dequantize_row_* operation for
// operation: the same fp32 products and differences, each rounded separately (__fmul_rn /
// __fsub_rn keep nvcc from contracting them into an FMA, which would change the last bit).
// decode8(row_base, i0, out) writes elements i0 .. i0+7 of a row; i0 is a multiple of 8, so the
// eight share one sub-block scale in every format. Used by dequant.cu and embed.cu, which make
// one named kernel per decoder and dispatch on the ggml type through PFX_GENERIC_DECODERS below.
#pragma once
#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <cstdint>

#include "kernels/common.cuh"
#include "kernels/hd_ops.cuh"
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

// ---- element-wise types: one element per "block" -----------------------------------------------
// Raw: the stored element; Derived::one(Raw) its fp32 value.
template <class Raw, class Derived>
struct ElementFormat {
  static constexpr int kBlock = 1;
  static constexpr int kBlockBytes = sizeof(Raw);
  static constexpr int kAlign = sizeof(Raw);
  __device__ static void decode8(const uint8_t* base, int64_t i0, float (&o)[8]) {
    const Raw* p = reinterpret_cast<const Raw*>(base) + i0;
#pragma unroll
    for (int k = 0; k < 8; ++k) o[k] = Derived::one(p[k]);
  }
  __device__ static float decode1(const uint8_t* base, int64_t i) { return Derived::one(reinterpret_cast<const Raw*>(base)[i]); }
};

struct DecodeF32 : ElementFormat<float, DecodeF32> {
  __device__ static float one(float v) { return v; }
};
struct DecodeF16 : ElementFormat<uint16_t, DecodeF16> {
  __device__ static float one(uint16_t h) { return h2f_bits(h); }
};
struct DecodeBF16 : ElementFormat<uint16_t, DecodeBF16> {
  __device__ static float one(uint16_t b) { return __uint_as_float(static_cast<uint32_t>(b) << 16); }
};

// ---- block types: kElems elements per Block, every block starting with an fp16 (2-byte aligned) --
template <class Block, int kElems>
struct BlockFormat {
  static constexpr int kBlock = kElems;
  static constexpr int kBlockBytes = sizeof(Block);
  static constexpr int kAlign = 2;
  // The block that holds element i0 of a row, and i0's place inside it.
  __device__ static const Block& block(const uint8_t* base, int64_t i0) {
    return reinterpret_cast<const Block*>(base)[i0 / kElems];
  }
  __device__ static int offset(int64_t i0) { return static_cast<int>(i0 % kElems); }
};

// q8_0: y = q * d.
struct DecodeQ8_0 : BlockFormat<BlockQ8_0, 32> {
  __device__ static void decode8(const uint8_t* base, int64_t i0, float (&o)[8]) {
    const BlockQ8_0& b = block(base, i0);
    const int j0 = offset(i0);
    const float d = h2f_bits(b.d);
#pragma unroll
    for (int k = 0; k < 8; ++k) o[k] = __fmul_rn(static_cast<float>(b.qs[j0 + k]), d);
  }
};

// q4_0: y = (nibble - 8) * d; element j < 16 in the low nibble of qs[j], j >= 16 in the high nibble of qs[j-16].
struct DecodeQ4_0 : BlockFormat<BlockQ4_0, 32> {
  __device__ static void decode8(const uint8_t* base, int64_t i0, float (&o)[8]) {
    const BlockQ4_0& b = block(base, i0);
    const int j0 = offset(i0);
    const float d = h2f_bits(b.d);
    const int shift = j0 < 16 ? 0 : 4;
    const int q0 = j0 % 16;
#pragma unroll
    for (int k = 0; k < 8; ++k) o[k] = __fmul_rn(static_cast<float>(((b.qs[q0 + k] >> shift) & 0xF) - 8), d);
  }
};

// ---- q4_1, q5_0, q5_1 (generic path; added for issue 13's quant mixes) ----
// Element j of a 32-block: 4 low bits in the low nibble of qs[j] (j < 16) or the high nibble of
// qs[j-16]; q5_*'s 5th bit is bit j of qh (little-endian uint32). q4_1/q5_1: y = q * d + m;
// q5_0: y = (q - 16) * d. Which of the three a Block is follows from its fields (qh, m).
__device__ __forceinline__ int low_bits_32(const uint8_t* qs, int j) { return j < 16 ? qs[j] & 0xF : qs[j - 16] >> 4; }
__device__ __forceinline__ uint32_t high_bits_32(const uint8_t* qh) {
  return static_cast<uint32_t>(qh[0]) | (static_cast<uint32_t>(qh[1]) << 8) | (static_cast<uint32_t>(qh[2]) << 16) |
         (static_cast<uint32_t>(qh[3]) << 24);
}

template <class Block>
struct DecodeQ32 : BlockFormat<Block, 32> {
  static constexpr bool kHighBit = requires(const Block& b) { b.qh; };
  static constexpr bool kMin = requires(const Block& b) { b.m; };
  __device__ static void decode8(const uint8_t* base, int64_t i0, float (&o)[8]) {
    const Block& b = BlockFormat<Block, 32>::block(base, i0);
    const int j0 = BlockFormat<Block, 32>::offset(i0);
    const float d = h2f_bits(b.d);
    float m = 0.0f;
    if constexpr (kMin) m = h2f_bits(b.m);
    uint32_t qh = 0;
    if constexpr (kHighBit) qh = high_bits_32(b.qh);
#pragma unroll
    for (int k = 0; k < 8; ++k) {
      const int j = j0 + k;
      int q = low_bits_32(b.qs, j);
      if constexpr (kHighBit) q |= static_cast<int>(((qh >> j) & 1) << 4);
      if constexpr (kMin) {
        o[k] = __fadd_rn(__fmul_rn(static_cast<float>(q), d), m);
      } else {
        o[k] = __fmul_rn(static_cast<float>(q - 16), d);
      }
    }
  }
};
using DecodeQ4_1 = DecodeQ32<BlockQ4_1>;
using DecodeQ5_0 = DecodeQ32<BlockQ5_0>;
using DecodeQ5_1 = DecodeQ32<BlockQ5_1>;
static_assert(!DecodeQ4_1::kHighBit && DecodeQ4_1::kMin && DecodeQ5_0::kHighBit && !DecodeQ5_0::kMin &&
                  DecodeQ5_1::kHighBit && DecodeQ5_1::kMin,
              "q4_1 / q5_0 / q5_1 told apart by their qh and m fields");

// q4_K: 4 chunks of 64; in chunk c, sub-block 2c is the low nibbles of qs[32c .. 32c+31], 2c+1 the
// high nibbles. y = (d*sc) * q - (dmin*m). q5_K: the same plus a fifth bit: bit (2*chunk + high)
// of qh[l] adds 16.
template <class Block>
struct DecodeK4 : BlockFormat<Block, 256> {
  static constexpr bool kFifthBit = requires(const Block& b) { b.qh; };
  __device__ static void decode8(const uint8_t* base, int64_t i0, float (&o)[8]) {
    const Block& b = BlockFormat<Block, 256>::block(base, i0);
    const int i = BlockFormat<Block, 256>::offset(i0);
    const int chunk = i / 64, high = (i / 32) % 2, l0 = i % 32;
    int sc, m;
    scale_min_k4(2 * chunk + high, b.scales, sc, m);
    const float d1 = __fmul_rn(h2f_bits(b.d), static_cast<float>(sc));
    const float m1 = __fmul_rn(h2f_bits(b.dmin), static_cast<float>(m));
    const uint8_t* ql = b.qs + 32 * chunk + l0;
    const int shift = high ? 4 : 0;
#pragma unroll
    for (int k = 0; k < 8; ++k) {
      int q = (ql[k] >> shift) & 0xF;
      if constexpr (kFifthBit) q += ((b.qh[l0 + k] >> (2 * chunk + high)) & 1) ? 16 : 0;
      o[k] = __fsub_rn(__fmul_rn(d1, static_cast<float>(q)), m1);
    }
  }
};
using DecodeQ4_K = DecodeK4<BlockQ4_K>;
using DecodeQ5_K = DecodeK4<BlockQ5_K>;
static_assert(!DecodeQ4_K::kFifthBit && DecodeQ5_K::kFifthBit, "q5_K is told from q4_K by its qh field");

// q6_K: 2 halves of 128; in half n, quarter r (32 elements) takes 4 bits from ql (low nibble of
// ql[l] / ql[l+32] for r = 0 / 1, high nibble for r = 2 / 3) and 2 bits from qh[l] >> (2r);
// scale sc[l/16 + 2r]. y = (d * sc) * (q - 32).
struct DecodeQ6_K : BlockFormat<BlockQ6_K, 256> {
  __device__ static void decode8(const uint8_t* base, int64_t i0, float (&o)[8]) {
    const BlockQ6_K& b = block(base, i0);
    const int i = offset(i0);
    const int half = i / 128, r = (i % 128) / 32, l0 = i % 32;
    const uint8_t* ql = b.ql + 64 * half + l0 + ((r & 1) ? 32 : 0);
    const uint8_t* qh = b.qh + 32 * half + l0;
    const int8_t* sc = b.scales + 8 * half;
    const float ds = __fmul_rn(h2f_bits(b.d), static_cast<float>(sc[l0 / 16 + 2 * r]));
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

// Every ggml type the generic decoders cover, as X(kernel-name suffix, decoder, quant::Type
// enumerator): the one list dequant.cu's and embed.cu's kernels and type switches are made from.
#define PFX_GENERIC_DECODERS(X)                                                                       \
  X(f32, DecodeF32, F32)                                                                              \
  X(f16, DecodeF16, F16)                                                                              \
  X(bf16, DecodeBF16, BF16)                                                                           \
  X(q8_0, DecodeQ8_0, Q8_0)                                                                           \
  X(q4_0, DecodeQ4_0, Q4_0)                                                                           \
  X(q4_1, DecodeQ4_1, Q4_1)                                                                           \
  X(q5_0, DecodeQ5_0, Q5_0)                                                                           \
  X(q5_1, DecodeQ5_1, Q5_1)                                                                           \
  X(q4k, DecodeQ4_K, Q4_K)                                                                            \
  X(q5k, DecodeQ5_K, Q5_K)                                                                            \
  X(q6k, DecodeQ6_K, Q6_K)

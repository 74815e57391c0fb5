// ggml's quantized block layouts as plain structs, byte for byte (ggml-common.h). Shared by the
// CPU reference and the CUDA kernels, so it includes <cstdint> only and holds no functions.
// fp16 fields are raw IEEE binary16 bits (uint16_t); convert with quant/fp16.h (or __half on GPU).
#pragma once
#include <cstdint>

namespace pfx::quant {

constexpr int QK_K = 256;        // elements per k-quant super-block
constexpr int K_SCALE_SIZE = 12; // bytes of packed 6-bit scales/mins in q4_K and q5_K
constexpr int QK4_0 = 32;
constexpr int QK4_1 = 32;
constexpr int QK5_0 = 32;
constexpr int QK5_1 = 32;
constexpr int QK8_0 = 32;
constexpr int QK8_1 = 32;

// q4_0: x = d * (q - 8), q in 0..15; element j in the low nibble of qs[j], j+16 in the high.
struct BlockQ4_0 {
  uint16_t d;
  uint8_t qs[QK4_0 / 2];
};
static_assert(sizeof(BlockQ4_0) == 18, "q4_0 block must be 18 bytes");

// q4_1: x = d * q + m.
struct BlockQ4_1 {
  uint16_t d;
  uint16_t m;
  uint8_t qs[QK4_1 / 2];
};
static_assert(sizeof(BlockQ4_1) == 20, "q4_1 block must be 20 bytes");

// q5_0: x = d * (q - 16); the 5th bit of element j is bit j of qh (little-endian uint32).
struct BlockQ5_0 {
  uint16_t d;
  uint8_t qh[4];
  uint8_t qs[QK5_0 / 2];
};
static_assert(sizeof(BlockQ5_0) == 22, "q5_0 block must be 22 bytes");

struct BlockQ5_1 {
  uint16_t d;
  uint16_t m;
  uint8_t qh[4];
  uint8_t qs[QK5_1 / 2];
};
static_assert(sizeof(BlockQ5_1) == 24, "q5_1 block must be 24 bytes");

// q8_0: x = d * q.
struct BlockQ8_0 {
  uint16_t d;
  int8_t qs[QK8_0];
};
static_assert(sizeof(BlockQ8_0) == 34, "q8_0 block must be 34 bytes");

// q8_1: q8_0 plus s = d * sum(qs) (used for activations only).
struct BlockQ8_1 {
  uint16_t d;
  uint16_t s;
  int8_t qs[QK8_1];
};
static_assert(sizeof(BlockQ8_1) == 36, "q8_1 block must be 36 bytes");

// q2_K: 16 sub-blocks of 16; scales[i] = scale (low nibble) | min (high nibble), 4 bits each.
struct BlockQ2_K {
  uint8_t scales[QK_K / 16];
  uint8_t qs[QK_K / 4];
  uint16_t d;
  uint16_t dmin;
};
static_assert(sizeof(BlockQ2_K) == 84, "q2_K block must be 84 bytes");

// q3_K: 16 sub-blocks of 16, 6-bit scales packed in 12 bytes, high bits in hmask.
struct BlockQ3_K {
  uint8_t hmask[QK_K / 8];
  uint8_t qs[QK_K / 4];
  uint8_t scales[12];
  uint16_t d;
};
static_assert(sizeof(BlockQ3_K) == 110, "q3_K block must be 110 bytes");

// q4_K: 8 sub-blocks of 32; x = d * sc[j] * q - dmin * m[j], 6-bit sc/m packed in scales
// (see get_scale_min_k4 in quant/dequant.h); 64 elements per 32 bytes of qs: low nibbles are
// sub-block 2i, high nibbles sub-block 2i+1.
struct BlockQ4_K {
  uint16_t d;
  uint16_t dmin;
  uint8_t scales[K_SCALE_SIZE];
  uint8_t qs[QK_K / 2];
};
static_assert(sizeof(BlockQ4_K) == 144, "q4_K block must be 144 bytes");

// q5_K: q4_K plus a 5th bit per element in qh.
struct BlockQ5_K {
  uint16_t d;
  uint16_t dmin;
  uint8_t scales[K_SCALE_SIZE];
  uint8_t qh[QK_K / 8];
  uint8_t qs[QK_K / 2];
};
static_assert(sizeof(BlockQ5_K) == 176, "q5_K block must be 176 bytes");

// q6_K: 16 sub-blocks of 16; x = d * scales[j] * (q - 32), q = 4 low bits in ql + 2 in qh.
struct BlockQ6_K {
  uint8_t ql[QK_K / 2];
  uint8_t qh[QK_K / 4];
  int8_t scales[QK_K / 16];
  uint16_t d;
};
static_assert(sizeof(BlockQ6_K) == 210, "q6_K block must be 210 bytes");

// q8_K: activations for k-quant dot products; float scale, bsums = sums of groups of 16 qs.
struct BlockQ8_K {
  float d;
  int8_t qs[QK_K];
  int16_t bsums[QK_K / 16];
};
static_assert(sizeof(BlockQ8_K) == 292, "q8_K block must be 292 bytes");

}  // namespace pfx::quant

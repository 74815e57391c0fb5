// The shared-memory side of the flash prefill kernels (attention_flash.cu, variant 0, and
// attention_flash_pipe.cu, variant 1): the tile layout and the ldmatrix-fed MMA loops over it.
// A tile is rows of HD fp16 whose 16-byte chunks are XOR-swizzled by (row & 7), so the 8 row
// addresses of every ldmatrix phase (8 rows, one logical chunk) hit 8 distinct 16-byte bank
// groups: no bank conflicts for Q, K (ldmatrix) or V (ldmatrix.trans). Both kernels run the same
// loops in the same order, so their per-warp arithmetic is one: attention_tile.cuh gives the
// fragment layouts and the softmax step between the two loops. Include only from .cu files.
#pragma once
#include <cstdint>

#include "kernels/attention_tile.cuh"
#include "kernels/common.cuh"
#include "kernels/race_stress.cuh"

namespace pfx::kernels::dev {

// Byte offset of 16-byte chunk `chunk` of row `row` in a swizzled tile of HD-wide rows.
template <int HD>
__device__ __forceinline__ uint32_t flash_tile_off(int row, int chunk) {
  static_assert(HD / 8 >= 8, "swizzle needs at least 8 chunks per row");
  return static_cast<uint32_t>(row * HD * 2 + ((chunk ^ (row & 7)) << 4));
}

// Q rows row0 .. row0 + 15 of the Q tile at s_q as mma A fragments, one per head-dim step of 16.
template <int HD>
__device__ __forceinline__ void flash_load_q(uint32_t (&qf)[HD / 16][4], uint32_t s_q, int row0, int lane) {
#pragma unroll
  for (int kk = 0; kk < HD / 16; ++kk) {
    const int r = row0 + (lane & 7) + (((lane >> 3) & 1) << 3);
    ldmatrix_x4(qf[kk], s_q + flash_tile_off<HD>(r, 2 * kk + (lane >> 4)));
  }
}

// S = Q·Kᵀ for one warp's 16 rows and the kAttnKeyTile keys of the K tile at s_k: head-dim steps
// kk in increasing order into zeroed accumulators.
template <int HD>
__device__ __forceinline__ void flash_scores(float (&s)[kAttnKeyTile / 8][4], const uint32_t (&qf)[HD / 16][4],
                                             uint32_t s_k, int lane) {
#pragma unroll
  for (int n = 0; n < kAttnKeyTile / 8; ++n) s[n][0] = s[n][1] = s[n][2] = s[n][3] = 0.0f;
#pragma unroll
  for (int kk = 0; kk < HD / 16; ++kk) {
    uint32_t a[4];  // a copy, as the measured variant 1 had it: ptxas gives that kernel 14 more registers without
#pragma unroll
    for (int e = 0; e < 4; ++e) a[e] = qf[kk][e];
#pragma unroll
    for (int jn = 0; jn < kAttnKeyTile / 16; ++jn) {
      uint32_t b[4];
      const int key = 16 * jn + (lane & 7) + ((lane >> 4) << 3);
      ldmatrix_x4(b, s_k + flash_tile_off<HD>(key, 2 * kk + ((lane >> 3) & 1)));
      const uint32_t b_lo[2] = {b[0], b[1]};
      const uint32_t b_hi[2] = {b[2], b[3]};
      mma_m16n8k16_f16_f32(s[2 * jn], a, b_lo);
      mma_m16n8k16_f16_f32(s[2 * jn + 1], a, b_hi);
    }
  }
}

// O += P·V over the tile's 16-key steps in order: keys are the k dimension and the V tile's rows
// are keys, so B comes from ldmatrix.trans.
template <int HD>
__device__ __forceinline__ void flash_pv(float (&o)[HD / 8][4], const uint32_t (&pf)[kAttnKeyTile / 16][4],
                                         uint32_t s_v, int lane) {
#pragma unroll
  for (int kk = 0; kk < kAttnKeyTile / 16; ++kk) {
#pragma unroll
    for (int dp = 0; dp < HD / 16; ++dp) {
      uint32_t b[4];
      const int key = 16 * kk + (lane & 7) + (((lane >> 3) & 1) << 3);
      ldmatrix_x4_trans(b, s_v + flash_tile_off<HD>(key, 2 * dp + (lane >> 4)));
      const uint32_t b_lo[2] = {b[0], b[1]};
      const uint32_t b_hi[2] = {b[2], b[3]};
      mma_m16n8k16_f16_f32(o[2 * dp], pf[kk], b_lo);
      mma_m16n8k16_f16_f32(o[2 * dp + 1], pf[kk], b_hi);
    }
  }
}

// Fold a tile whose S is computed into the running (m, l, O): attention_tile.cuh's softmax_tile()
// (mask: the tile crosses a row's diagonal or the context end), then O += P·V from the V tile at
// s_v. Race-stress point 3 sits between the two.
template <int HD>
__device__ __forceinline__ void flash_softmax_pv(float (&s)[kAttnKeyTile / 8][4], float (&o)[HD / 8][4],
                                                 float (&m_run)[2], float (&l_run)[2], uint32_t s_v, int key0,
                                                 int pos0, int ctx, bool mask, float scale_log2, int lane) {
  uint32_t pf[kAttnKeyTile / 16][4];  // P as mma A fragments (the S accumulator layout maps onto it)
  softmax_tile<HD>(s, pf, o, m_run, l_run, key0, pos0, ctx, mask, scale_log2, lane);
  PFX_RACE_STRESS_POINT(3);
  flash_pv<HD>(o, pf, s_v, lane);
}

}  // namespace pfx::kernels::dev

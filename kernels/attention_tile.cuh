// The per-warp arithmetic of tiled causal attention on mma.m16n8k16, shared by the flash kernels
// (attention_flash.cu, attention_flash_pipe.cu: shared-memory tiles, cp.async ring, causal block
// skipping) and the generic tiled kernel (attention_generic.cu: plain global loads, no
// pipelining, every tile). A warp owns 16 query rows; keys come in tiles of kAttnKeyTile. All of
// them feed these functions the same fragment values in the same order, so they compute the same
// bits: what differs between them is only how the bytes reach the registers, which is exactly what
// the parity gate is meant to test.
//
// Fragment layouts (PTX ISA, mma.m16n8k16 .f16 .f32, g = lane / 4, c = 2 * (lane % 4)):
//   A (16 x 16, row-major): a[0] = (g, c..c+1), a[1] = (g+8, c..c+1), a[2] = (g, c+8..c+9), a[3] = (g+8, c+8..c+9)
//   B (16 x 8, k x n):      b[0] = (k c..c+1, n g), b[1] = (k c+8..c+9, n g)
//   C (16 x 8, fp32):       c[0..1] = (g, c..c+1), c[2..3] = (g+8, c..c+1)
// S = Q·Kᵀ: A = Q rows, k = head dims, n = keys; s[n8] holds keys 8*n8 .. 8*n8+7 of the tile.
// O += P·V: A = P rows, k = keys, n = head dims; o[n8] holds dims 8*n8 .. 8*n8+7.
#pragma once
#include <cmath>
#include <cstdint>

#include "kernels/common.cuh"

namespace pfx::kernels::dev {

inline constexpr int kAttnKeyTile = 64;  // keys per tile, both kernels: it fixes the order of the sums

// Step 1: s_in scaled and masked into s (s_in may be s itself); the new running max, the rescale
// factor corr (2^-k, 0 on the first visible tile) and the shift m_use for exp2; l rescaled.
__device__ __forceinline__ void softmax_max(const float (&s_in)[kAttnKeyTile / 8][4], float (&s)[kAttnKeyTile / 8][4],
                                            float (&m_run)[2], float (&l_run)[2], float (&corr)[2],
                                            float (&m_use)[2], int key0, int pos0, int ctx, bool need_mask,
                                            float scale_log2, int lane) {
  float tile_max[2] = {-INFINITY, -INFINITY};
#pragma unroll
  for (int n = 0; n < kAttnKeyTile / 8; ++n) {
#pragma unroll
    for (int e = 0; e < 4; ++e) {
      float v = __fmul_rn(s_in[n][e], scale_log2);  // rounded like the cuBLAS path's alpha, not fused into exp2
      if (need_mask) {
        const int key = key0 + 8 * n + 2 * (lane & 3) + (e & 1);
        const int pos = pos0 + (e >= 2 ? 8 : 0);
        if (key > pos || key >= ctx) v = -INFINITY;
      }
      s[n][e] = v;
      tile_max[e >> 1] = fmaxf(tile_max[e >> 1], v);
    }
  }
#pragma unroll
  for (int r = 0; r < 2; ++r) {
    tile_max[r] = fmaxf(tile_max[r], __shfl_xor_sync(0xffffffffu, tile_max[r], 1));
    tile_max[r] = fmaxf(tile_max[r], __shfl_xor_sync(0xffffffffu, tile_max[r], 2));
    const float m_new = fmaxf(m_run[r], ceilf(tile_max[r]));  // an integer (or -inf)
    m_use[r] = m_new == -INFINITY ? 0.0f : m_new;             // nothing visible yet: keep exp2() finite
    corr[r] = exp2f(m_run[r] - m_use[r]);                     // 2^-k, exact; 0 on the first visible tile
    m_run[r] = m_new;
    l_run[r] = __fmul_rn(l_run[r], corr[r]);  // never contracted with the adds below: same bits in every kernel
  }
}

// Step 2: O rescaled by corr (rows g and g + 8).
template <int HD>
__device__ __forceinline__ void softmax_rescale_o(float (&o)[HD / 8][4], const float (&corr)[2]) {
#pragma unroll
  for (int n = 0; n < HD / 8; ++n) {
    o[n][0] *= corr[0];
    o[n][1] *= corr[0];
    o[n][2] *= corr[1];
    o[n][3] *= corr[1];
  }
}

// Step 3: P = fp16(exp2(s - m_use)) as A fragments, the row sums added to l in key order.
__device__ __forceinline__ void softmax_probs(const float (&s)[kAttnKeyTile / 8][4],
                                              uint32_t (&pf)[kAttnKeyTile / 16][4], float (&l_run)[2],
                                              const float (&m_use)[2]) {
#pragma unroll
  for (int n = 0; n < kAttnKeyTile / 8; ++n) {
    const float p0v = exp2f(s[n][0] - m_use[0]), p1v = exp2f(s[n][1] - m_use[0]);
    const float p2v = exp2f(s[n][2] - m_use[1]), p3v = exp2f(s[n][3] - m_use[1]);
    l_run[0] += p0v + p1v;
    l_run[1] += p2v + p3v;
    pf[n / 2][(n & 1) * 2 + 0] = pack_half2_rn(p0v, p1v);
    pf[n / 2][(n & 1) * 2 + 1] = pack_half2_rn(p2v, p3v);
  }
}

// Scale the tile's scores into log2 units, mask keys past the row's position or the context, and
// fold the tile into the running softmax (attention_shared.h: integer max, exact power-of-two
// rescale): o and l are rescaled, P = fp16(exp2(s - m)) comes back as A fragments for P·V.
// key0: first key of the tile; pos0: position of row g (row g+8 is pos0 + 8). In three steps,
// each a function of its own so that a kernel whose O is still being written by an asynchronous
// MMA can run the first and the last before it rescales O (attention_flash_wg.cu); every kernel
// runs the same three, so the order of the operations on each value is the same everywhere.
template <int HD>
__device__ __forceinline__ void softmax_tile(float (&s)[kAttnKeyTile / 8][4], uint32_t (&pf)[kAttnKeyTile / 16][4],
                                             float (&o)[HD / 8][4], float (&m_run)[2], float (&l_run)[2], int key0,
                                             int pos0, int ctx, bool need_mask, float scale_log2, int lane) {
  float corr[2], m_use[2];
  softmax_max(s, s, m_run, l_run, corr, m_use, key0, pos0, ctx, need_mask, scale_log2, lane);
  softmax_rescale_o<HD>(o, corr);
  softmax_probs(s, pf, l_run, m_use);
}

// Quad-reduce the row sums and store fp16(o / l) for rows t0w + g and t0w + g + 8 below T.
// o16 row t, head h starts at o16 + (t * H + h) * HD.
template <int HD>
__device__ __forceinline__ void store_rows(const float (&o)[HD / 8][4], float (&l_run)[2], uint16_t* o16, int t0w,
                                           int T, int H, int h, int lane) {
#pragma unroll
  for (int r = 0; r < 2; ++r) {
    l_run[r] += __shfl_xor_sync(0xffffffffu, l_run[r], 1);
    l_run[r] += __shfl_xor_sync(0xffffffffu, l_run[r], 2);
  }
#pragma unroll
  for (int r = 0; r < 2; ++r) {
    const int t = t0w + lane / 4 + 8 * r;
    if (t >= T) continue;
    uint32_t* dst = reinterpret_cast<uint32_t*>(o16 + (static_cast<int64_t>(t) * H + h) * HD);
#pragma unroll
    for (int n = 0; n < HD / 8; ++n)
      dst[(8 * n + 2 * (lane & 3)) / 2] =
          pack_half2_rn(__fdiv_rn(o[n][2 * r], l_run[r]), __fdiv_rn(o[n][2 * r + 1], l_run[r]));
  }
}

}  // namespace pfx::kernels::dev

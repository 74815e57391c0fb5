// The decode mat-vecs' tile epilogue (k_gemv_direct, kernels/gemm_fast_gemv.cu; k_gemv_ws,
// kernels/gemv_ws.cu): the warps' partial sums of a 16-row tile added in warp order, and each
// output stored as its part asks — plain, accumulated into the residual, as a SwiGLU product, or
// as the attention's rotated fp16 inputs — with what those stores read besides the sums fetched
// when the tile starts.
#pragma once
#include <cuda_runtime.h>

#include <cstdint>

#include "kernels/common.cuh"
#include "kernels/elementwise_math.cuh"
#include "kernels/gemm_fast_gemv_job.cuh"
#include "kernels/gemm_fast_gemv_store.cuh"
#include "kernels/ptx.cuh"
#include "kernels/rope_math.cuh"

namespace pfx::kernels::dev {

// After __syncthreads: output o = (r, t), o = 16t + r < 16·kT, is summed by thread o mod blockDim
// (a block of 2 warps has 64 threads for up to 128 outputs): the `warps` partial D fragments of
// the output (warp w's 32 float4 at partials + w·stride bytes, lane-major: rows g, g+8 × tokens
// 2tq, +1) added in warp order, a fixed-order sum.
__device__ __forceinline__ float gemv_partial_sum(const uint8_t* partials, int stride, int warps, int o) {
  const int r = o % kGemvRows, t = o / kGemvRows;
  const int slot = 4 * (4 * (r & 7) + (t >> 1)) + 2 * (r >> 3) + (t & 1);
  float sum = reinterpret_cast<const float*>(partials)[slot];
  for (int w = 1; w < warps; ++w) sum = __fadd_rn(sum, reinterpret_cast<const float*>(partials + w * stride)[slot]);
  return sum;
}

// What a tile's stores read besides its sums, asked for with cp.async when the tile starts (after
// pdl_wait: the kernels before this one write them) so that their L2 round trips run under the
// tile's loads and MMAs instead of after its sums:
// - a heads tile: the cos/sin of its 8 rotation pairs per token (64 contiguous bytes of the table
//   per token: head_dim is a multiple of 16, so a tile lies in one head) and the position (H200,
//   session 15: the Q/K/V launches timed the same within noise either way);
// - an accumulating part (kAccumulateF32: attn_output and ffn_down add into the residual): the old
//   values of its outputs, which the store otherwise loads after the sums (session 17's ncu: the
//   add waiting on that load held ~6% of the 4096 x 4096 GEMV's stall samples).
template <int kT>
struct GemvTileConsts {
  float2 cs[kT][kGemvRows / 2];
  float y_old[kGemvRows * kT];  // output o = 16t + r: y[t][n0 + r] before this launch
  int p0;
};
template <int kT>
__device__ __forceinline__ void gemv_fetch_tile_consts(const GemvJob& job, const GemvTileAt& at, GemvTileConsts<kT>& c) {
  const GemvPart& q = job.part[at.part];
  const GemvHeads& h = job.heads;
  const int tid = static_cast<int>(threadIdx.x);
  if (!q.heads) {
    if (!job.swiglu && q.mode == kAccumulateF32) {
      for (int o = tid; o < kGemvRows * kT; o += static_cast<int>(blockDim.x)) {
        const int n = at.n0 + o % kGemvRows, t = o / kGemvRows;
        if (n < q.N) cp_async_4(smem_addr(&c.y_old[o]), static_cast<const float*>(q.y) + static_cast<int64_t>(t) * q.N + n);
      }
      cp_async_commit();
    }
    return;
  }
  if ((q.heads & kGemvHeadRotate) && tid < 4 * kT) {  // 4 threads × 16 bytes per token
    const int t = tid >> 2, piece = tid & 3, d0 = at.n0 % h.head_dim;
    cp_async_16(smem_addr(&c.cs[t][2 * piece]), h.cos_sin + static_cast<int64_t>(t) * (h.head_dim >> 1) + (d0 >> 1) + 2 * piece,
                true);
  }
  // The position: the thread after the cos/sin copies', or (a block of one warp at T = 8, where
  // those take every thread) thread 0 as well.
  if (tid == (4 * kT) % static_cast<int>(blockDim.x)) {
    if (h.p0_dev) cp_async_4(smem_addr(&c.p0), h.p0_dev);
    else c.p0 = h.p0;
  }
  cp_async_commit();
}

// Outputs n, n + 1 (n even) of token t of a heads part: one rotation pair of head n / hd, stored
// as the RoPE kernel stores it (k_rope_fused: its rotation and cos/sin, fp16 by round to nearest),
// into rows [T, N] or the cache rows of positions p0 + t. A device position whose rows do not fit
// the cache stores nothing, as k_rope_fused. c: the tile's (gemv_fetch_tile_consts, landed).
template <int kT>
__device__ __forceinline__ void gemv_store_head_pair(const GemvJob& job, const GemvPart& q, const GemvTileConsts<kT>& c,
                                                     int n, int t, float v0, float v1) {
  const GemvHeads& h = job.heads;
  const int p0 = c.p0;
  if (!cache_rows_fit(p0, kT, h.max_ctx)) return;
  const int head = n / h.head_dim, d = n - head * h.head_dim;
  float2 v = make_float2(v0, v1);
  if (q.heads & kGemvHeadRotate) v = rope_rotate_pair(v.x, v.y, c.cs[t][(n % kGemvRows) >> 1]);
  const int64_t at = (q.heads & kGemvHeadCache) ? (static_cast<int64_t>(head) * h.max_ctx + p0 + t) * h.head_dim + d
                                                 : static_cast<int64_t>(t) * q.N + n;
  *reinterpret_cast<uint32_t*>(static_cast<uint16_t*>(q.y) + at) = pack_half2_rn(v.x, v.y);
}

// After __syncthreads, virtual tile v's outputs (as gemv_sum_and_store) go to their part's output;
// in a SwiGLU pair the gate tile's sums wait in gate_sum (thread o keeps output o of both tiles)
// and the up tile stores fp16(silu(gate) · up) into part 0's y, as k_elementwise_silu_mul does; a
// heads part's pairs go through gemv_store_head_pair with the tile's constants `consts`, and an
// accumulating part adds its sums to the old outputs fetched there.
template <int kT>
__device__ __forceinline__ void gemv_job_sum_and_store(const GemvJob& job, int v, const uint8_t* partials, int stride,
                                                       int warps, float* gate_sum, const GemvTileConsts<kT>& consts) {
  const GemvTileAt at = gemv_locate(job, v);
  const GemvPart& q = job.part[at.part];
  for (int o = static_cast<int>(threadIdx.x); o < kGemvRows * kT; o += static_cast<int>(blockDim.x)) {
    const int n = at.n0 + o % kGemvRows, t = o / kGemvRows;
    if (n >= q.N) continue;
    if (q.heads) {  // the pair's even row stores both (rows n, n + 1 of one tile: n0 and kGemvRows even)
      if ((n & 1) == 0)
        gemv_store_head_pair<kT>(job, q, consts, n, t, gemv_partial_sum(partials, stride, warps, o),
                                 gemv_partial_sum(partials, stride, warps, o + 1));
      continue;
    }
    const float sum = gemv_partial_sum(partials, stride, warps, o);
    if (!job.swiglu && q.mode == kAccumulateF32) {
      static_cast<float*>(q.y)[static_cast<int64_t>(t) * q.N + n] = __fadd_rn(consts.y_old[o], sum);
    } else if (!job.swiglu) {
      gemv_store_to(q.y, q.N, q.mode, n, t, sum);
    } else if (at.part == 0) {
      gate_sum[o] = sum;
    } else {
      static_cast<uint16_t*>(job.part[0].y)[static_cast<int64_t>(t) * q.N + n] = f2h_bits(swiglu_f32(gate_sum[o], sum));
    }
  }
}

// After __syncthreads, tile v of an interleaved SwiGLU job (GemvJob::interleaved): output 8v + r
// of token t is fp16(silu(gate) · up) from the tile's rows r (gate) and r + 8 (up), summed as
// gemv_partial_sum sums them, into part 0's y [T, N] — the product k_elementwise_silu_mul forms.
template <int kT>
__device__ __forceinline__ void gemv_interleaved_swiglu_store(const GemvJob& job, int v, const uint8_t* partials,
                                                              int stride, int warps) {
  const GemvPart& q = job.part[0];
  for (int o = static_cast<int>(threadIdx.x); o < (kGemvRows / 2) * kT; o += static_cast<int>(blockDim.x)) {
    const int r = o % (kGemvRows / 2), t = o / (kGemvRows / 2), n = (kGemvRows / 2) * v + r;
    if (n >= q.N) continue;
    const float gate = gemv_partial_sum(partials, stride, warps, kGemvRows * t + r);
    const float up = gemv_partial_sum(partials, stride, warps, kGemvRows * t + r + kGemvRows / 2);
    static_cast<uint16_t*>(q.y)[static_cast<int64_t>(t) * q.N + n] = f2h_bits(swiglu_f32(gate, up));
  }
}

}  // namespace pfx::kernels::dev

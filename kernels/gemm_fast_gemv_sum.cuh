// How the decode mat-vec kernels (kernels/gemm_fast_gemv.cu, kernels/gemm_fast_gemv_ring.cu) turn
// their warps' partial MMA fragments into outputs: a fixed-order sum per output, then the store (a
// SwiGLU pair's gate sums wait for its up sums).
#pragma once
#include <cstdint>

#include "kernels/common.cuh"
#include "kernels/elementwise_math.cuh"
#include "kernels/gemm_fast_gemv_job.cuh"
#include "kernels/gemm_fast_gemv_store.cuh"
#include "kernels/gemm_fast_gemv_tile.cuh"

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

// After a barrier over the threads that wrote the partials, virtual tile v's outputs (as
// gemv_sum_and_store; output o by thread o mod nthreads of those tid < nthreads) go to their part's output;
// in a SwiGLU pair the gate tile's sums wait in gate_sum (thread o keeps output o of both tiles)
// and the up tile stores fp16(silu(gate) · up) into part 0's y, as k_elementwise_silu_mul does.
template <int kT>
__device__ __forceinline__ void gemv_job_sum_and_store(const GemvJob& job, int v, const uint8_t* partials, int stride,
                                                       int warps, float* gate_sum, int tid, int nthreads) {
  const GemvTileAt at = gemv_locate(job, v);
  const GemvPart& q = job.part[at.part];
  for (int o = tid; o < kGemvRows * kT; o += nthreads) {
    const int n = at.n0 + o % kGemvRows, t = o / kGemvRows;
    if (n >= q.N) continue;
    const float sum = gemv_partial_sum(partials, stride, warps, o);
    if (!job.swiglu) {
      gemv_store_to(q.y, q.N, q.mode, n, t, sum);
    } else if (at.part == 0) {
      gate_sum[o] = sum;
    } else {
      static_cast<uint16_t*>(job.part[0].y)[static_cast<int64_t>(t) * q.N + n] = f2h_bits(swiglu_f32(gate_sum[o], sum));
    }
  }
}

}  // namespace pfx::kernels::dev

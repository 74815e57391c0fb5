// RoPE's rotation of one pair, shared by the RoPE kernels (kernels/rope.cu) and the head-store
// epilogues (the fused GEMM's, kernels/gemm_ws_kernel.cuh, and the decode GEMV's,
// kernels/gemm_fast_gemv.cu): all must round the same operations the same way for the fast path
// to keep the generic path's bits. And the one test of a position against the KV cache.
#pragma once
#include <cuda_runtime.h>

#include <cstdint>

namespace pfx::kernels::dev {

// Whether positions p0 .. p0 + T - 1 have rows in a cache of max_ctx rows per head. A kernel that
// reads its position from device memory (a graph-captured decode step) stores and reads nothing
// where they do not; the host checks by-value positions before the launch.
__host__ __device__ __forceinline__ bool cache_rows_fit(int p0, int64_t T, int max_ctx) {
  return p0 >= 0 && static_cast<int64_t>(p0) + T <= max_ctx;
}

// (x0, x1) -> (x0 c - x1 s, x0 s + x1 c) with cs = (c, s), each product and sum rounded
// separately (ggml's order; no contraction into FMAs).
__device__ __forceinline__ float2 rope_rotate_pair(float x0, float x1, float2 cs) {
  return make_float2(__fsub_rn(__fmul_rn(x0, cs.x), __fmul_rn(x1, cs.y)),
                     __fadd_rn(__fmul_rn(x0, cs.y), __fmul_rn(x1, cs.x)));
}

}  // namespace pfx::kernels::dev

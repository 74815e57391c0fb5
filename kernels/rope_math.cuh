// RoPE's rotation of one pair, shared by the RoPE kernels (kernels/rope.cu) and the fused GEMM's
// head-store epilogue (kernels/gemm_ws_kernel.cuh): both must round the same operations the same
// way for the fast path to keep the generic path's bits.
#pragma once
#include <cuda_runtime.h>

namespace pfx::kernels::dev {

// (x0, x1) -> (x0 c - x1 s, x0 s + x1 c) with cs = (c, s), each product and sum rounded
// separately (ggml's order; no contraction into FMAs).
__device__ __forceinline__ float2 rope_rotate_pair(float x0, float x1, float2 cs) {
  return make_float2(__fsub_rn(__fmul_rn(x0, cs.x), __fmul_rn(x1, cs.y)),
                     __fadd_rn(__fmul_rn(x0, cs.y), __fmul_rn(x1, cs.x)));
}

}  // namespace pfx::kernels::dev

// Scalar device math shared by the elementwise kernels and any fused epilogue (a fast GEMM that
// applies SwiGLU must use these to compute the same values as the generic path).
#pragma once
#include <cuda_fp16.h>

namespace pfx::kernels::dev {

// ggml's silu: x / (1 + exp(-x)), fp32, each step rounded separately (expf is CUDA's accurate one).
__device__ __forceinline__ float silu_f32(float x) { return __fdiv_rn(x, __fadd_rn(1.0f, expf(-x))); }

// SwiGLU element: silu(g) * u in fp32.
__device__ __forceinline__ float swiglu_f32(float g, float u) { return __fmul_rn(silu_f32(g), u); }

}  // namespace pfx::kernels::dev

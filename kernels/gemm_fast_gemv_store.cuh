// What every decode mat-vec kernel (kernels/gemm_fast_gemv.cu, kernels/gemm_fast_gemv_seq.cuh)
// takes and how it writes one output: the parameters and the epilogue store.
#pragma once
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <cstdint>

#include "kernels/gemm_fast_gemv_tile.cuh"
#include "kernels/gemm_fast_kernel.cuh"

namespace pfx::kernels::dev {

struct GemvParams {
  GemvSrc src;
  void* y;
  int mode;  // EpilogueMode: kStoreF32, kAccumulateF32 or kStoreF16
};

// Output (token t, row n) of an [T, N] output y under the epilogue `mode`.
__device__ __forceinline__ void gemv_store_to(void* y, int N, int mode, int n, int t, float sum) {
  const int64_t off = static_cast<int64_t>(t) * N + n;
  if (mode == kStoreF16) {
    static_cast<__half*>(y)[off] = __float2half_rn(sum);
  } else if (mode == kAccumulateF32) {
    float* yp = static_cast<float*>(y) + off;
    *yp = __fadd_rn(*yp, sum);
  } else {
    static_cast<float*>(y)[off] = sum;
  }
}

// Output (token t, row n) of the epilogue p.mode.
__device__ __forceinline__ void gemv_store(const GemvParams& p, int n, int t, float sum) {
  gemv_store_to(p.y, p.src.N, p.mode, n, t, sum);
}

}  // namespace pfx::kernels::dev

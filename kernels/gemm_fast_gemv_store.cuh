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

// Output (token t, row n) of the epilogue p.mode.
__device__ __forceinline__ void gemv_store(const GemvParams& p, int n, int t, float sum) {
  const int64_t off = static_cast<int64_t>(t) * p.src.N + n;
  if (p.mode == kStoreF16) {
    static_cast<__half*>(p.y)[off] = __float2half_rn(sum);
  } else if (p.mode == kAccumulateF32) {
    float* y = static_cast<float*>(p.y) + off;
    *y = __fadd_rn(*y, sum);
  } else {
    static_cast<float*>(p.y)[off] = sum;
  }
}

}  // namespace pfx::kernels::dev

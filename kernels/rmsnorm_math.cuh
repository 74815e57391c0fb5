// The arithmetic of RMSNorm into fp16, shared by the norm kernels (kernels/rmsnorm.cu) and the
// decode mat-vec that normalizes its own activations (k_gemv_ws, kernels/gemv_ws.cu): one order of
// the squares' sum and one rounding, so that every kernel computing a row's norm gives its bits.
//   out = fp16((x · r) · w), r = 1 / sqrt(mean(x²) + eps), fp32 throughout (ggml's rms_norm then mul).
// The squares are summed as: lane l takes the float4s l, l + 32, l + 64, ... of the row, adding
// x², y², z², w² of each in that order, then a fixed shuffle tree adds the lanes (warp_sum).
// Include only from .cu files.
#pragma once
#include <cuda_runtime.h>

#include <cstdint>

#include "kernels/common.cuh"

namespace pfx::kernels::dev {

inline constexpr int kRmsnormVec = 4;  // floats per load, and per lane step of the summation order

__device__ __forceinline__ float rms_scale(float sum_sq, int D, float eps) {
  return 1.0f / sqrtf(sum_sq / static_cast<float>(D) + eps);  // IEEE div and sqrt (no fast-math)
}
// ss + x² + y² + z² + w², added in that order.
__device__ __forceinline__ float add_squares(float ss, float4 v) {
  ss = fmaf(v.x, v.x, ss);
  ss = fmaf(v.y, v.y, ss);
  ss = fmaf(v.z, v.z, ss);
  return fmaf(v.w, v.w, ss);
}
// Four outputs fp16((x * r) * w), packed as the row's next 8 bytes.
__device__ __forceinline__ uint2 normed4(float4 v, float4 g, float r) {
  uint2 o;
  o.x = pack_half2_rn(__fmul_rn(__fmul_rn(v.x, r), g.x), __fmul_rn(__fmul_rn(v.y, r), g.y));
  o.y = pack_half2_rn(__fmul_rn(__fmul_rn(v.z, r), g.z), __fmul_rn(__fmul_rn(v.w, r), g.w));
  return o;
}
// r of a row of n4 float4s (D = 4·n4 floats) held in shared memory, computed by one whole warp (every
// lane gets it) in the order above.
__device__ __forceinline__ float row_rms_scale_warp(const float4* row_s, int n4, int D, float eps) {
  const int lane = static_cast<int>(threadIdx.x) & 31;
  float ss = 0.0f;
  for (int i = lane; i < n4; i += 32) ss = add_squares(ss, row_s[i]);
  return rms_scale(warp_sum(ss), D, eps);
}

}  // namespace pfx::kernels::dev

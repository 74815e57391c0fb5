// Device-side building blocks shared by the kernels: warp/block reductions and fp16 bit
// conversions; the PTX wrappers (mma.sync, ldmatrix, cp.async, wgmma, mbarriers, bulk copies) come
// with it from kernels/ptx.cuh, fp16 packing (pack_half2_rn) and the other host-device twins of
// intrinsics from kernels/hd_ops.cuh. Include only from .cu files.
#pragma once
#include <cuda_fp16.h>

#include <cstdint>

#include "kernels/hd_ops.cuh"  // pack_half2_rn and the other host-device twins
#include "kernels/ptx.cuh"

namespace pfx::kernels::dev {

// All-reduce over the 32 lanes of a warp by `op` (butterfly: every lane gets the result).
template <class Op>
__device__ __forceinline__ float warp_reduce(float v, Op op) {
#pragma unroll
  for (int o = 16; o > 0; o >>= 1) v = op(v, __shfl_xor_sync(0xffffffffu, v, o));
  return v;
}
__device__ __forceinline__ float warp_sum(float v) {
  return warp_reduce(v, [](float a, float b) { return a + b; });
}
__device__ __forceinline__ float warp_max(float v) {
  return warp_reduce(v, [](float a, float b) { return fmaxf(a, b); });
}

// The middle of a block reduction over kThreads threads: each warp's value (lane 0's) into
// scratch[warp] (at least kThreads/32 floats), visible to every thread on return.
template <int kThreads>
__device__ __forceinline__ void publish_warp_values(float warp_value, float* scratch) {
  static_assert(kThreads % 32 == 0 && kThreads <= 1024, "block reduction: whole warps, at most 1024 threads");
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  __syncthreads();  // scratch may still be read by a previous call
  if (lane == 0) scratch[warp] = warp_value;
  __syncthreads();
}

// Sum / max over all kThreads threads of the block; every thread gets the result. The reduction
// order is fixed, so results are run-to-run identical.
template <int kThreads>
__device__ __forceinline__ float block_sum(float v, float* scratch) {
  publish_warp_values<kThreads>(warp_sum(v), scratch);
  float total = 0.0f;
#pragma unroll
  for (int w = 0; w < kThreads / 32; ++w) total += scratch[w];
  return total;
}
template <int kThreads>
__device__ __forceinline__ float block_max(float v, float* scratch) {
  publish_warp_values<kThreads>(warp_max(v), scratch);
  float m = scratch[0];
#pragma unroll
  for (int w = 1; w < kThreads / 32; ++w) m = fmaxf(m, scratch[w]);
  return m;
}

// fp32 -> fp16 round-to-nearest-even, as raw bits.
__device__ __forceinline__ uint16_t f2h_bits(float v) { return __half_as_ushort(__float2half_rn(v)); }
__device__ __forceinline__ float h2f_bits(uint16_t h) { return __half2float(__ushort_as_half(h)); }

}  // namespace pfx::kernels::dev

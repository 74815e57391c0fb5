// Device-side building blocks shared by the kernels: warp/block reductions and fp16 packing; the
// PTX wrappers (mma.sync, ldmatrix, cp.async, wgmma, mbarriers, bulk copies) come with it from
// kernels/ptx.cuh. Include only from .cu files.
#pragma once
#include <cuda_fp16.h>

#include <cstdint>

#include "kernels/ptx.cuh"

namespace pfx::kernels::dev {

__device__ __forceinline__ float warp_sum(float v) {
#pragma unroll
  for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(0xffffffffu, v, o);
  return v;
}

__device__ __forceinline__ float warp_max(float v) {
#pragma unroll
  for (int o = 16; o > 0; o >>= 1) v = fmaxf(v, __shfl_xor_sync(0xffffffffu, v, o));
  return v;
}

// Sum over all kThreads threads of the block; every thread gets the result. `scratch` holds at
// least kThreads/32 floats. The reduction order is fixed, so results are run-to-run identical.
template <int kThreads>
__device__ __forceinline__ float block_sum(float v, float* scratch) {
  static_assert(kThreads % 32 == 0 && kThreads <= 1024, "block_sum: whole warps, at most 1024 threads");
  constexpr int kWarps = kThreads / 32;
  v = warp_sum(v);
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  __syncthreads();  // scratch may still be read by a previous call
  if (lane == 0) scratch[warp] = v;
  __syncthreads();
  float total = 0.0f;
#pragma unroll
  for (int w = 0; w < kWarps; ++w) total += scratch[w];
  return total;
}

template <int kThreads>
__device__ __forceinline__ float block_max(float v, float* scratch) {
  static_assert(kThreads % 32 == 0 && kThreads <= 1024, "block_max: whole warps, at most 1024 threads");
  constexpr int kWarps = kThreads / 32;
  v = warp_max(v);
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  __syncthreads();
  if (lane == 0) scratch[warp] = v;
  __syncthreads();
  float m = scratch[0];
#pragma unroll
  for (int w = 1; w < kWarps; ++w) m = fmaxf(m, scratch[w]);
  return m;
}

// fp32 -> fp16 round-to-nearest-even, as raw bits.
__device__ __forceinline__ uint16_t f2h_bits(float v) { return __half_as_ushort(__float2half_rn(v)); }
__device__ __forceinline__ float h2f_bits(uint16_t h) { return __half2float(__ushort_as_half(h)); }

// Two fp32 -> one register of two fp16 (lo in the low half), round-to-nearest-even.
__device__ __forceinline__ uint32_t pack_half2(float lo, float hi) {
  const __half2 h = __floats2half2_rn(lo, hi);
  return *reinterpret_cast<const uint32_t*>(&h);
}

}  // namespace pfx::kernels::dev

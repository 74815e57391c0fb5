// Decode mat-vec of the fast path (gemv_fast): Y[T,N] = X16[T,K] · fp16(W[N,K])ᵀ for T <= 8,
// reading the raw quantized rows once. One 4-warp block per weight row; each lane decodes 8 consecutive
// weights per 256-element step with the same exact decoders as the GEMM (gemm_fast_weights.cuh),
// multiplies them by the T activation rows in fp32 (w16·x16 is exact in fp32) and accumulates in
// fp32; a fixed shuffle tree and a fixed-order sum over the warps combine the parts, so results are
// run-to-run identical.
#include <cuda_fp16.h>

#include <cstdint>

#include "kernels/cuda_check.h"
#include "kernels/gemm_fast_internal.h"
#include "kernels/gemm_fast_kernel.cuh"
#include "kernels/gemm_fast_launch_info.cuh"
#include "util/error.h"

namespace pfx::kern::gemm_dev {

namespace {

struct GemvParams {
  const uint8_t* w;
  int64_t row_bytes;
  const uint16_t* x;
  void* y;
  int N, K, mode;
};

constexpr int kGemvWarps = 4;  // warps splitting one row's K
constexpr int kGemvThreads = 32 * kGemvWarps;
constexpr int kGemvDynamicSmem = 0;  // the per-warp partial sums are static shared memory

__device__ __forceinline__ void half2_to_floats(uint32_t h, float& a, float& b) {
  const float2 f = __half22float2(*reinterpret_cast<const __half2*>(&h));
  a = f.x;
  b = f.y;
}

// acc[t] += Σ_e w[e]·x[t][k0+e] for the 8 weights of one lane.
template <int kT>
__device__ __forceinline__ void dot8(const uint4& wq, const uint16_t* x, int K, int k0, float (&acc)[kT]) {
  float wf[8];
  half2_to_floats(wq.x, wf[0], wf[1]);
  half2_to_floats(wq.y, wf[2], wf[3]);
  half2_to_floats(wq.z, wf[4], wf[5]);
  half2_to_floats(wq.w, wf[6], wf[7]);
#pragma unroll
  for (int t = 0; t < kT; ++t) {
    const uint4 xq = __ldg(reinterpret_cast<const uint4*>(x + static_cast<int64_t>(t) * K + k0));
    float xf[8];
    half2_to_floats(xq.x, xf[0], xf[1]);
    half2_to_floats(xq.y, xf[2], xf[3]);
    half2_to_floats(xq.z, xf[4], xf[5]);
    half2_to_floats(xq.w, xf[6], xf[7]);
#pragma unroll
    for (int e = 0; e < 8; ++e) acc[t] = __fmaf_rn(wf[e], xf[e], acc[t]);
  }
}

// One block per weight row; warp w takes the 256-element chunks w, w + kGemvWarps, ..., two at a
// time so that each lane has two chunks' loads in flight (the kernel is latency-bound otherwise:
// N = 4096 rows give only ~31 warps per SM).
template <class W, int kT>
// Min 8 blocks/SM (a 64-register cap): without it ptxas spilled a few bytes in two instantiations.
__global__ void __launch_bounds__(32 * kGemvWarps, 8) k_gemv_fast(const GemvParams p) {
  __shared__ float partial[kGemvWarps][kT];
  const int warp = threadIdx.x >> 5, lane = threadIdx.x & 31;
  const int n = blockIdx.x;
  const uint8_t* row = p.w + static_cast<int64_t>(n) * p.row_bytes;
  float acc[kT];
#pragma unroll
  for (int t = 0; t < kT; ++t) acc[t] = 0.0f;
  const int chunks = (p.K + 255) / 256;
#pragma unroll 1
  for (int c = warp; c < chunks; c += 2 * kGemvWarps) {
    const int ka = c * 256 + 8 * lane, kb = ka + kGemvWarps * 256;
    const bool va = ka < p.K, vb = kb < p.K;  // q8_0 rows may end inside a chunk
    uint4 wa = make_uint4(0, 0, 0, 0), wb = make_uint4(0, 0, 0, 0);
    if (va) wa = decode8_global<W>(row, ka);
    if (vb) wb = decode8_global<W>(row, kb);
    if (va) dot8<kT>(wa, p.x, p.K, ka, acc);
    if (vb) dot8<kT>(wb, p.x, p.K, kb, acc);
  }
#pragma unroll
  for (int t = 0; t < kT; ++t) {
#pragma unroll
    for (int o = 16; o > 0; o >>= 1) acc[t] += __shfl_xor_sync(0xffffffffu, acc[t], o);
  }
  if (lane == 0) {
#pragma unroll
    for (int t = 0; t < kT; ++t) partial[warp][t] = acc[t];
  }
  __syncthreads();
  if (threadIdx.x >= kT) return;
  const int t = threadIdx.x;
  float sum = partial[0][t];
#pragma unroll
  for (int w = 1; w < kGemvWarps; ++w) sum += partial[w][t];  // fixed order: run-to-run identical
  const int64_t off = static_cast<int64_t>(t) * p.N + n;
  if (p.mode == kStoreF16) {
    static_cast<__half*>(p.y)[off] = __float2half_rn(sum);
  } else if (p.mode == kAccumulateF32) {
    float* y = static_cast<float*>(p.y) + off;
    *y = __fadd_rn(*y, sum);
  } else {
    static_cast<float*>(p.y)[off] = sum;
  }
}

template <class W, int kT>
void launch_gemv_t(const GemvParams& p, cudaStream_t stream) {
  // Names the registration so that it exists for exactly the kernels instantiated here.
  (void)gemv_launch_info_registered<W, kT, kGemvThreads, kGemvDynamicSmem>;
  k_gemv_fast<W, kT><<<static_cast<unsigned>(p.N), kGemvThreads, kGemvDynamicSmem, stream>>>(p);
  CUDA_CHECK_LAUNCH();
}

template <class W>
void launch_gemv(const GemvParams& p, int T, cudaStream_t stream) {
  static_assert(kGemvMaxT == 8, "one instantiation per T in 1..kGemvMaxT");
  switch (T) {
    case 1: return launch_gemv_t<W, 1>(p, stream);
    case 2: return launch_gemv_t<W, 2>(p, stream);
    case 3: return launch_gemv_t<W, 3>(p, stream);
    case 4: return launch_gemv_t<W, 4>(p, stream);
    case 5: return launch_gemv_t<W, 5>(p, stream);
    case 6: return launch_gemv_t<W, 6>(p, stream);
    case 7: return launch_gemv_t<W, 7>(p, stream);
    case 8: return launch_gemv_t<W, 8>(p, stream);
    default: fail("gemv_fast: T = ", T, " outside 1..", kGemvMaxT);
  }
}

}  // namespace

}  // namespace pfx::kern::gemm_dev

namespace pfx::kern::detail {

void gemv_launch(uint32_t ggml_type, const GemmLaunch& a) {
  using namespace gemm_dev;
  const GemvParams p{static_cast<const uint8_t*>(a.w0), a.row_bytes, a.x, a.y, static_cast<int>(a.N),
                     static_cast<int>(a.K), a.mode};
  const int T = static_cast<int>(a.T);
  switch (ggml_type) {
    case WeightQ4K::kGgmlType: return launch_gemv<WeightQ4K>(p, T, a.stream);
    case WeightQ6K::kGgmlType: return launch_gemv<WeightQ6K>(p, T, a.stream);
    case WeightQ8_0::kGgmlType: return launch_gemv<WeightQ8_0>(p, T, a.stream);
    case WeightF16::kGgmlType: return launch_gemv<WeightF16>(p, T, a.stream);
    default: fail("gemv_fast: weight type id ", ggml_type, " has no fast kernel");
  }
}

}  // namespace pfx::kern::detail

// Row-wise argmax over fp32 logits, for greedy decoding on the GPU without copying logits back.
// Ties go to the lowest index (as std::max_element); a row holding a NaN yields -1.
#include <cfloat>

#include "kernels/common.cuh"
#include "kernels/cuda_check.h"
#include "kernels/kernels.h"
#include "kernels/launch_checks.h"
#include "kernels/launch_info.h"

namespace pfx::kernels {

struct ArgmaxCfg {
  static constexpr int kThreads = 512;
  static_assert(sm90::is_warp_block(kThreads), "argmax: whole warps, within the block limit");
};

namespace {
// Better (value, index): larger value, or equal value and lower index.
__device__ __forceinline__ bool better(float v, int i, float bv, int bi) { return v > bv || (v == bv && i < bi); }
}  // namespace

// grid rows; one block scans one row.
__global__ void __launch_bounds__(ArgmaxCfg::kThreads)
    k_argmax_rows(const float* __restrict__ x, int cols, int32_t* __restrict__ out) {
  __shared__ float s_val[ArgmaxCfg::kThreads / 32];
  __shared__ int s_idx[ArgmaxCfg::kThreads / 32];
  __shared__ int s_nan;
  if (threadIdx.x == 0) s_nan = 0;
  __syncthreads();
  const float* row = x + static_cast<int64_t>(blockIdx.x) * cols;
  float bv = -INFINITY;
  int bi = INT_MAX;
  bool nan = false;
  for (int i = threadIdx.x; i < cols; i += ArgmaxCfg::kThreads) {
    const float v = row[i];
    nan |= isnan(v);
    if (better(v, i, bv, bi)) bv = v, bi = i;
  }
  if (nan) s_nan = 1;  // benign race: every writer stores 1
#pragma unroll
  for (int o = 16; o > 0; o >>= 1) {
    const float ov = __shfl_xor_sync(0xffffffffu, bv, o);
    const int oi = __shfl_xor_sync(0xffffffffu, bi, o);
    if (better(ov, oi, bv, bi)) bv = ov, bi = oi;
  }
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  if (lane == 0) s_val[warp] = bv, s_idx[warp] = bi;
  __syncthreads();
  if (threadIdx.x == 0) {
    for (int w = 1; w < ArgmaxCfg::kThreads / 32; ++w)
      if (better(s_val[w], s_idx[w], bv, bi)) bv = s_val[w], bi = s_idx[w];
    // All -inf: index 0 is the lowest maximum (bi is still INT_MAX only if every value was -inf).
    out[blockIdx.x] = s_nan ? -1 : (bi == INT_MAX ? 0 : bi);
  }
}
PFX_KERNEL_LAUNCH_INFO("k_argmax_rows", ArgmaxCfg::kThreads, 0);

void argmax_rows(const float* x, int rows, int cols, int32_t* out, cudaStream_t stream) {
  detail::require(rows >= 1 && cols >= 1, "argmax_rows: rows=", rows, ", cols=", cols, " must be positive");
  detail::require(x && out, "argmax_rows: null pointer");
  k_argmax_rows<<<rows, ArgmaxCfg::kThreads, 0, stream>>>(x, cols, out);
  CUDA_CHECK_LAUNCH();
}

}  // namespace pfx::kernels

// Attention for decode (T = 1 or a few tokens): one query row per block cannot fill the GPU, so
// the causal context is split across blocks (flash-decoding). Block (split, h, t): 16 groups of
// 8 lanes each take every 16th key of the split; a group holds q·k over hd/8 dims per lane,
// reduces the dot over its 8 lanes, and keeps an online softmax (m, l) and an fp32 accumulator of
// fp16(p) * v for its dims. Groups are merged in shared memory, and each split writes
// (m, l, acc[hd]) to scratch; k_attn_decode_combine merges the splits and writes fp16(acc / l).
// Same arithmetic as the prefill kernels (attention_shared.h): fp32 scores in log2 units, an
// integer running max, probabilities fp16(exp2(s - m)) before multiplying V, fp32 accumulation;
// every rescale between groups and splits is by an exact power of two.
// Bandwidth-bound: K/V rows are read once per (head, row) with
// 16-byte loads, several keys in flight per group.
// The split plan (decode_split_plan) is computed on the device from the context length, so a CUDA
// graph captured once can serve every decode step: with AttentionArgs::p0_dev the position comes
// from device memory, the grid covers the most splits any context up to max_ctx can have, and
// blocks past the live split count exit; the live splits are the ones a by-value launch gets.
#include <cuda_fp16.h>

#include <cmath>

#include "kernels/attention_shared.h"
#include "kernels/common.cuh"
#include "kernels/cuda_check.h"
#include "kernels/kernels.h"
#include "kernels/launch_checks.h"
#include "kernels/launch_info.h"
#include "kernels/pdl_launch.h"
#include "kernels/rope_math.cuh"

namespace pfx::kernels {

template <int HD>
struct DecodeCfg {
  static constexpr int kWarps = 4;
  static constexpr int kThreads = kWarps * sm90::kWarpSize;
  static constexpr int kLanesPerKey = 8;
  static constexpr int kGroups = kThreads / kLanesPerKey;  // keys in flight per step, one per group
  static constexpr int kElems = HD / kLanesPerKey;          // dims per lane: 8 (hd 64) or 16 (hd 128)
  static constexpr int kVecs = kElems / 8;                  // 16-byte loads per lane per row
  static constexpr int kUnroll = 2;                         // keys per group per step
  static constexpr int kMaxSplits = 64;        // bounds the scratch: attention_decode_scratch_bytes
  static constexpr int kMinKeysPerSplit = 64;
  static constexpr int kPartFloats = HD + 2;                // acc[HD], m, l
  static constexpr int kSmemBytes = kGroups * (HD + 2) * 4;  // static: group merge
  static constexpr int kCombineThreads = HD;                 // k_attn_decode_combine: one per dim
  static_assert(HD == 64 || HD == 128, "decode attention: head dims 64 and 128");
  static_assert(kElems % 8 == 0, "16-byte loads per lane");
  static_assert(kSmemBytes <= sm90::kDefaultSmemPerBlock, "decode attention: static smem over 48 KiB");
  static_assert(HD <= kThreads, "group merge: one thread per output dim");
};

// How a context of `ctx` keys over `rows` = T*H query rows is split: about two waves of blocks
// (target_blocks = 2 * SMs), at least kMinKeysPerSplit keys per split, at most kMaxSplits. `bound`
// (before rounding to whole splits) never decreases with ctx, so bound(max_ctx) covers every
// context's n_splits. Host and device run this same integer code: the same boundaries.
struct DecodeSplitPlan {
  int bound;           // splits asked for
  int keys_per_split;  // keys of every split but the last
  int n_splits;        // ceil(ctx / keys_per_split) <= bound
};
template <int HD>
__host__ __device__ __forceinline__ DecodeSplitPlan decode_split_plan(int rows, int ctx, int target_blocks) {
  using Cfg = DecodeCfg<HD>;
  int64_t splits = (static_cast<int64_t>(target_blocks) + rows - 1) / rows;
  const int64_t by_keys = (static_cast<int64_t>(ctx) + Cfg::kMinKeysPerSplit - 1) / Cfg::kMinKeysPerSplit;
  splits = splits < by_keys ? splits : by_keys;
  splits = splits < 1 ? 1 : (splits > Cfg::kMaxSplits ? Cfg::kMaxSplits : splits);
  const int kps = static_cast<int>((ctx + splits - 1) / splits);
  return DecodeSplitPlan{static_cast<int>(splits), kps, (ctx + kps - 1) / kps};
}

namespace {
__device__ __forceinline__ void unpack8(const uint4& v, float* f) {
  const __half2* h = reinterpret_cast<const __half2*>(&v);
#pragma unroll
  for (int i = 0; i < 4; ++i) {
    const float2 x = __half22float2(h[i]);
    f[2 * i] = x.x;
    f[2 * i + 1] = x.y;
  }
}
__device__ __forceinline__ float round_fp16(float x) { return __half2float(__float2half_rn(x)); }
}  // namespace

// The first position of the launch: the device int when given, else the by-value p0.
__device__ __forceinline__ int decode_p0(int p0, const int* __restrict__ p0_dev) { return p0_dev ? *p0_dev : p0; }
// A device position whose context does not fit the cache (the host checks by-value ones).
__device__ __forceinline__ bool decode_context_invalid(int p0, int T, int max_ctx) {
  return !dev::cache_rows_fit(p0, T, max_ctx);
}

// grid (>= n_splits, H, T); block 128. part: [T][H][n_splits][HD + 2] fp32, n_splits of the live
// context (decode_split_plan); blocks with split >= n_splits exit at once.
template <int HD>
__global__ void __launch_bounds__(DecodeCfg<HD>::kThreads)
    k_attn_decode_split(const uint16_t* __restrict__ q16, const uint16_t* __restrict__ k_cache,
                        const uint16_t* __restrict__ v_cache, float* __restrict__ part, int H, int Hkv, int p0_arg,
                        const int* __restrict__ p0_dev, int max_ctx, int target_blocks, float scale_log2) {
  using Cfg = DecodeCfg<HD>;
  __shared__ float s_m[Cfg::kGroups], s_l[Cfg::kGroups];
  __shared__ float s_acc[Cfg::kGroups][HD];
  const int split = blockIdx.x, h = blockIdx.y, t = blockIdx.z;
  dev::pdl_launch_dependents();  // the combine may be resident, waiting, before the splits end
  dev::pdl_wait();               // q and the caches belong to the kernels before this one
  const int p0 = decode_p0(p0_arg, p0_dev), T = static_cast<int>(gridDim.z);
  if (decode_context_invalid(p0, T, max_ctx)) return;  // the combine writes NaN
  const DecodeSplitPlan plan = decode_split_plan<HD>(T * H, p0 + T, target_blocks);
  if (split >= plan.n_splits) return;  // block-uniform: past the live context's splits
  const int n_splits = plan.n_splits, keys_per_split = plan.keys_per_split;
  const int g = h / (H / Hkv);
  const int n_keys = p0 + t + 1;  // causal: keys 0 .. p0+t
  const int c_begin = split * keys_per_split;
  const int c_end = min(c_begin + keys_per_split, n_keys);
  const int group = threadIdx.x / Cfg::kLanesPerKey, sub = threadIdx.x % Cfg::kLanesPerKey;
  const int dim0 = sub * Cfg::kElems;

  float q[Cfg::kElems];
  {
    const uint4* qp = reinterpret_cast<const uint4*>(q16 + (static_cast<int64_t>(t) * H + h) * HD + dim0);
#pragma unroll
    for (int v = 0; v < Cfg::kVecs; ++v) unpack8(qp[v], q + 8 * v);
  }
  const uint16_t* k_head = k_cache + static_cast<int64_t>(g) * max_ctx * HD + dim0;
  const uint16_t* v_head = v_cache + static_cast<int64_t>(g) * max_ctx * HD + dim0;

  float m = -INFINITY, l = 0.0f;
  float acc[Cfg::kElems];
#pragma unroll
  for (int e = 0; e < Cfg::kElems; ++e) acc[e] = 0.0f;

  // The step loop is block-uniform (the dot reductions shuffle across the whole warp); keys past
  // c_end are masked, and a group may see none in a step.
  for (int base = c_begin; base < c_end; base += Cfg::kGroups * Cfg::kUnroll) {
    uint4 kv[Cfg::kUnroll][Cfg::kVecs], vv[Cfg::kUnroll][Cfg::kVecs];
    bool valid[Cfg::kUnroll];
#pragma unroll
    for (int u = 0; u < Cfg::kUnroll; ++u) {  // issue all loads of the step before using any
      const int key = base + u * Cfg::kGroups + group;
      valid[u] = key < c_end;
#pragma unroll
      for (int v = 0; v < Cfg::kVecs; ++v) {
        kv[u][v] = valid[u] ? reinterpret_cast<const uint4*>(k_head + static_cast<int64_t>(key) * HD)[v] : uint4{};
        vv[u][v] = valid[u] ? reinterpret_cast<const uint4*>(v_head + static_cast<int64_t>(key) * HD)[v] : uint4{};
      }
    }
    float s[Cfg::kUnroll];
#pragma unroll
    for (int u = 0; u < Cfg::kUnroll; ++u) {
      float dot = 0.0f;
#pragma unroll
      for (int v = 0; v < Cfg::kVecs; ++v) {
        float kf[8];
        unpack8(kv[u][v], kf);
#pragma unroll
        for (int i = 0; i < 8; ++i) dot = fmaf(q[8 * v + i], kf[i], dot);
      }
      dot += __shfl_xor_sync(0xffffffffu, dot, 1);
      dot += __shfl_xor_sync(0xffffffffu, dot, 2);
      dot += __shfl_xor_sync(0xffffffffu, dot, 4);
      s[u] = valid[u] ? __fmul_rn(dot, scale_log2) : -INFINITY;
    }
    float m_new = m;
#pragma unroll
    for (int u = 0; u < Cfg::kUnroll; ++u) m_new = fmaxf(m_new, ceilf(s[u]));  // an integer (or -inf)
    const float m_use = m_new == -INFINITY ? 0.0f : m_new;  // nothing seen yet: keep exp2() arguments finite
    const float corr = exp2f(m - m_use);                     // 2^-k, exact
    l *= corr;
#pragma unroll
    for (int e = 0; e < Cfg::kElems; ++e) acc[e] *= corr;
#pragma unroll
    for (int u = 0; u < Cfg::kUnroll; ++u) {
      const float p = exp2f(s[u] - m_use);  // 0 for an invalid key
      l += p;
      const float p16 = round_fp16(p);
#pragma unroll
      for (int v = 0; v < Cfg::kVecs; ++v) {
        float vf[8];
        unpack8(vv[u][v], vf);
#pragma unroll
        for (int i = 0; i < 8; ++i) acc[8 * v + i] = fmaf(p16, vf[i], acc[8 * v + i]);
      }
    }
    m = m_new;
  }

  // Merge the groups of the block.
  if (sub == 0) s_m[group] = m, s_l[group] = l;
#pragma unroll
  for (int e = 0; e < Cfg::kElems; ++e) s_acc[group][dim0 + e] = acc[e];
  __syncthreads();
  float M = -INFINITY;
#pragma unroll
  for (int i = 0; i < Cfg::kGroups; ++i) M = fmaxf(M, s_m[i]);
  float* out = part + ((static_cast<int64_t>(t) * H + h) * n_splits + split) * Cfg::kPartFloats;
  const int d = threadIdx.x;
  if (M == -INFINITY) {  // this split lies past the row's causal end: an empty partial
    if (d < HD) out[d] = 0.0f;
    if (d == 0) out[HD] = -INFINITY, out[HD + 1] = 0.0f;
    return;
  }
  if (d < HD) {
    float a = 0.0f;
#pragma unroll
    for (int i = 0; i < Cfg::kGroups; ++i) a += s_acc[i][d] * exp2f(s_m[i] - M);
    out[d] = a;
  }
  if (d == 0) {
    float L = 0.0f;
#pragma unroll
    for (int i = 0; i < Cfg::kGroups; ++i) L += s_l[i] * exp2f(s_m[i] - M);
    out[HD] = M;
    out[HD + 1] = L;
  }
}

// grid (H, T); block HD. Merges the n_splits partials of each (t, h) and writes fp16(acc / l).
template <int HD>
__global__ void __launch_bounds__(DecodeCfg<HD>::kCombineThreads)
    k_attn_decode_combine(const float* __restrict__ part, uint16_t* __restrict__ o16, int H, int p0_arg,
                          const int* __restrict__ p0_dev, int max_ctx, int target_blocks) {
  using Cfg = DecodeCfg<HD>;
  dev::pdl_launch_dependents();  // attn_output's GEMV may start fetching weights (kernels/ptx.cuh)
  dev::pdl_wait();               // the splits' partials
  const int h = blockIdx.x, t = blockIdx.y, d = threadIdx.x;
  const int p0 = decode_p0(p0_arg, p0_dev), T = static_cast<int>(gridDim.y);
  if (decode_context_invalid(p0, T, max_ctx)) {  // visible, never an out-of-bounds read
    o16[(static_cast<int64_t>(t) * H + h) * HD + d] = dev::f2h_bits(__int_as_float(0x7fc00000));
    return;
  }
  const int n_splits = decode_split_plan<HD>(T * H, p0 + T, target_blocks).n_splits;
  const float* p = part + (static_cast<int64_t>(t) * H + h) * n_splits * Cfg::kPartFloats;
  float M = -INFINITY;
  for (int s = 0; s < n_splits; ++s) M = fmaxf(M, p[s * Cfg::kPartFloats + HD]);  // split 0 holds key 0: finite
  float L = 0.0f, a = 0.0f;
  for (int s = 0; s < n_splits; ++s) {
    const float w = exp2f(p[s * Cfg::kPartFloats + HD] - M);
    L += p[s * Cfg::kPartFloats + HD + 1] * w;
    a += p[s * Cfg::kPartFloats + d] * w;
  }
  o16[(static_cast<int64_t>(t) * H + h) * HD + d] = dev::f2h_bits(__fdiv_rn(a, L));
}

template __global__ void k_attn_decode_split<64>(const uint16_t*, const uint16_t*, const uint16_t*, float*, int, int,
                                                 int, const int*, int, int, float);
template __global__ void k_attn_decode_split<128>(const uint16_t*, const uint16_t*, const uint16_t*, float*, int, int,
                                                  int, const int*, int, int, float);
template __global__ void k_attn_decode_combine<64>(const float*, uint16_t*, int, int, const int*, int, int);
template __global__ void k_attn_decode_combine<128>(const float*, uint16_t*, int, int, const int*, int, int);
PFX_KERNEL_LAUNCH_INFO("k_attn_decode_split<64>", DecodeCfg<64>::kThreads, 0);
PFX_KERNEL_LAUNCH_INFO("k_attn_decode_split<128>", DecodeCfg<128>::kThreads, 0);
PFX_KERNEL_LAUNCH_INFO("k_attn_decode_combine<64>", DecodeCfg<64>::kCombineThreads, 0);
PFX_KERNEL_LAUNCH_INFO("k_attn_decode_combine<128>", DecodeCfg<128>::kCombineThreads, 0);

namespace {

int sm_count() {
  int dev = 0, n = 0;
  CUDA_CHECK(cudaGetDevice(&dev));
  CUDA_CHECK(cudaDeviceGetAttribute(&n, cudaDevAttrMultiProcessorCount, dev));
  return n;
}

// By value: exactly the live context's splits. From the device: the most any context up to
// max_ctx can have (the kernels recompute the live plan and the extra blocks exit).
template <int HD>
void launch_decode(const AttentionArgs& a, float* part, cudaStream_t stream) {
  using Cfg = DecodeCfg<HD>;
  const int target_blocks = 2 * sm_count();
  const int rows = a.T * a.H;
  const int grid_splits = a.p0_dev ? decode_split_plan<HD>(rows, a.max_ctx, target_blocks).bound
                                   : decode_split_plan<HD>(rows, a.p0 + a.T, target_blocks).n_splits;
  // Both as programmatic dependents (kernels/pdl_launch.h): their blocks are resident, waiting in
  // pdl_wait, when the kernel before ends, instead of being launched then.
  detail::launch_pdl(k_attn_decode_split<HD>, dim3(grid_splits, a.H, a.T), dim3(Cfg::kThreads), 0, stream, a.q16,
                     a.k_cache, a.v_cache, part, a.H, a.Hkv, a.p0, a.p0_dev, a.max_ctx, target_blocks,
                     detail::attention_score_scale(HD));
  CUDA_CHECK_LAUNCH();
  detail::launch_pdl(k_attn_decode_combine<HD>, dim3(a.H, a.T), dim3(Cfg::kCombineThreads), 0, stream,
                     static_cast<const float*>(part), a.o16, a.H, a.p0, a.p0_dev, a.max_ctx, target_blocks);
  CUDA_CHECK_LAUNCH();
}

}  // namespace

size_t attention_decode_scratch_bytes(int T, int H, int hd) {
  const int part_floats = hd + 2;
  static_assert(DecodeCfg<64>::kMaxSplits == DecodeCfg<128>::kMaxSplits, "one scratch bound for both head dims");
  return static_cast<size_t>(T) * H * DecodeCfg<64>::kMaxSplits * part_floats * sizeof(float);
}

void attention_decode(const AttentionArgs& a, void* scratch, size_t scratch_bytes, cudaStream_t stream) {
  detail::check_attention_args("attention_decode", a, /*device_position=*/true);
  const char* why = attention_fast_unsupported_reason(a);
  detail::require(why == nullptr, "attention_decode: ", why ? why : "", " (hd=", a.hd, ")");
  const size_t need = attention_decode_scratch_bytes(a.T, a.H, a.hd);
  detail::require(scratch != nullptr && scratch_bytes >= need, "attention_decode: scratch of ", scratch_bytes,
                  " bytes, need ", need);
  detail::require(detail::is_aligned(scratch, 16), "attention_decode: scratch not 16-byte aligned");
  float* part = static_cast<float*>(scratch);
  if (a.hd == 64) {
    launch_decode<64>(a, part, stream);
  } else {
    launch_decode<128>(a, part, stream);
  }
}

}  // namespace pfx::kernels

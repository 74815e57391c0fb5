// RoPE (ggml mode 0: adjacent pairs (2i, 2i+1), llama; mode 2 "neox": pairs (i, i + n_rot/2),
// qwen2; theta = pos * base^(-2i/n_rot) * freq_scale / freq_factors[i] over the first n_rot
// elements of each head) and the conversion of q/k/v to fp16 with the K/V cache write.
//   generic: k_rope_f32 rotates q32/k32 in place, then k_rope_store_qkv converts and scatters;
//   fast:    k_rope_fused does both in one pass, leaving q32/k32 untouched.
// cos/sin come from double-precision pow/sincos (rope_cos_sin) and the rotation is done with
// separately rounded fp32 operations (dev::rope_rotate_pair, kernels/rope_math.cuh; the fused
// GEMM's head-store epilogue uses it too), shared by every path: identical bits.
// The fused kernel can take its first position from device memory (QkvShape::p0_dev), so one
// captured CUDA graph serves every decode step.
#include <algorithm>

#include "kernels/common.cuh"
#include "kernels/cuda_check.h"
#include "kernels/kernels.h"
#include "kernels/launch_checks.h"
#include "kernels/launch_info.h"
#include "kernels/rope_math.cuh"

namespace pfx::kernels {

struct RopeCfg {
  static constexpr int kThreads = 128;
  static constexpr int kMaxHeadDim = 512;  // cos/sin table of kMaxHeadDim/2 float2 in static smem
  static constexpr int kTableBytes = kMaxHeadDim / 2 * 8;
  static_assert(sm90::is_warp_block(kThreads), "rope: block shape");
  static_assert(kTableBytes <= sm90::kDefaultSmemPerBlock, "rope: cos/sin table exceeds static smem");
};

namespace {

// The rotation a kernel applies (QkvShape's rope fields, n_rot resolved).
struct RopeArgs {
  int n_rot;
  bool neox;
  float base, freq_scale;
  const float* freq_factors;  // [n_rot/2] or nullptr
};

RopeArgs rope_args(const QkvShape& s) {
  return RopeArgs{s.n_rot == 0 ? s.hd : s.n_rot, s.neox, s.rope_base, s.freq_scale, s.freq_factors};
}

// cos/sin of theta = pos * base^(-2i/n_rot) * freq_scale / freq_factors[i], rounded once from
// double to float. (Multiplying by a freq_scale of 1 is exact: unscaled models keep their bits.)
__device__ __forceinline__ float2 rope_cos_sin(int pos, int i, const RopeArgs& r) {
  double inv_freq = pow(static_cast<double>(r.base), -2.0 * static_cast<double>(i) / static_cast<double>(r.n_rot));
  inv_freq *= static_cast<double>(r.freq_scale);
  if (r.freq_factors) inv_freq /= static_cast<double>(r.freq_factors[i]);
  double s, c;
  sincos(static_cast<double>(pos) * inv_freq, &s, &c);
  return make_float2(static_cast<float>(c), static_cast<float>(s));
}

// The two elements of a head that rotation pair i (< n_rot/2) turns.
__device__ __forceinline__ int2 pair_elements(int i, const RopeArgs& r) {
  return r.neox ? make_int2(i, i + r.n_rot / 2) : make_int2(2 * i, 2 * i + 1);
}

// Fills table[i] = cos/sin for the block's token; ends with a barrier.
__device__ __forceinline__ void fill_table(float2* table, int pos, const RopeArgs& r) {
  for (int i = threadIdx.x; i < r.n_rot / 2; i += RopeCfg::kThreads) table[i] = rope_cos_sin(pos, i, r);
  __syncthreads();
}

}  // namespace

// grid T; rotates the H query heads and Hkv key heads of token blockIdx.x in place.
__global__ void __launch_bounds__(RopeCfg::kThreads)
    k_rope_f32(float* __restrict__ q32, int64_t ld_q, float* __restrict__ k32, int64_t ld_k, int H, int Hkv, int hd,
               int p0, RopeArgs rope) {
  __shared__ float2 table[RopeCfg::kMaxHeadDim / 2];
  const int t = blockIdx.x;
  fill_table(table, p0 + t, rope);
  const int half = rope.n_rot / 2;
  float* q = q32 + static_cast<int64_t>(t) * ld_q;
  float* k = k32 + static_cast<int64_t>(t) * ld_k;
  for (int j = threadIdx.x; j < (H + Hkv) * half; j += RopeCfg::kThreads) {
    const int head = j / half, i = j % half;
    float* p = head < H ? q + head * hd : k + (head - H) * hd;
    const int2 e = pair_elements(i, rope);
    const float2 r = dev::rope_rotate_pair(p[e.x], p[e.y], table[i]);
    p[e.x] = r.x;
    p[e.y] = r.y;
  }
}
PFX_KERNEL_LAUNCH_INFO("k_rope_f32", RopeCfg::kThreads, 0);

// grid T; fp16 conversion of q (to q16) and k, v (to the caches at row p0 + t).
__global__ void __launch_bounds__(RopeCfg::kThreads)
    k_rope_store_qkv(const float* __restrict__ q32, int64_t ld_q, const float* __restrict__ k32, int64_t ld_k,
                     const float* __restrict__ v32, int64_t ld_v, uint16_t* __restrict__ q16,
                     uint16_t* __restrict__ k_cache, uint16_t* __restrict__ v_cache, int H, int Hkv, int hd, int p0,
                     int max_ctx) {
  const int t = blockIdx.x;
  const float* q = q32 + static_cast<int64_t>(t) * ld_q;
  const float* k = k32 + static_cast<int64_t>(t) * ld_k;
  const float* v = v32 + static_cast<int64_t>(t) * ld_v;
  uint16_t* qo = q16 + static_cast<int64_t>(t) * H * hd;
  for (int j = threadIdx.x; j < H * hd; j += RopeCfg::kThreads) qo[j] = dev::f2h_bits(q[j]);
  for (int j = threadIdx.x; j < Hkv * hd; j += RopeCfg::kThreads) {
    const int g = j / hd, d = j % hd;
    const int64_t dst = (static_cast<int64_t>(g) * max_ctx + p0 + t) * hd + d;
    k_cache[dst] = dev::f2h_bits(k[j]);
    v_cache[dst] = dev::f2h_bits(v[j]);
  }
}
PFX_KERNEL_LAUNCH_INFO("k_rope_store_qkv", RopeCfg::kThreads, 0);

// One head's rotation + fp16 conversion for the general layouts (neox pairs, or n_rot < hd: the
// elements past n_rot pass unrotated), element by element: x [hd] fp32 → out [hd] fp16. `lane`
// and `lanes` split the work among the block's threads.
__device__ __forceinline__ void rope_head_general(const float* x, uint16_t* out, int hd, const float2* table,
                                                  const RopeArgs& rope, int lane, int lanes) {
  const int half = rope.n_rot / 2;
  for (int i = lane; i < half; i += lanes) {
    const int2 e = pair_elements(i, rope);
    const float2 r = dev::rope_rotate_pair(x[e.x], x[e.y], table[i]);
    out[e.x] = dev::f2h_bits(r.x);
    out[e.y] = dev::f2h_bits(r.y);
  }
  for (int d = rope.n_rot + lane; d < hd; d += lanes) out[d] = dev::f2h_bits(x[d]);
}

// [first, end) of n items for slice s of `slices` (every item in exactly one slice).
__device__ __forceinline__ int2 slice_of(int n, int s, int slices) { return make_int2(n * s / slices, n * (s + 1) / slices); }

// grid (T, slices); rotation + conversion + cache write, reading unrotated q32/k32 (as float2
// pairs for the common layout: adjacent pairs over the whole head). Slice blockIdx.y of the
// query heads and of the key/value heads; short prompts use many slices (rope_store_qkv_fused),
// so that a decode step's token is not one block walking every head (4.4 µs per layer on the H200).
// p0 from *p0_dev when that is set; a device position whose rows do not fit the cache writes
// nothing (block-uniform exit).
__global__ void __launch_bounds__(RopeCfg::kThreads)
    k_rope_fused(const float* __restrict__ q32, int64_t ld_q, const float* __restrict__ k32, int64_t ld_k,
                 const float* __restrict__ v32, int64_t ld_v, uint16_t* __restrict__ q16, uint16_t* __restrict__ k_cache,
                 uint16_t* __restrict__ v_cache, int H, int Hkv, int hd, int p0_arg, const int* __restrict__ p0_dev,
                 int max_ctx, RopeArgs rope) {
  __shared__ float2 table[RopeCfg::kMaxHeadDim / 2];
  const int t = blockIdx.x;
  const int p0 = p0_dev ? *p0_dev : p0_arg;
  if (!dev::cache_rows_fit(p0, gridDim.x, max_ctx)) return;
  fill_table(table, p0 + t, rope);
  const int2 qh = slice_of(H, blockIdx.y, gridDim.y), kh = slice_of(Hkv, blockIdx.y, gridDim.y);
  if (rope.neox || rope.n_rot != hd) {
    // General layouts: one warp per head, element by element.
    const int warp = threadIdx.x / sm90::kWarpSize, lane = threadIdx.x % sm90::kWarpSize;
    constexpr int kWarps = RopeCfg::kThreads / sm90::kWarpSize;
    for (int head = qh.x + warp; head < qh.y; head += kWarps)
      rope_head_general(q32 + static_cast<int64_t>(t) * ld_q + head * hd,
                        q16 + (static_cast<int64_t>(t) * H + head) * hd, hd, table, rope, lane, sm90::kWarpSize);
    for (int g = kh.x + warp; g < kh.y; g += kWarps) {
      const int64_t row = (static_cast<int64_t>(g) * max_ctx + p0 + t) * hd;
      rope_head_general(k32 + static_cast<int64_t>(t) * ld_k + g * hd, k_cache + row, hd, table, rope, lane,
                        sm90::kWarpSize);
      const float* v = v32 + static_cast<int64_t>(t) * ld_v + g * hd;
      for (int d = lane; d < hd; d += sm90::kWarpSize) v_cache[row + d] = dev::f2h_bits(v[d]);
    }
    return;
  }
  const int half = hd / 2;
  const float2* q = reinterpret_cast<const float2*>(q32 + static_cast<int64_t>(t) * ld_q);
  const float2* k = reinterpret_cast<const float2*>(k32 + static_cast<int64_t>(t) * ld_k);
  const float2* v = reinterpret_cast<const float2*>(v32 + static_cast<int64_t>(t) * ld_v);
  uint32_t* qo = reinterpret_cast<uint32_t*>(q16 + static_cast<int64_t>(t) * H * hd);
  for (int j = qh.x * half + threadIdx.x; j < qh.y * half; j += RopeCfg::kThreads) {
    const float2 x = q[j];
    const float2 r = dev::rope_rotate_pair(x.x, x.y, table[j % half]);
    qo[j] = dev::pack_half2_rn(r.x, r.y);
  }
  for (int j = kh.x * half + threadIdx.x; j < kh.y * half; j += RopeCfg::kThreads) {
    const int g = j / half, i = j % half;
    const int64_t dst = ((static_cast<int64_t>(g) * max_ctx + p0 + t) * hd) / 2 + i;  // in pairs
    const float2 x = k[j];
    const float2 r = dev::rope_rotate_pair(x.x, x.y, table[i]);
    reinterpret_cast<uint32_t*>(k_cache)[dst] = dev::pack_half2_rn(r.x, r.y);
    const float2 y = v[j];
    reinterpret_cast<uint32_t*>(v_cache)[dst] = dev::pack_half2_rn(y.x, y.y);
  }
}
PFX_KERNEL_LAUNCH_INFO("k_rope_fused", RopeCfg::kThreads, 0);

// grid T; table[t][i] = cos/sin of rotation pair i at position p0 + t: the values every other
// RoPE kernel computes for itself (fill_table), for an epilogue that rotates as it stores. p0 from
// *p0_dev when that is set (a graph-captured decode step); a device position whose rows do not fit
// the cache writes nothing (the epilogues then store nothing either).
__global__ void __launch_bounds__(RopeCfg::kThreads)
    k_rope_table(float2* __restrict__ table, int p0_arg, const int* __restrict__ p0_dev, int max_ctx, RopeArgs rope) {
  const int t = blockIdx.x, half = rope.n_rot / 2;
  const int p0 = p0_dev ? *p0_dev : p0_arg;
  if (!dev::cache_rows_fit(p0, gridDim.x, max_ctx)) return;
  for (int i = threadIdx.x; i < half; i += RopeCfg::kThreads)
    table[static_cast<int64_t>(t) * half + i] = rope_cos_sin(p0 + t, i, rope);
}
PFX_KERNEL_LAUNCH_INFO("k_rope_table", RopeCfg::kThreads, 0);

namespace {

// device_position: the launcher passes s.p0_dev to its kernel; then s.p0 is not checked (the
// kernel guards the device value) and T alone must fit the cache.
void check_shape(const char* who, const QkvShape& s, bool device_position = false) {
  detail::require(s.T >= 1 && s.H >= 1 && s.Hkv >= 1 && s.hd >= 2, who, ": T=", s.T, " H=", s.H, " Hkv=", s.Hkv,
                  " hd=", s.hd, " must be positive (hd >= 2)");
  detail::require(s.hd % 2 == 0 && s.hd <= RopeCfg::kMaxHeadDim, who, ": head dim ", s.hd, " must be even and <= ",
                  RopeCfg::kMaxHeadDim);
  detail::require(s.H % s.Hkv == 0, who, ": H=", s.H, " is not a multiple of Hkv=", s.Hkv);
  detail::require(device_position || s.p0_dev == nullptr, who,
                  ": takes the position by value only (p0_dev must be null)");
  const int p0 = s.p0_dev ? 0 : s.p0;
  detail::require(p0 >= 0 && s.max_ctx >= 1 && static_cast<int64_t>(p0) + s.T <= s.max_ctx, who, ": positions ",
                  p0, "..", static_cast<int64_t>(p0) + s.T - 1, " do not fit the cache (max_ctx ", s.max_ctx, ")");
  detail::require(s.rope_base > 0.0f, who, ": rope base ", s.rope_base, " must be positive");
  const int n_rot = s.n_rot == 0 ? s.hd : s.n_rot;
  detail::require(n_rot >= 2 && n_rot % 2 == 0 && n_rot <= s.hd, who, ": n_rot ", s.n_rot,
                  " must be 0 (= hd) or even and in [2, hd = ", s.hd, "]");
  detail::require(s.freq_scale > 0.0f, who, ": freq_scale ", s.freq_scale, " must be positive");
}

void check_io(const char* who, const QkvInput& in, const QkvOutput& out, const QkvShape& s, bool pairs) {
  detail::require(in.q32 && in.k32 && in.v32 && out.q16 && out.k_cache && out.v_cache, who, ": null pointer");
  detail::require(in.ld_q >= static_cast<int64_t>(s.H) * s.hd, who, ": ld_q ", in.ld_q, " < H*hd ", s.H * s.hd);
  detail::require(in.ld_k >= static_cast<int64_t>(s.Hkv) * s.hd, who, ": ld_k ", in.ld_k, " < Hkv*hd ", s.Hkv * s.hd);
  detail::require(in.ld_v >= static_cast<int64_t>(s.Hkv) * s.hd, who, ": ld_v ", in.ld_v, " < Hkv*hd ", s.Hkv * s.hd);
  if (pairs) {  // float2 loads and half2 stores
    detail::require(in.ld_q % 2 == 0 && in.ld_k % 2 == 0 && in.ld_v % 2 == 0, who, ": row strides must be even");
    detail::require(detail::is_aligned(in.q32, 8) && detail::is_aligned(in.k32, 8) && detail::is_aligned(in.v32, 8),
                    who, ": q32/k32/v32 must be 8-byte aligned");
    detail::require(detail::is_aligned(out.q16, 4) && detail::is_aligned(out.k_cache, 4) &&
                        detail::is_aligned(out.v_cache, 4),
                    who, ": q16/k_cache/v_cache must be 4-byte aligned");
  }
}

}  // namespace

void rope_f32(float* q32, int64_t ld_q, float* k32, int64_t ld_k, const QkvShape& s, cudaStream_t stream) {
  check_shape("rope_f32", s);
  detail::require(q32 && k32, "rope_f32: null pointer");
  detail::require(ld_q >= static_cast<int64_t>(s.H) * s.hd && ld_k >= static_cast<int64_t>(s.Hkv) * s.hd,
                  "rope_f32: row stride smaller than the heads it holds");
  k_rope_f32<<<s.T, RopeCfg::kThreads, 0, stream>>>(q32, ld_q, k32, ld_k, s.H, s.Hkv, s.hd, s.p0, rope_args(s));
  CUDA_CHECK_LAUNCH();
}

void store_qkv(const QkvInput& in, const QkvOutput& out, const QkvShape& s, cudaStream_t stream) {
  check_shape("store_qkv", s);
  check_io("store_qkv", in, out, s, false);
  k_rope_store_qkv<<<s.T, RopeCfg::kThreads, 0, stream>>>(in.q32, in.ld_q, in.k32, in.ld_k, in.v32, in.ld_v, out.q16,
                                                          out.k_cache, out.v_cache, s.H, s.Hkv, s.hd, s.p0, s.max_ctx);
  CUDA_CHECK_LAUNCH();
}

void rope_store_qkv_fused(const QkvInput& in, const QkvOutput& out, const QkvShape& s, cudaStream_t stream) {
  check_shape("rope_store_qkv_fused", s, /*device_position=*/true);
  check_io("rope_store_qkv_fused", in, out, s, true);
  // Slices of the heads per token: enough blocks for about two per SM (132 on the H200) at short
  // prompts, one per token at prefill sizes (T >= 264), never more than the query heads.
  const int slices = static_cast<int>(std::clamp<int64_t>((264 + s.T - 1) / s.T, 1, s.H));
  k_rope_fused<<<dim3(static_cast<unsigned>(s.T), static_cast<unsigned>(slices)), RopeCfg::kThreads, 0, stream>>>(
      in.q32, in.ld_q, in.k32, in.ld_k, in.v32, in.ld_v, out.q16, out.k_cache, out.v_cache, s.H, s.Hkv, s.hd, s.p0,
      s.p0_dev, s.max_ctx, rope_args(s));
  CUDA_CHECK_LAUNCH();
}

void rope_table(const QkvShape& s, float* cos_sin, cudaStream_t stream) {
  check_shape("rope_table", s, /*device_position=*/true);
  detail::require(cos_sin != nullptr && detail::is_aligned(cos_sin, 8), "rope_table: cos_sin must be 8-byte aligned, not null");
  k_rope_table<<<s.T, RopeCfg::kThreads, 0, stream>>>(reinterpret_cast<float2*>(cos_sin), s.p0, s.p0_dev, s.max_ctx,
                                                      rope_args(s));
  CUDA_CHECK_LAUNCH();
}

}  // namespace pfx::kernels

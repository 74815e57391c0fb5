// Generic causal GQA attention: the plain, trusted reference path. Two implementations, one per
// kind of head dim, each the plain form of the arithmetic the fast path uses there:
//
// hd 64 and 128 (where the fast path runs flash attention), k_attn_tiled: one warp per 16 query
// rows walks every key tile from 0 with plain global loads straight into the mma fragments (no
// shared memory, no async copies, no swizzle, no tile skipping, no pipelining), and hands the
// fragments to attention_tile.cuh's softmax step in flash's order. So fast and generic agree bit
// for bit, and the parity gate sees any race, bad offset or missing fence of the flash kernel as
// a difference instead of losing it in fp32 summation noise (which 32 layers of a 7B model grow
// to ~2e-3, as large as the distance of either path from an f32 reference).
//
// Other head dims (no fast kernel: both paths run this), two passes over the scores:
//   S[h] = c * Q_h · K_gᵀ            cuBLAS strided-batched GEMM per kv group g (the G = H/Hkv
//                                     query heads of a group share K_g: stride 0), fp32 out;
//                                     c = log2(e)/sqrt(hd) (attention_shared.h)
//   P[h] = fp16(exp2(S[h] - m)), l    k_attn_softmax_causal, one block per row: m = the causal row
//                                     max rounded up to an integer, l = fp32 sum of exp2(s - m)
//   O_h  = P_h · V_g                   cuBLAS strided-batched GEMM, fp32 accumulate, fp32 out
//   o16  = fp16(O / l)                 k_attn_normalize
// Scratch (two-pass only): S fp32 [H][T][ld], P fp16 [H][T][ld] (ld = ctx rounded up to 8: 16-byte
// rows), O fp32 [T][H*hd], l fp32 [H][T].
#include <cublas_v2.h>

#include <algorithm>
#include <cmath>

#include "kernels/attention_shared.h"
#include "kernels/attention_tile.cuh"
#include "kernels/common.cuh"
#include "kernels/cuda_check.h"
#include "kernels/kernels.h"
#include "kernels/launch_checks.h"
#include "kernels/launch_info.h"

namespace pfx::kernels {

struct SoftmaxCfg {
  static constexpr int kThreads = 256;
  static_assert(sm90::is_warp_block(kThreads), "softmax: whole warps, within the block limit");
};

// grid (T, H). Row t of head h: columns c <= p0 + t get fp16(exp2(s - m)), the rest 0, with
// m = ceil(max of the visible s); l[h][t] = the fp32 sum of the unrounded exp2(s - m).
__global__ void __launch_bounds__(SoftmaxCfg::kThreads)
    k_attn_softmax_causal(const float* __restrict__ S, uint16_t* __restrict__ P, float* __restrict__ l, int T, int ld,
                          int p0) {
  __shared__ float scratch[SoftmaxCfg::kThreads / 32];
  const int t = blockIdx.x, h = blockIdx.y;
  const int64_t row_off = (static_cast<int64_t>(h) * T + t) * ld;
  const float* s = S + row_off;
  uint16_t* p = P + row_off;
  const int n_valid = p0 + t + 1;
  float m = -INFINITY;
  for (int c = threadIdx.x; c < n_valid; c += SoftmaxCfg::kThreads) m = fmaxf(m, s[c]);
  m = ceilf(dev::block_max<SoftmaxCfg::kThreads>(m, scratch));  // finite: key p0 + t is always visible
  float sum = 0.0f;
  for (int c = threadIdx.x; c < ld; c += SoftmaxCfg::kThreads) {
    const float e = c < n_valid ? exp2f(s[c] - m) : 0.0f;
    sum += e;
    p[c] = dev::f2h_bits(e);
  }
  sum = dev::block_sum<SoftmaxCfg::kThreads>(sum, scratch);
  if (threadIdx.x == 0) l[static_cast<int64_t>(h) * T + t] = sum;
}
PFX_KERNEL_LAUNCH_INFO("k_attn_softmax_causal", SoftmaxCfg::kThreads, 0);

struct NormalizeCfg {
  static constexpr int kThreads = 256;
};

// o16[t, h*hd + d] = fp16(O[t, h*hd + d] / l[h][t]) over n = T*H*hd elements, grid-stride.
__global__ void __launch_bounds__(NormalizeCfg::kThreads)
    k_attn_normalize(const float* __restrict__ O, const float* __restrict__ l, uint16_t* __restrict__ o16, int T,
                     int H, int hd) {
  const int64_t n = static_cast<int64_t>(T) * H * hd;
  for (int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    const int64_t row = i / hd;  // t * H + h
    const int64_t t = row / H, h = row % H;
    o16[i] = dev::f2h_bits(__fdiv_rn(O[i], l[h * T + t]));
  }
}
PFX_KERNEL_LAUNCH_INFO("k_attn_normalize", NormalizeCfg::kThreads, 0);

struct TiledCfg {
  static constexpr int kWarps = 4;  // independent warps, 16 query rows each
  static constexpr int kThreads = kWarps * sm90::kWarpSize;
  static constexpr int kRowsPerBlock = 16 * kWarps;
};

namespace {
// Two fp16 at p (4-byte aligned) as one fragment register.
__device__ __forceinline__ uint32_t load_pair(const uint16_t* p) { return *reinterpret_cast<const uint32_t*>(p); }
}  // namespace

// grid (ceil(T / 64), H); block 128. Fragment layouts: attention_tile.cuh. Keys at or past the
// context read as 0 (flash zero-fills them too), and query rows past T as 0.
template <int HD>
__global__ void __launch_bounds__(TiledCfg::kThreads)
    k_attn_tiled(const uint16_t* __restrict__ q16, const uint16_t* __restrict__ k_cache,
                 const uint16_t* __restrict__ v_cache, uint16_t* __restrict__ o16, int T, int H, int Hkv, int p0,
                 int max_ctx, float scale_log2) {
  constexpr int kTile = dev::kAttnKeyTile;
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  const int h = blockIdx.y, g = h / (H / Hkv);
  const int t0w = blockIdx.x * TiledCfg::kRowsPerBlock + warp * 16;  // this warp's first query row
  if (t0w >= T) return;  // whole warp; no block barriers here
  const int ctx = p0 + T;
  const uint16_t* K = k_cache + static_cast<int64_t>(g) * max_ctx * HD;
  const uint16_t* V = v_cache + static_cast<int64_t>(g) * max_ctx * HD;
  const int row = lane / 4, c = 2 * (lane % 4);  // fragment row (g) and column pair (c) of this lane

  auto q_pair = [&](int r, int d) -> uint32_t {
    const int t = t0w + r;
    return t < T ? load_pair(q16 + (static_cast<int64_t>(t) * H + h) * HD + d) : 0u;
  };
  auto k_pair = [&](int key, int d) -> uint32_t {  // dims d, d+1 of one key
    return key < ctx ? load_pair(K + static_cast<int64_t>(key) * HD + d) : 0u;
  };
  auto v_pair = [&](int key, int d) -> uint32_t {  // dim d of keys key, key+1
    const uint32_t lo = key < ctx ? V[static_cast<int64_t>(key) * HD + d] : 0u;
    const uint32_t hi = key + 1 < ctx ? V[static_cast<int64_t>(key + 1) * HD + d] : 0u;
    return lo | (hi << 16);
  };

  uint32_t qf[HD / 16][4];
#pragma unroll
  for (int kk = 0; kk < HD / 16; ++kk) {
    qf[kk][0] = q_pair(row, 16 * kk + c);
    qf[kk][1] = q_pair(row + 8, 16 * kk + c);
    qf[kk][2] = q_pair(row, 16 * kk + 8 + c);
    qf[kk][3] = q_pair(row + 8, 16 * kk + 8 + c);
  }
  float o[HD / 8][4];
#pragma unroll
  for (int n = 0; n < HD / 8; ++n) o[n][0] = o[n][1] = o[n][2] = o[n][3] = 0.0f;
  float m_run[2] = {-INFINITY, -INFINITY};
  float l_run[2] = {0.0f, 0.0f};
  const int pos0 = p0 + t0w + row;
  const int n_tiles = (p0 + min(t0w + 16, T) + kTile - 1) / kTile;  // through this warp's last visible key

  for (int j = 0; j < n_tiles; ++j) {
    const int key0 = j * kTile;
    float s[kTile / 8][4];
#pragma unroll
    for (int n = 0; n < kTile / 8; ++n) s[n][0] = s[n][1] = s[n][2] = s[n][3] = 0.0f;
#pragma unroll
    for (int kk = 0; kk < HD / 16; ++kk) {
#pragma unroll
      for (int jn = 0; jn < kTile / 16; ++jn) {
        const int key = key0 + 16 * jn + row;
        const uint32_t b_lo[2] = {k_pair(key, 16 * kk + c), k_pair(key, 16 * kk + 8 + c)};
        const uint32_t b_hi[2] = {k_pair(key + 8, 16 * kk + c), k_pair(key + 8, 16 * kk + 8 + c)};
        dev::mma_m16n8k16_f16_f32(s[2 * jn], qf[kk], b_lo);
        dev::mma_m16n8k16_f16_f32(s[2 * jn + 1], qf[kk], b_hi);
      }
    }
    uint32_t pf[kTile / 16][4];
    dev::softmax_tile<HD>(s, pf, o, m_run, l_run, key0, pos0, ctx, /*need_mask=*/true, scale_log2, lane);
#pragma unroll
    for (int kk = 0; kk < kTile / 16; ++kk) {
#pragma unroll
      for (int dp = 0; dp < HD / 16; ++dp) {
        const int key = key0 + 16 * kk + c;
        const uint32_t b_lo[2] = {v_pair(key, 16 * dp + row), v_pair(key + 8, 16 * dp + row)};
        const uint32_t b_hi[2] = {v_pair(key, 16 * dp + 8 + row), v_pair(key + 8, 16 * dp + 8 + row)};
        dev::mma_m16n8k16_f16_f32(o[2 * dp], pf[kk], b_lo);
        dev::mma_m16n8k16_f16_f32(o[2 * dp + 1], pf[kk], b_hi);
      }
    }
  }
  dev::store_rows<HD>(o, l_run, o16, t0w, T, H, h, lane);
}
template __global__ void k_attn_tiled<64>(const uint16_t*, const uint16_t*, const uint16_t*, uint16_t*, int, int, int,
                                          int, int, float);
template __global__ void k_attn_tiled<128>(const uint16_t*, const uint16_t*, const uint16_t*, uint16_t*, int, int,
                                           int, int, int, float);
PFX_KERNEL_LAUNCH_INFO("k_attn_tiled<64>", TiledCfg::kThreads, 0);
PFX_KERNEL_LAUNCH_INFO("k_attn_tiled<128>", TiledCfg::kThreads, 0);

namespace {
template <int HD>
void launch_tiled(const AttentionArgs& a, cudaStream_t stream) {
  const dim3 grid((a.T + TiledCfg::kRowsPerBlock - 1) / TiledCfg::kRowsPerBlock, a.H);
  k_attn_tiled<HD><<<grid, TiledCfg::kThreads, 0, stream>>>(a.q16, a.k_cache, a.v_cache, a.o16, a.T, a.H, a.Hkv, a.p0,
                                                            a.max_ctx, detail::attention_score_scale(HD));
  CUDA_CHECK_LAUNCH();
}

constexpr size_t kScratchAlign = 256;
int64_t padded_ld(int ctx) { return (static_cast<int64_t>(ctx) + 7) / 8 * 8; }
size_t align_up(size_t n) { return (n + kScratchAlign - 1) / kScratchAlign * kScratchAlign; }
// The four scratch arrays, each starting 256-byte aligned.
struct ScratchLayout {
  size_t scores, probs, out, sums, total;
  ScratchLayout(int T, int ctx, int H, int hd) {
    const size_t cells = static_cast<size_t>(H) * T * padded_ld(ctx);
    scores = 0;
    probs = scores + align_up(cells * sizeof(float));
    out = probs + align_up(cells * sizeof(uint16_t));
    sums = out + align_up(static_cast<size_t>(T) * H * hd * sizeof(float));
    total = sums + align_up(static_cast<size_t>(H) * T * sizeof(float));
  }
};
// Head dims the tiled kernel takes (flash's); it keeps everything in registers, so only the
// two-pass form needs scratch.
bool runs_tiled(int hd) { return hd == 64 || hd == 128; }
}  // namespace

size_t attention_generic_scratch_bytes(int T, int ctx, int H, int hd) {
  return runs_tiled(hd) ? 0 : ScratchLayout(T, ctx, H, hd).total;
}

void attention_generic(const AttentionArgs& a, cublasContext* cublas, void* scratch, size_t scratch_bytes,
                       cudaStream_t stream) {
  detail::check_attention_args("attention_generic", a);
  detail::require(cublas != nullptr, "attention_generic: null cuBLAS handle");
  if (runs_tiled(a.hd)) return a.hd == 64 ? launch_tiled<64>(a, stream) : launch_tiled<128>(a, stream);
  const int ctx = a.p0 + a.T;
  const ScratchLayout layout(a.T, ctx, a.H, a.hd);
  detail::require(scratch != nullptr && scratch_bytes >= layout.total, "attention_generic: scratch of ", scratch_bytes,
                  " bytes, need ", layout.total, " (T=", a.T, ", ctx=", ctx, ", H=", a.H, ", hd=", a.hd, ")");
  detail::require(detail::is_aligned(scratch, kScratchAlign), "attention_generic: scratch not 256-byte aligned");
  const int64_t ld = padded_ld(ctx);
  char* base = static_cast<char*>(scratch);
  auto* S = reinterpret_cast<float*>(base + layout.scores);
  auto* P = reinterpret_cast<uint16_t*>(base + layout.probs);
  auto* O = reinterpret_cast<float*>(base + layout.out);
  auto* l = reinterpret_cast<float*>(base + layout.sums);
  const int G = a.H / a.Hkv;
  const int64_t q_row = static_cast<int64_t>(a.H) * a.hd;  // elements between tokens in q16 and o16
  const int64_t head_mat = static_cast<int64_t>(a.T) * ld;  // elements of one head's S or P
  const float scale = detail::attention_score_scale(a.hd);
  const float one = 1.0f, zero = 0.0f;

  CUBLAS_CHECK(cublasSetStream(cublas, stream));
  for (int g = 0; g < a.Hkv; ++g) {
    // Column-major view: S_h (ctx x T, ld) = K_g(hd x ctx, ld hd)ᵀ · Q_h(hd x T, ld H*hd).
    const uint16_t* K = a.k_cache + static_cast<int64_t>(g) * a.max_ctx * a.hd;
    const uint16_t* Q = a.q16 + static_cast<int64_t>(g) * G * a.hd;
    CUBLAS_CHECK(cublasGemmStridedBatchedEx(cublas, CUBLAS_OP_T, CUBLAS_OP_N, ctx, a.T, a.hd, &scale, K, CUDA_R_16F,
                                            a.hd, 0, Q, CUDA_R_16F, static_cast<int>(q_row), a.hd, &zero,
                                            S + static_cast<int64_t>(g) * G * head_mat, CUDA_R_32F, static_cast<int>(ld),
                                            head_mat, G, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT));
  }
  k_attn_softmax_causal<<<dim3(a.T, a.H), SoftmaxCfg::kThreads, 0, stream>>>(S, P, l, a.T, static_cast<int>(ld), a.p0);
  CUDA_CHECK_LAUNCH();
  for (int g = 0; g < a.Hkv; ++g) {
    // O_h (hd x T, ld H*hd) = V_g (hd x ctx, ld hd) · P_h (ctx x T, ld), fp32 out.
    const uint16_t* V = a.v_cache + static_cast<int64_t>(g) * a.max_ctx * a.hd;
    CUBLAS_CHECK(cublasGemmStridedBatchedEx(cublas, CUBLAS_OP_N, CUBLAS_OP_N, a.hd, a.T, ctx, &one, V, CUDA_R_16F, a.hd,
                                            0, P + static_cast<int64_t>(g) * G * head_mat, CUDA_R_16F,
                                            static_cast<int>(ld), head_mat, &zero,
                                            O + static_cast<int64_t>(g) * G * a.hd, CUDA_R_32F,
                                            static_cast<int>(q_row), a.hd, G, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT));
  }
  const int64_t n = static_cast<int64_t>(a.T) * q_row;
  const int blocks = static_cast<int>(std::min<int64_t>((n + NormalizeCfg::kThreads - 1) / NormalizeCfg::kThreads, 65535));
  k_attn_normalize<<<blocks, NormalizeCfg::kThreads, 0, stream>>>(O, l, a.o16, a.T, a.H, a.hd);
  CUDA_CHECK_LAUNCH();
}

}  // namespace pfx::kernels

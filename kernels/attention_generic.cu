// Generic causal GQA attention: the plain, trusted reference path, two passes over the scores.
//   S[h] = c * Q_h · K_gᵀ            cuBLAS strided-batched GEMM per kv group g (the G = H/Hkv
//                                     query heads of a group share K_g: stride 0), fp32 out;
//                                     c = log2(e)/sqrt(hd) (attention_shared.h)
//   P[h] = fp16(exp2(S[h] - m)), l    k_attn_softmax_causal, one block per row: m = the causal row
//                                     max rounded up to an integer, l = fp32 sum of exp2(s - m)
//   O_h  = P_h · V_g                   cuBLAS strided-batched GEMM, fp32 accumulate, fp32 out
//   o16  = fp16(O / l)                 k_attn_normalize
// The softmax convention of attention_shared.h makes these the same fp16 probabilities the flash
// and decode kernels multiply V by; only the order of fp32 sums differs between the paths.
// Scratch: S fp32 [H][T][ld], P fp16 [H][T][ld] (ld = ctx rounded up to 8: 16-byte rows),
// O fp32 [T][H*hd], l fp32 [H][T].
#include <cublas_v2.h>

#include <algorithm>
#include <cmath>

#include "kernels/attention_shared.h"
#include "kernels/common.cuh"
#include "kernels/cuda_check.h"
#include "kernels/kernels.h"
#include "kernels/launch_checks.h"
#include "kernels/launch_info.h"

namespace pfx::kernels {

struct SoftmaxCfg {
  static constexpr int kThreads = 256;
  static_assert(kThreads % sm90::kWarpSize == 0 && kThreads <= sm90::kMaxThreadsPerBlock,
                "softmax: whole warps, within the block limit");
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

namespace {
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
}  // namespace

size_t attention_generic_scratch_bytes(int T, int ctx, int H, int hd) { return ScratchLayout(T, ctx, H, hd).total; }

void attention_generic(const AttentionArgs& a, cublasContext* cublas, void* scratch, size_t scratch_bytes,
                       cudaStream_t stream) {
  detail::check_attention_args("attention_generic", a);
  detail::require(cublas != nullptr, "attention_generic: null cuBLAS handle");
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

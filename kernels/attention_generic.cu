// Generic causal GQA attention: the plain, trusted reference path.
//   S[h] = scale * Q_h · K_gᵀ        cuBLAS strided-batched GEMM per kv group g (the G = H/Hkv
//                                     query heads of a group share K_g: stride 0), fp32 out
//   P[h] = fp16(softmax_causal(S[h])) k_attn_softmax_causal, fp32 math, one block per row
//   O_h  = P_h · V_g                   cuBLAS strided-batched GEMM, fp32 accumulate, fp16 out
// Scratch: S fp32 [H][T][ld] then P fp16 [H][T][ld], ld = ctx rounded up to 8 (16-byte rows).
#include <cublas_v2.h>

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

// grid (T, H). Row t of head h: columns c <= p0 + t get fp16(exp(s - max) / sum), the rest 0.
__global__ void __launch_bounds__(SoftmaxCfg::kThreads)
    k_attn_softmax_causal(const float* __restrict__ S, uint16_t* __restrict__ P, int T, int ld, int p0) {
  __shared__ float scratch[SoftmaxCfg::kThreads / 32];
  const int t = blockIdx.x, h = blockIdx.y;
  const int64_t row_off = (static_cast<int64_t>(h) * T + t) * ld;
  const float* s = S + row_off;
  uint16_t* p = P + row_off;
  const int n_valid = p0 + t + 1;
  float m = -INFINITY;
  for (int c = threadIdx.x; c < n_valid; c += SoftmaxCfg::kThreads) m = fmaxf(m, s[c]);
  m = dev::block_max<SoftmaxCfg::kThreads>(m, scratch);
  float sum = 0.0f;
  for (int c = threadIdx.x; c < n_valid; c += SoftmaxCfg::kThreads) sum += expf(s[c] - m);
  sum = dev::block_sum<SoftmaxCfg::kThreads>(sum, scratch);
  for (int c = threadIdx.x; c < ld; c += SoftmaxCfg::kThreads)
    p[c] = c < n_valid ? dev::f2h_bits(__fdiv_rn(expf(s[c] - m), sum)) : uint16_t{0};
}
PFX_KERNEL_LAUNCH_INFO("k_attn_softmax_causal", SoftmaxCfg::kThreads, 0);

namespace {
constexpr size_t kScratchAlign = 256;
int64_t padded_ld(int ctx) { return (static_cast<int64_t>(ctx) + 7) / 8 * 8; }
size_t align_up(size_t n) { return (n + kScratchAlign - 1) / kScratchAlign * kScratchAlign; }
size_t scores_bytes(int T, int ctx, int H) { return align_up(static_cast<size_t>(H) * T * padded_ld(ctx) * sizeof(float)); }
}  // namespace

size_t attention_generic_scratch_bytes(int T, int ctx, int H) {
  return scores_bytes(T, ctx, H) + align_up(static_cast<size_t>(H) * T * padded_ld(ctx) * sizeof(uint16_t));
}

void attention_generic(const AttentionArgs& a, cublasContext* cublas, void* scratch, size_t scratch_bytes,
                       cudaStream_t stream) {
  detail::check_attention_args("attention_generic", a);
  detail::require(cublas != nullptr, "attention_generic: null cuBLAS handle");
  const int ctx = a.p0 + a.T;
  const size_t need = attention_generic_scratch_bytes(a.T, ctx, a.H);
  detail::require(scratch != nullptr && scratch_bytes >= need, "attention_generic: scratch of ", scratch_bytes,
                  " bytes, need ", need, " (T=", a.T, ", ctx=", ctx, ", H=", a.H, ")");
  detail::require(detail::is_aligned(scratch, kScratchAlign), "attention_generic: scratch not 256-byte aligned");
  const int64_t ld = padded_ld(ctx);
  float* S = static_cast<float*>(scratch);
  auto* P = reinterpret_cast<uint16_t*>(static_cast<char*>(scratch) + scores_bytes(a.T, ctx, a.H));
  const int G = a.H / a.Hkv;
  const int64_t q_row = static_cast<int64_t>(a.H) * a.hd;  // elements between tokens in q16 and o16
  const int64_t head_mat = static_cast<int64_t>(a.T) * ld;  // elements of one head's S or P
  const float scale = 1.0f / std::sqrt(static_cast<float>(a.hd));
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
  k_attn_softmax_causal<<<dim3(a.T, a.H), SoftmaxCfg::kThreads, 0, stream>>>(S, P, a.T, static_cast<int>(ld), a.p0);
  CUDA_CHECK_LAUNCH();
  for (int g = 0; g < a.Hkv; ++g) {
    // O_h (hd x T, ld H*hd) = V_g (hd x ctx, ld hd) · P_h (ctx x T, ld).
    const uint16_t* V = a.v_cache + static_cast<int64_t>(g) * a.max_ctx * a.hd;
    CUBLAS_CHECK(cublasGemmStridedBatchedEx(cublas, CUBLAS_OP_N, CUBLAS_OP_N, a.hd, a.T, ctx, &one, V, CUDA_R_16F, a.hd,
                                            0, P + static_cast<int64_t>(g) * G * head_mat, CUDA_R_16F,
                                            static_cast<int>(ld), head_mat, &zero,
                                            a.o16 + static_cast<int64_t>(g) * G * a.hd, CUDA_R_16F,
                                            static_cast<int>(q_row), a.hd, G, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT));
  }
}

}  // namespace pfx::kernels

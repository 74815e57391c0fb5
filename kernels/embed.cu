// Token embedding lookup: x32[t, :] = fp32 dequant of row ids[t] of token_embd (any supported
// ggml type), with the same decoders as dequant.cu, so the values are ggml's bit for bit.
#include "kernels/common.cuh"
#include "kernels/cuda_check.h"
#include "kernels/dequant_decode.cuh"
#include "kernels/kernels.h"
#include "kernels/launch_checks.h"
#include "kernels/launch_info.h"
#include "quant/types.h"

namespace pfx::kernels {

struct EmbedCfg {
  static constexpr int kThreads = 128;
  static constexpr int kElemsPerThread = 8;
  static_assert(kThreads % sm90::kWarpSize == 0 && kThreads <= sm90::kMaxThreadsPerBlock,
                "embed: whole warps, within the block limit");
};

namespace {

// grid (ceil(D / (8 * kThreads)), T); D % 8 == 0 (checked by the launcher).
template <class Dec>
__device__ __forceinline__ void embed_body(const uint8_t* __restrict__ table, int64_t row_bytes, int64_t n_vocab,
                                           const int32_t* __restrict__ ids, int D, float* __restrict__ x32) {
  const int t = blockIdx.y;
  const int i0 = (blockIdx.x * EmbedCfg::kThreads + threadIdx.x) * EmbedCfg::kElemsPerThread;
  if (i0 >= D) return;
  const int32_t id = ids[t];
  float v[8];
  if (id < 0 || id >= n_vocab) {
#pragma unroll
    for (int k = 0; k < 8; ++k) v[k] = __int_as_float(0x7fc00000);  // NaN: a bad id must not pass silently
  } else {
    Dec::decode8(table + static_cast<int64_t>(id) * row_bytes, i0, v);
  }
  float4* dst = reinterpret_cast<float4*>(x32 + static_cast<int64_t>(t) * D + i0);
  dst[0] = make_float4(v[0], v[1], v[2], v[3]);
  dst[1] = make_float4(v[4], v[5], v[6], v[7]);
}

}  // namespace

#define PFX_EMBED_KERNEL(tname, Dec)                                                                     \
  __global__ void __launch_bounds__(EmbedCfg::kThreads)                                                 \
      k_embed_##tname(const uint8_t* __restrict__ table, int64_t row_bytes, int64_t n_vocab,            \
                      const int32_t* __restrict__ ids, int D, float* __restrict__ x32) {                \
    embed_body<Dec>(table, row_bytes, n_vocab, ids, D, x32);                                            \
  }                                                                                                     \
  PFX_KERNEL_LAUNCH_INFO("k_embed_" #tname, EmbedCfg::kThreads, 0)

PFX_EMBED_KERNEL(f32, dev::DecodeF32);
PFX_EMBED_KERNEL(f16, dev::DecodeF16);
PFX_EMBED_KERNEL(bf16, dev::DecodeBF16);
PFX_EMBED_KERNEL(q8_0, dev::DecodeQ8_0);
PFX_EMBED_KERNEL(q4_0, dev::DecodeQ4_0);
PFX_EMBED_KERNEL(q4_1, dev::DecodeQ4_1);
PFX_EMBED_KERNEL(q5_0, dev::DecodeQ5_0);
PFX_EMBED_KERNEL(q5_1, dev::DecodeQ5_1);
PFX_EMBED_KERNEL(q4k, dev::DecodeQ4_K);
PFX_EMBED_KERNEL(q5k, dev::DecodeQ5_K);
PFX_EMBED_KERNEL(q6k, dev::DecodeQ6_K);
#undef PFX_EMBED_KERNEL

void embed_tokens(uint32_t ggml_type, const void* token_embd, int64_t n_vocab, const int32_t* ids, int T, int D,
                  float* x32, cudaStream_t stream) {
  using quant::Type;
  using Kernel = void(const uint8_t*, int64_t, int64_t, const int32_t*, int, float*);
  Kernel* kernel = nullptr;
  int align = 2;
  switch (static_cast<Type>(ggml_type)) {
    case Type::F32: kernel = k_embed_f32; align = 4; break;
    case Type::F16: kernel = k_embed_f16; break;
    case Type::BF16: kernel = k_embed_bf16; break;
    case Type::Q8_0: kernel = k_embed_q8_0; break;
    case Type::Q4_0: kernel = k_embed_q4_0; break;
    case Type::Q4_1: kernel = k_embed_q4_1; break;
    case Type::Q5_0: kernel = k_embed_q5_0; break;
    case Type::Q5_1: kernel = k_embed_q5_1; break;
    case Type::Q4_K: kernel = k_embed_q4k; break;
    case Type::Q5_K: kernel = k_embed_q5k; break;
    case Type::Q6_K: kernel = k_embed_q6k; break;
    default: break;
  }
  detail::require(kernel != nullptr, "embed_tokens: token_embd type ", quant::describe_type_id(ggml_type),
                  " has no GPU decoder");
  detail::require(T >= 1 && T <= 65535 && D >= 8 && D % 8 == 0, "embed_tokens: T=", T, ", D=", D,
                  " (need 1 <= T <= 65535 and D a positive multiple of 8)");
  detail::require(n_vocab >= 1, "embed_tokens: n_vocab=", n_vocab, " must be positive");
  detail::require(token_embd && ids && x32, "embed_tokens: null pointer");
  detail::require(detail::is_aligned(token_embd, static_cast<uintptr_t>(align)), "embed_tokens: token_embd ",
                  token_embd, " is not ", align, "-byte aligned");
  detail::require(detail::is_aligned(x32, 16), "embed_tokens: x32 ", x32, " is not 16-byte aligned");
  const int64_t row_bytes = quant::row_bytes(static_cast<Type>(ggml_type), D);  // throws if D is not a block multiple
  const int per_block = EmbedCfg::kThreads * EmbedCfg::kElemsPerThread;
  const dim3 grid((D + per_block - 1) / per_block, T);
  kernel<<<grid, EmbedCfg::kThreads, 0, stream>>>(static_cast<const uint8_t*>(token_embd), row_bytes, n_vocab, ids,
                                                  D, x32);
  CUDA_CHECK_LAUNCH();
}

}  // namespace pfx::kernels

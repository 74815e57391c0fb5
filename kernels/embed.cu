// Token embedding lookup: x32[t, :] = fp32 dequant of row ids[t] of token_embd (any supported
// ggml type), with the same decoders as dequant.cu, so the values are ggml's bit for bit.
#include "kernels/common.cuh"
#include "kernels/cuda_check.h"
#include "kernels/dequant_decode.cuh"
#include "kernels/flat_cfg.h"
#include "kernels/kernels.h"
#include "kernels/launch_checks.h"
#include "kernels/launch_info.h"
#include "quant/types.h"

namespace pfx::kernels {

using EmbedCfg = FlatCfg<128, 8>;  // 8 values of a row: two float4 stores

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

#define PFX_EMBED_KERNEL_OF(tname, Dec, type) PFX_EMBED_KERNEL(tname, dev::Dec);
PFX_GENERIC_DECODERS(PFX_EMBED_KERNEL_OF)
#undef PFX_EMBED_KERNEL_OF
#undef PFX_EMBED_KERNEL

void embed_tokens(uint32_t ggml_type, const void* token_embd, int64_t n_vocab, const int32_t* ids, int T, int D,
                  float* x32, cudaStream_t stream) {
  using quant::Type;
  using Kernel = void(const uint8_t*, int64_t, int64_t, const int32_t*, int, float*);
  Kernel* kernel = nullptr;
  int align = 0;  // bytes the table must be aligned to: the decoder's
#define PFX_EMBED_CASE(tname, Dec, type) \
  case Type::type:                       \
    kernel = k_embed_##tname;            \
    align = dev::Dec::kAlign;            \
    break;
  switch (static_cast<Type>(ggml_type)) {
    PFX_GENERIC_DECODERS(PFX_EMBED_CASE)
#undef PFX_EMBED_CASE
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

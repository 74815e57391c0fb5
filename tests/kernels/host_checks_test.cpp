// CPU-only checks of the kernel library (label cpu, runs in CI without a GPU): the launch API
// header compiles as plain C++, every kernel's registered launch shape is within sm_90 limits,
// and launchers reject bad arguments on the host, before any CUDA call.
#include <gtest/gtest.h>

#include <set>
#include <string>

#include "kernels/kernels.h"
#include "kernels/launch_info.h"
#include "kernels/sm90.h"
#include "util/error.h"

namespace pfx::kernels {
namespace {

TEST(KernelRegistry, EveryKernelHasASaneLaunchShape) {
  const auto& infos = launch_infos();
  ASSERT_FALSE(infos.empty()) << "no kernel registered a launch shape (PFX_KERNEL_LAUNCH_INFO)";
  std::set<std::string> names;
  for (const auto& k : infos) {
    SCOPED_TRACE(k.name);
    EXPECT_TRUE(names.insert(k.name).second) << "registered twice";
    EXPECT_EQ(std::string(k.name).rfind("k_", 0), 0u) << "kernel names start with k_ (STYLE.md habit 3)";
    EXPECT_GT(k.threads_per_block, 0);
    EXPECT_LE(k.threads_per_block, sm90::kMaxThreadsPerBlock);
    EXPECT_EQ(k.threads_per_block % sm90::kWarpSize, 0) << "whole warps";
    EXPECT_GE(k.dynamic_smem_bytes, 0);
    EXPECT_LE(k.dynamic_smem_bytes, sm90::kMaxSmemPerBlock);
  }
  // The families this library must provide (the fast-GEMM helper's kernels come on top).
  for (const char* must : {"k_dequant_q4k_f16", "k_dequant_q6k_f16", "k_dequant_q8_0_f16", "k_embed_q4k",
                           "k_rmsnorm_generic", "k_rmsnorm_warp", "k_rmsnorm_row", "k_rope_f32", "k_rope_store_qkv", "k_rope_fused",
                           "k_attn_softmax_causal", "k_attn_flash_prefill<64>", "k_attn_flash_prefill<128>",
                           "k_attn_flash_prefill_pipe<64>", "k_attn_flash_prefill_pipe<128>",
                           "k_attn_flash_prefill_wg<64>", "k_attn_flash_prefill_wg<128>",
                           "k_attn_decode_split<128>", "k_attn_decode_combine<128>", "k_elementwise_silu_mul",
                           "k_elementwise_add_f32", "k_elementwise_f32_to_f16", "k_argmax_rows"}) {
    EXPECT_TRUE(names.count(must)) << must << " is not registered";
  }
}

TEST(KernelPreconditions, RejectedOnTheHost) {
  alignas(16) uint16_t h[64] = {};
  alignas(16) float f[64] = {};
  EXPECT_THROW(dequant_to_f16(10 /* q2_K */, h, h, 1, 256, nullptr), pfx::Error);
  EXPECT_THROW(dequant_to_f16(12 /* q4_K */, h, h, 1, 255, nullptr), pfx::Error);
  EXPECT_THROW(dequant_to_f16(12, h, h + 1, 1, 256, nullptr), pfx::Error);  // misaligned output
  EXPECT_THROW(dequant_to_f32(8 /* q8_0 */, nullptr, f, 1, 32, nullptr), pfx::Error);
  EXPECT_THROW(embed_tokens(12, h, 10, nullptr, 1, 256, f, nullptr), pfx::Error);
  EXPECT_THROW(embed_tokens(0, f, 10, reinterpret_cast<int32_t*>(h), 1, 12, f, nullptr), pfx::Error);  // D % 8
  EXPECT_THROW(rmsnorm_f32_to_f16(f, f, h, 0, 64, 1e-5f, nullptr), pfx::Error);
  EXPECT_NE(rmsnorm_fast_unsupported_reason(f, f, h, 102), nullptr);
  EXPECT_NE(rmsnorm_fast_unsupported_reason(f + 1, f, h, 64), nullptr);
  EXPECT_EQ(rmsnorm_fast_unsupported_reason(f, f, h, 64), nullptr);
  EXPECT_THROW(silu_mul_f32_to_f16(f, f, h, 0, nullptr), pfx::Error);
  EXPECT_THROW(argmax_rows(f, 1, 0, nullptr, nullptr), pfx::Error);

  AttentionArgs a;
  a.q16 = h, a.k_cache = h, a.v_cache = h, a.o16 = h;
  a.T = 2, a.H = 4, a.Hkv = 2, a.hd = 96, a.p0 = 0, a.max_ctx = 8;
  EXPECT_NE(attention_fast_unsupported_reason(a), nullptr);
  EXPECT_THROW(attention_flash_prefill(a, nullptr), pfx::Error);
  a.hd = 128;
  EXPECT_EQ(attention_fast_unsupported_reason(a), nullptr);
  a.o16 = h + 1;
  EXPECT_NE(attention_fast_unsupported_reason(a), nullptr);
  a.o16 = h, a.max_ctx = 1;
  EXPECT_THROW(attention_flash_prefill(a, nullptr), pfx::Error);
  EXPECT_GT(attention_fast_scratch_bytes(1, 32, 128), 0u);
  EXPECT_EQ(attention_fast_scratch_bytes(512, 32, 128), 0u);
  EXPECT_GE(attention_generic_scratch_bytes(7, 9, 4, 8), 7u * 16 * 4 * 6 + 7u * 4 * 8 * 4 + 4 * 7 * 4);
}

}  // namespace
}  // namespace pfx::kernels

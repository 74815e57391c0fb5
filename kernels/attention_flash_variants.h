// The compiled variants of the causal flash prefill kernel, for the test that checks each one
// bit for bit against variant 0 and the generic path, and for the benchmark that times them side
// by side (tests/kernels/attention_test.cpp, FlashVariantsTest; tests/kernels/attention_bench.cpp).
//   0 w4s1       attention_flash.cu: 4 warps x 16 rows of one head per block, two-stage K/V ring,
//                two barriers per tile; the reference shape.
//   1 w4s1_pipe  attention_flash_pipe.cu: the same warps and per-warp arithmetic, a three-stage
//                ring with one barrier per tile, S of tile j+1 computed before tile j's softmax,
//                head-major grid, GQA heads packed per block.
//   2 wg_wgmma   attention_flash_wg.cu: variant 1's ring, grid and packing; the block's 4 warps as
//                one warpgroup, its MMAs wgmma (K and V read once per block from shared memory),
//                S of tile j+1 running during tile j's softmax.
// attention_flash_prefill() runs kFlashDefaultVariant. Plain C++.
#pragma once
#include <cuda_runtime_api.h>

#include <vector>

#include "kernels/kernels.h"

namespace pfx::kernels {

struct FlashVariantInfo {
  const char* name;           // "w4s1_pipe": warps per block, 16-row strips per warp, then the twist
  const char* shape;          // one line for the benchmark's header: ring, barriers, pipeline, grid
  int threads;                // per block
  int smem_hd64, smem_hd128;  // dynamic shared memory per block, bytes
};

// The engine's choice (attention_flash_prefill, attention_fast): variant 2, wg_wgmma. Measured on
// the H200 on 2026-12-03 (tests/kernels/attention_bench, median of 30 launches, causal TFLOP/s,
// H 32, p0 0; docs/perf-h200.md, docs/h200-evidence/s21/call4), variant 1 -> variant 2:
//   hd 128: T 512 106.1 -> 115.9 (x1.09), T 2048 259.0 -> 322.6 (x1.25), T 4096 301.2 -> 384.7
//           (x1.28) at Hkv 32; x1.09, x1.26, x1.29 at Hkv 8
//   hd 64:  T 512 x1.00-1.01, T 2048 200.1 -> 250.6 (x1.25), T 4096 231.3 -> 303.0 (x1.31)
// bit for bit equal to variants 0 and 1 at every shape. Why it wins: a K or V byte crosses shared
// memory once per block and tile instead of once per warp (variant 1's ldmatrix traffic), and the
// tensor cores run S of tile j+1 asynchronously beside tile j's softmax. Variant 1 in turn beat
// variant 0 by x1.31 (T 512) to x1.54 (T 2048) on 2026-12-02 (s9/call1-attn-bench): its warps
// issue the next tile's Q·Kᵀ MMAs in the same basic block as the softmax.
inline constexpr int kFlashDefaultVariant = 2;

// Every compiled variant, index = variant number (0 first).
const std::vector<FlashVariantInfo>& attention_flash_variants();

// attention_flash_prefill with the variant chosen by the caller; same preconditions, same bits.
void attention_flash_prefill_variant(int variant, const AttentionArgs& a, cudaStream_t stream);

namespace detail {
// attention_flash_pipe.cu: variant 1's info and launcher (the arguments already checked).
FlashVariantInfo flash_pipe_info();
void launch_flash_pipe(const AttentionArgs& a, cudaStream_t stream);
// attention_flash_wg.cu: variant 2's.
FlashVariantInfo flash_wg_info();
void launch_flash_wg(const AttentionArgs& a, cudaStream_t stream);
}  // namespace detail

}  // namespace pfx::kernels

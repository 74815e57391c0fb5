// The two compiled variants of the causal flash prefill kernel, for the test that checks each one
// bit for bit against variant 0 and the generic path, and for the benchmark that times them side
// by side (tests/kernels/attention_test.cpp, FlashVariantsTest; tests/kernels/attention_bench.cpp).
//   0 w4s1       attention_flash.cu: 4 warps x 16 rows of one head per block, two-stage K/V ring,
//                two barriers per tile; the reference shape.
//   1 w4s1_pipe  attention_flash_pipe.cu: the same warps and per-warp arithmetic, a three-stage
//                ring with one barrier per tile, S of tile j+1 computed before tile j's softmax,
//                head-major grid, GQA heads packed per block.
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

// The engine's choice (attention_flash_prefill, attention_fast): variant 1, w4s1_pipe. Measured
// on the H200 on 2026-12-02 (tests/kernels/attention_bench, median of 30 launches, causal TFLOP/s,
// H 32, hd 128, p0 0; docs/perf-h200.md, docs/h200-evidence/s9/call1-attn-bench.*), variant 0
// -> variant 1:
//   T 512:  81.1 -> 106.6 (26.5 -> 20.2 µs, x1.31) at Hkv 32, 82.0 -> 108.8 (x1.33) at Hkv 8
//   T 2048: 170.0 -> 260.4 (202.2 -> 132.0 µs, x1.53) at Hkv 32, 170.3 -> 262.8 (x1.54) at Hkv 8
//   T 4096: 202.8 -> 301.9 (x1.49) at Hkv 32, 204.0 -> 302.8 (x1.48) at Hkv 8
// bit for bit equal to variant 0 at every shape. Why it wins: variant 0's warp runs its MMAs and
// its softmax (FMUL, MUFU, shuffles) back to back, hidden only by the one other warp of its
// scheduler; variant 1 issues the Q·Kᵀ MMAs of tile j+1 in the same basic block as tile j's
// softmax, so within one warp the tensor pipe works while the softmax does. The third ring stage
// (tile j+1's K resident beside tile j's V) makes that possible with one barrier per tile.
inline constexpr int kFlashDefaultVariant = 1;

// Every compiled variant, index = variant number (0 first).
const std::vector<FlashVariantInfo>& attention_flash_variants();

// attention_flash_prefill with the variant chosen by the caller; same preconditions, same bits.
void attention_flash_prefill_variant(int variant, const AttentionArgs& a, cudaStream_t stream);

namespace detail {
// attention_flash_pipe.cu: variant 1's info and launcher (the arguments already checked).
FlashVariantInfo flash_pipe_info();
void launch_flash_pipe(const AttentionArgs& a, cudaStream_t stream);
}  // namespace detail

}  // namespace pfx::kernels

// Variant 1 of the causal flash prefill, w4s1_pipe, the engine's default until 2026-12-03
// (attention_flash_variants.h: the measurements; variant 0 is attention_flash.cu's kernel, variant
// 2, the default now, attention_flash_wg.cu's):
// k_attn_flash_prefill_pipe<HD>.
//
// Same bits as variant 0 and the generic tiled kernel. The arithmetic of a warp's 16 query rows is
// variant 0's, on the same fragment values in the same order: per 64-key tile j = 0, 1, ... S is
// attention_flash_smem.cuh's flash_scores() (Q·Kᵀ over head-dim steps in order, into zeroed
// accumulators), attention_tile.cuh's softmax_tile() folds it into the running (m, l, O), and
// flash_pv() adds P·V over the tile's 16-key steps in order; store_rows() writes the rows. What
// differs is only when the bytes arrive and when S is computed:
// - S of tile j+1 is computed in iteration j, in the same basic block as tile j's softmax, so the
//   scheduler can interleave its MMAs with the softmax's FMUL/MUFU work inside one warp (variant
//   0's warp runs them back to back, hidden only by the other warp of its scheduler).
// - A ring of three stages, each one K tile then one V tile of 64 keys x HD: while a warp reads
//   tile j's V and tile j+1's K, the copy of tile j+2 is in flight. One block barrier per tile
//   (variant 0: two). Q (64 rows x HD) is staged in the ring's last stage, read into registers
//   before the loop, and that stage is first refilled after the loop's first barrier.
// - A warp skips the trailing tiles masked for all its rows, and tiles wholly visible to its rows
//   skip the mask: softmax_tile() on an all-masked tile after a visible one changes nothing
//   (corr = 1, P = 0, O += 0) and on an unmasked tile the mask is a no-op, so neither changes a
//   bit (variant 0 already runs the first kind for its early warps).
// - Grid (heads / p, query tiles from the last): the longest query tiles of every head start
//   first. GQA packing (G = H / Hkv > 1): the 4 warps of a block take p heads of one kv group
//   (p the largest power of two dividing G and 4) for the same tokens, so the block spans p times
//   fewer tokens, its rows share one diagonal and blocks are shorter at small T; K/V bytes per
//   query row are unchanged.
// ptxas (CUDA 13.0, sm_90a): 235 registers at hd 128, 171 at hd 64, no spill, no stack; 96 KB
// (hd 128) / 48 KB (hd 64) of dynamic shared memory, 2 blocks = 8 warps per SM (the
// __launch_bounds__ minimum). Its SASS is instruction for instruction that of the kernel the H200
// timed (variant 2 of branch attn-flash, unchanged from 88d807f to c238009; cuobjdump -sass at hd
// 64 and 128, equal but for alignment NOPs). ptxas's register allocation here moves with
// the order in which the front end sees the index arithmetic (a single-strip rewrite of that code
// came out at 220 and at 239 registers): change the code only with the SASS compared or a new
// measurement.
#include <cuda_fp16.h>

#include <cmath>

#include "kernels/attention_flash_launch.cuh"
#include "kernels/attention_flash_smem.cuh"
#include "kernels/attention_flash_variants.h"
#include "kernels/attention_shared.h"
#include "kernels/attention_tile.cuh"
#include "kernels/common.cuh"
#include "kernels/cuda_check.h"
#include "kernels/kernels.h"
#include "kernels/launch_checks.h"
#include "kernels/launch_info.h"
#include "kernels/race_stress.cuh"

namespace pfx::kernels {

template <int HD>
struct FlashPipeCfg {
  static constexpr int kWarps = 4;
  static constexpr int kThreads = kWarps * sm90::kWarpSize;
  static constexpr int kBlockRows = 16 * kWarps;            // (token, head) query rows per block, 16 per warp
  static constexpr int kTile = dev::kAttnKeyTile;           // keys per tile
  static constexpr int kChunks = HD / 8;                    // 16-byte chunks per row
  static constexpr int kTileBytes = kTile * HD * 2;
  static constexpr int kStageBytes = 2 * kTileBytes;        // K tile, then V tile
  static constexpr int kStages = 3;                         // tile j's V, tile j+1's K, tile j+2 in flight
  static constexpr int kMinBlocks = 2;                      // __launch_bounds__: 2 blocks = 8 warps per SM
  static constexpr int kQBytes = kBlockRows * HD * 2;       // staged in the ring's last stage
  static constexpr int kSmemBytes = kStages * kStageBytes;
  static constexpr int kRowStep = kThreads / kChunks;       // K/V tile rows one pass of the threads copies
  static constexpr int kKvPasses = kTile / kRowStep;
  static_assert(HD == 64 || HD == 128, "flash attention: head dims 64 and 128");
  static_assert(kQBytes <= kStageBytes, "flash attention: Q is staged in one ring stage");
  static_assert(kSmemBytes <= sm90::kMaxSmemPerBlock, "flash attention: shared memory over the sm_90 limit");
  static_assert(kMinBlocks * kSmemBytes <= sm90::kSmemPerSm - kMinBlocks * 1024,
                "flash attention: min_blocks blocks do not fit one SM's shared memory");
  static_assert((kBlockRows * kChunks) % kThreads == 0, "flash attention: Q copies must split evenly over the threads");
  static_assert(kThreads % kChunks == 0 && kRowStep % 8 == 0 && kTile % kRowStep == 0,
                "flash attention: a pass of the threads copies whole rows, a multiple of the swizzle period");
};

// grid (H / p, query tiles), p = 1 << pack_log2 heads per block; block 128; dynamic smem
// FlashPipeCfg<HD>::kSmemBytes. A block covers tokens [t0, t0 + 64 / p) of heads h0 .. h0 + p - 1
// (one kv group); warp w takes the 16 consecutive tokens tw .. tw + 15 of head h0 + w % p.
template <int HD>
__global__ void __launch_bounds__(FlashPipeCfg<HD>::kThreads, FlashPipeCfg<HD>::kMinBlocks)
    k_attn_flash_prefill_pipe(const uint16_t* __restrict__ q16, const uint16_t* __restrict__ k_cache,
                              const uint16_t* __restrict__ v_cache, uint16_t* __restrict__ o16, int T, int H, int Hkv,
                              int p0, int max_ctx, float scale_log2, int pack_log2) {
  using Cfg = FlashPipeCfg<HD>;
  constexpr int kTile = Cfg::kTile;
  extern __shared__ __align__(128) uint8_t smem[];
  const uint32_t s_ring = dev::smem_addr(smem);  // stage i: K at s_ring + i * kStageBytes, V kTileBytes later
  const uint32_t s_q = s_ring + (Cfg::kStages - 1) * Cfg::kStageBytes;

  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  const int pack_mask = (1 << pack_log2) - 1;
  const int tokens = (Cfg::kWarps >> pack_log2) * 16;  // query tokens per block
  const int qtile = gridDim.y - 1 - blockIdx.y;        // longest first
  const int h0 = static_cast<int>(blockIdx.x) << pack_log2;
  const int t0 = qtile * tokens;
  const int ctx = p0 + T;
  const int n_tiles = (p0 + min(t0 + tokens, T) + kTile - 1) / kTile;  // through the block's last visible key
  const int g = h0 / (H / Hkv);
  const uint16_t* k_head = k_cache + static_cast<int64_t>(g) * max_ctx * HD;
  const uint16_t* v_head = v_cache + static_cast<int64_t>(g) * max_ctx * HD;

  // This warp's rows: tokens tw .. tw + 15 of head hw, block Q rows 16 * warp ...
  const int tw = t0 + (warp >> pack_log2) * 16;
  const int hw = h0 + (warp & pack_mask);
  const int warp_tiles = tw < T ? (p0 + min(tw + 16, T) + kTile - 1) / kTile : 0;
  const int pos0 = p0 + lane / 4 + tw;  // position of row g (row g + 8 is pos0 + 8); this order: the measured SASS

  // Block Q row r: token t0 + (w >> pack_log2) * 16 + r % 16 of head h0 + (w & pack_mask),
  // w = r / 16; rows past T zero-filled.
  for (int idx = threadIdx.x; idx < Cfg::kBlockRows * Cfg::kChunks; idx += Cfg::kThreads) {
    const int r = idx / Cfg::kChunks, c = idx % Cfg::kChunks, w = r / 16;
    const int t = t0 + (w >> pack_log2) * 16 + r % 16;
    const bool valid = t < T;
    const uint16_t* src = valid ? q16 + (static_cast<int64_t>(t) * H + h0 + (w & pack_mask)) * HD + c * 8 : q16;
    dev::cp_async_16(s_q + dev::flash_tile_off<HD>(r, c), src, valid);
  }
  auto stage_of = [&](int tile) { return s_ring + static_cast<uint32_t>(tile % Cfg::kStages) * Cfg::kStageBytes; };
  // Thread: chunk kv_c of rows kv_r0 + i * kRowStep of a K/V tile. kRowStep is a multiple of 8, so
  // the swizzle is the same for all of them and the i-th destination is a constant offset away.
  const int kv_c = threadIdx.x % Cfg::kChunks, kv_r0 = threadIdx.x / Cfg::kChunks;
  const int kv_src0 = kv_r0 * HD + kv_c * 8;
  const uint32_t kv_dst0 = dev::flash_tile_off<HD>(kv_r0, kv_c);
  auto load_kv = [&](int tile) {  // nothing past the block's last tile
    if (tile >= n_tiles) return;
    const int key0 = tile * kTile;
    const uint32_t s_k = stage_of(tile) + kv_dst0;
    const int64_t src = static_cast<int64_t>(key0) * HD + kv_src0;
#pragma unroll
    for (int i = 0; i < Cfg::kKvPasses; ++i) {
      // Never read cache rows past the context (zero-fill: 0 * V stays 0).
      const bool valid = key0 + kv_r0 + i * Cfg::kRowStep < ctx;
      const int64_t off = src + i * Cfg::kRowStep * HD;
      dev::cp_async_16(s_k + i * Cfg::kRowStep * HD * 2, valid ? k_head + off : k_head, valid);
      dev::cp_async_16(s_k + Cfg::kTileBytes + i * Cfg::kRowStep * HD * 2, valid ? v_head + off : v_head, valid);
    }
  };
  // Commit group i holds tile i (group 0 also Q); one group per tile, empty past the last. (Tile 0
  // apart from the loop: the measured SASS.)
  load_kv(0);
  dev::cp_async_commit();
#pragma unroll
  for (int i = 1; i < Cfg::kStages - 1; ++i) {
    load_kv(i);
    dev::cp_async_commit();
  }

  uint32_t qf[HD / 16][4];           // this warp's 16 query rows as mma A fragments, all head-dim steps
  float o[HD / 8][4];                // output accumulators: 16 rows x HD, fp32
  float m_run[2] = {-INFINITY, -INFINITY};  // rows g and g + 8 of the warp (g = lane / 4)
  float l_run[2] = {0.0f, 0.0f};            // this thread's partial row sums (quad-reduced at the end)
  float s_next[kTile / 8][4];        // S of the tile the next iteration folds in
#pragma unroll
  for (int n = 0; n < HD / 8; ++n) o[n][0] = o[n][1] = o[n][2] = o[n][3] = 0.0f;
  dev::cp_async_wait<Cfg::kStages - 2>();  // group 0: Q and tile 0
  __syncthreads();
  dev::flash_load_q<HD>(qf, s_q, 16 * warp, lane);
  if (warp_tiles > 0) dev::flash_scores<HD>(s_next, qf, stage_of(0), lane);
  // Q's stage is refilled only after the loop's first barrier: every warp has its Q by then.

  // PFX_RACE_STRESS_POINT: per-warp random stalls in race-stress builds only (kernels/race_stress.cuh),
  // between the phases of the loop — wait, refill, Q·Kᵀ + softmax, P·V — so a missing barrier shows in parity.
  for (int j = 0; j < n_tiles; ++j) {
    PFX_RACE_STRESS_POINT(1);
    // Tile j+1's group (and so every earlier one) has landed for this thread's copies.
    dev::cp_async_wait<Cfg::kStages - 3>();
    PFX_RACE_STRESS_POINT(2);
    // The one barrier of the tile: every thread's copies of tile j+1 are visible, and every warp is
    // done with tile j-1, whose stage (holding tile j-1's V; Q before the first refill) the refill
    // below overwrites with tile j + kStages - 1.
    __syncthreads();
    load_kv(j + Cfg::kStages - 1);
    dev::cp_async_commit();
    if (j < warp_tiles) {
      const int key0 = j * kTile;
      const uint32_t s_k = stage_of(j), s_v = s_k + Cfg::kTileBytes;
      // Only tiles crossing one of this warp's diagonals or the context end need the mask.
      const bool mask = key0 + kTile - 1 > p0 + tw || key0 + kTile > ctx;
      float s[kTile / 8][4];
#pragma unroll
      for (int n = 0; n < kTile / 8; ++n)
#pragma unroll
        for (int e = 0; e < 4; ++e) s[n][e] = s_next[n][e];
      // S of tile j+1 sits in the same basic block as tile j's softmax and P·V (each version), so the
      // scheduler can interleave its MMAs with the softmax's FMUL/MUFU work.
      if (j + 1 < warp_tiles) {
        const uint32_t s_k1 = stage_of(j + 1);
        if (mask) {
          dev::flash_scores<HD>(s_next, qf, s_k1, lane);
          dev::flash_softmax_pv<HD>(s, o, m_run, l_run, s_v, key0, pos0, ctx, true, scale_log2, lane);
        } else {
          dev::flash_scores<HD>(s_next, qf, s_k1, lane);
          dev::flash_softmax_pv<HD>(s, o, m_run, l_run, s_v, key0, pos0, ctx, false, scale_log2, lane);
        }
      } else {
        dev::flash_softmax_pv<HD>(s, o, m_run, l_run, s_v, key0, pos0, ctx, true, scale_log2, lane);
      }
    }
    PFX_RACE_STRESS_POINT(4);
  }

  dev::store_rows<HD>(o, l_run, o16, tw, T, H, hw, lane);
}

PFX_KERNEL_LAUNCH_INFO("k_attn_flash_prefill_pipe<64>", FlashPipeCfg<64>::kThreads, FlashPipeCfg<64>::kSmemBytes);
PFX_KERNEL_LAUNCH_INFO("k_attn_flash_prefill_pipe<128>", FlashPipeCfg<128>::kThreads, FlashPipeCfg<128>::kSmemBytes);

namespace detail {

FlashVariantInfo flash_pipe_info() {
  return {"w4s1_pipe",
          "4 warps x 16 rows, 3-stage ring (Q in the third), 1 barrier/tile, S of tile j+1 before tile j's softmax, "
          "head-major grid, GQA packing",
          FlashPipeCfg<128>::kThreads, FlashPipeCfg<64>::kSmemBytes, FlashPipeCfg<128>::kSmemBytes};
}

void launch_flash_pipe(const AttentionArgs& a, cudaStream_t stream) {
  if (a.hd == 64) {
    launch_flash_packed(k_attn_flash_prefill_pipe<64>, FlashPipeCfg<64>::kThreads, FlashPipeCfg<64>::kSmemBytes, a,
                        stream);
  } else {
    launch_flash_packed(k_attn_flash_prefill_pipe<128>, FlashPipeCfg<128>::kThreads, FlashPipeCfg<128>::kSmemBytes,
                        a, stream);
  }
}

}  // namespace detail

}  // namespace pfx::kernels

// Variant 2 of the causal flash prefill, wg_wgmma (attention_flash_variants.h), the engine's
// default: k_attn_flash_prefill_wg<HD>, the sm_90a form of variant 1.
//
// Same bits as variants 0 and 1 and the generic tiled kernel: each warp's 16 query rows see the
// same fragment values in the same order. S = Q·Kᵀ over head-dim steps of 16 in order,
// attention_tile.cuh's three softmax steps on S, then O += P·V over the tile's 16-key steps in
// order, store_rows() at the end. What differs is who does the MMAs, and when:
// - The block's four warps are one warpgroup, and its 64 query rows are the M = 64 of warpgroup
//   MMAs (wgmma, register-sourced A): S from Q's fragments (the registers variant 1 loads) and the
//   K tile in shared memory, O += P·V from P's fragments (softmax_probs's output) and the V tile
//   read as an N-major operand. The accumulator of m64nNk16 gives each warp its 16 rows in
//   mma.m16n8k16's C layout, so S and O are the arrays variant 1 holds. A K or V byte is read from
//   shared memory once per block and tile, not once per warp as variant 1's ldmatrix does.
// - wgmma is asynchronous: S of tile j+1 is issued before tile j's softmax and runs on the tensor
//   cores while the softmax runs on the ALUs; P·V of tile j is waited for at the end of the tile.
//   S alternates between two register arrays by tile parity (the loop runs two tiles per trip),
//   so nothing copies S, and its first head-dim step overwrites the accumulators (wgmma's scale-d
//   = 0) instead of adding to zeroed ones: the same bits (wg_scores_issue says why).
// - A warp none of whose rows' running max moved skips O's rescale: O * 1 is O.
// - K/V tiles are stored as wgmma's 128-byte-swizzled layout: column block b (head dims 64b ..
//   64b + 63) of all 64 keys, rows of 128 bytes, chunk c of row r at c ^ (r % 8); the ring stage
//   1024-byte aligned. Q is staged in the ring's last stage in the ldmatrix layout of variant 1.
// - The loop is uniform over the warpgroup (wgmma is collective): a warp runs every tile up to the
//   block's last visible key, and a tile masked for all its rows changes nothing (softmax on an
//   all-masked tile after a visible one: corr = 1, P = 0, O += 0; variant 0 does the same).
// Ring, barrier, grid and GQA packing are variant 1's (attention_flash_pipe.cu).
// Measured on the H200 against variant 1: attention_flash_variants.h.
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
struct FlashWgCfg {
  static constexpr int kWarps = 4;  // one warpgroup
  static constexpr int kThreads = kWarps * sm90::kWarpSize;
  static constexpr int kBlockRows = 16 * kWarps;            // (token, head) query rows per block: wgmma's M
  static constexpr int kTile = dev::kAttnKeyTile;           // keys per tile
  static constexpr int kChunks = HD / 8;                    // 16-byte chunks per K/V row
  static constexpr int kTileBytes = kTile * HD * 2;
  static constexpr int kStageBytes = 2 * kTileBytes;        // K tile, then V tile
  static constexpr int kStages = 3;                         // as variant 1
  // Blocks (warpgroups) per SM, one's softmax beside the others' MMAs: ptxas fits hd 64 in 168
  // registers (3 blocks: 1.25x variant 1 at T 2048, where 2 blocks gave 1.08x; session 21 calls
  // 3-4), hd 128 takes 234 (2 blocks).
  static constexpr int kMinBlocks = HD == 64 ? 3 : 2;
  static constexpr int kQBytes = kBlockRows * HD * 2;       // staged in the ring's last stage
  static constexpr int kAlign = 1024;                       // the 128-byte swizzle's period, which wgmma reads from
  static constexpr int kSmemBytes = kStages * kStageBytes + kAlign;  // + slack to align the ring
  static constexpr int kRowStep = kThreads / kChunks;       // K/V tile rows one pass of the threads copies
  static constexpr int kKvPasses = kTile / kRowStep;
  static_assert(HD == 64 || HD == 128, "flash attention: head dims 64 and 128");
  static_assert(kQBytes <= kStageBytes, "flash attention: Q is staged in one ring stage");
  static_assert(kStageBytes % kAlign == 0, "flash attention: every ring stage 1024-byte aligned");
  static_assert(kMinBlocks * kSmemBytes <= sm90::kSmemPerSm - kMinBlocks * 1024,
                "flash attention: min_blocks blocks do not fit one SM's shared memory");
  static_assert((kBlockRows * kChunks) % kThreads == 0, "flash attention: Q copies must split evenly over the threads");
  static_assert(kThreads % kChunks == 0 && kRowStep % 8 == 0 && kTile % kRowStep == 0,
                "flash attention: a pass of the threads copies whole rows, a multiple of the swizzle period");
};

namespace dev {

// Byte offset of 16-byte chunk `chunk` (head dims 8 chunk .. 8 chunk + 7) of key row `row` in a
// K/V tile in wgmma's layout: column block chunk / 8, then 128-byte rows with the 128-byte swizzle.
__device__ __forceinline__ uint32_t wg_tile_off(int row, int chunk) {
  return static_cast<uint32_t>((chunk >> 3) * (kAttnKeyTile * 128) + row * 128 + (((chunk & 7) ^ (row & 7)) << 4));
}

// The 16 x 8 fragments of an m16n8 accumulator array, as the flat list wgmma's operands are.
template <int R>
__device__ __forceinline__ float (&wg_flat(float (&a)[R][4]))[R * 4] {
  return reinterpret_cast<float(&)[R * 4]>(a);
}

// Issue S = Q·Kᵀ (64 rows x 64 keys) for the K tile at s_k: head-dim steps in order, the first
// overwriting s (wgmma's scale-d = 0), the others adding to it. K is wgmma's B, K-major (keys x
// head dims, dims contiguous): step kk is 32 bytes into column block kk / 4. The mma.sync kernels
// add the first step to zeroed accumulators instead; the bits are the same: the two differ only
// where every product of the step is zero, -0 here against +0 there, and the softmax maps both to
// the same values (a scaled ±0, exp2(±0 - m) = exp2(-m), and ±0 - (±0) = ±0 ahead of exp2).
template <int HD>
__device__ __forceinline__ void wg_scores_issue(float (&s)[kAttnKeyTile / 8][4],
                                                      const uint32_t (&qf)[HD / 16][4], uint32_t s_k) {
#pragma unroll
  for (int kk = 0; kk < HD / 16; ++kk)
    wgmma_rs_m64n64k16(wg_flat(s), qf[kk], wgmma_desc_sw128(s_k + (kk / 4) * (kAttnKeyTile * 128) + (kk % 4) * 32),
                       kk > 0);
}

// Issue O += P·V for the V tile at s_v: the tile's 16-key steps in order. V is wgmma's B read
// N-major (keys x head dims, dims contiguous): 8 keys 128 bytes apart, the next 8 keys 1024 bytes
// on, the next 64 dims one column block on; step kk starts 16 keys (2048 bytes) on.
template <int HD>
__device__ __forceinline__ void wg_pv_issue(float (&o)[HD / 8][4], const uint32_t (&pf)[kAttnKeyTile / 16][4],
                                            uint32_t s_v) {
#pragma unroll
  for (int kk = 0; kk < kAttnKeyTile / 16; ++kk) {
    const uint64_t desc = wgmma_desc_sw128_mn(s_v + kk * 16 * 128, kAttnKeyTile * 128, 8 * 128);
    if constexpr (HD == 128) {
      wgmma_rs_m64n128k16_bmn(wg_flat(o), pf[kk], desc, 1);
    } else {
      wgmma_rs_m64n64k16_bmn(wg_flat(o), pf[kk], desc, 1);
    }
  }
}

}  // namespace dev

// grid (H / p, query tiles), p = 1 << pack_log2 heads per block; block 128; dynamic smem
// FlashWgCfg<HD>::kSmemBytes. A block covers tokens [t0, t0 + 64 / p) of heads h0 .. h0 + p - 1
// (one kv group); warp w takes the 16 consecutive tokens tw .. tw + 15 of head h0 + w % p.
template <int HD>
__global__ void __launch_bounds__(FlashWgCfg<HD>::kThreads, FlashWgCfg<HD>::kMinBlocks)
    k_attn_flash_prefill_wg(const uint16_t* __restrict__ q16, const uint16_t* __restrict__ k_cache,
                            const uint16_t* __restrict__ v_cache, uint16_t* __restrict__ o16, int T, int H, int Hkv,
                            int p0, int max_ctx, float scale_log2, int pack_log2) {
  using Cfg = FlashWgCfg<HD>;
  constexpr int kTile = Cfg::kTile;
  extern __shared__ __align__(1024) uint8_t smem[];
  // The declared alignment is not a promise about the address the block gets: round up.
  const uint32_t s_ring = (dev::smem_addr(smem) + Cfg::kAlign - 1) & ~static_cast<uint32_t>(Cfg::kAlign - 1);
  const uint32_t s_q = s_ring + (Cfg::kStages - 1) * Cfg::kStageBytes;

  // The block's geometry and Q staging are variant 1's, written out here as there: the same code
  // moved into shared helpers cost this kernel 18 registers and 4% (session 21, call 2).
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
  const int pos0 = p0 + lane / 4 + tw;  // position of row g (row g + 8 is pos0 + 8)

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
  const uint32_t kv_dst0 = dev::wg_tile_off(kv_r0, kv_c);
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
      dev::cp_async_16(s_k + i * Cfg::kRowStep * 128, valid ? k_head + off : k_head, valid);
      dev::cp_async_16(s_k + Cfg::kTileBytes + i * Cfg::kRowStep * 128, valid ? v_head + off : v_head, valid);
    }
  };
  // Commit group i holds tile i (group 0 also Q); one group per tile, empty past the last.
#pragma unroll
  for (int i = 0; i < Cfg::kStages - 1; ++i) {
    load_kv(i);
    dev::cp_async_commit();
  }

  uint32_t qf[HD / 16][4];           // the block's 64 query rows as wgmma A fragments, all head-dim steps
  float o[HD / 8][4];                // output accumulators: this warp's 16 rows x HD, fp32
  float m_run[2] = {-INFINITY, -INFINITY};  // rows g and g + 8 of the warp (g = lane / 4)
  float l_run[2] = {0.0f, 0.0f};            // this thread's partial row sums (quad-reduced at the end)
  float s_even[kTile / 8][4], s_odd[kTile / 8][4];  // S of the even and the odd tiles (wgmma accumulators)
#pragma unroll
  for (int n = 0; n < HD / 8; ++n) o[n][0] = o[n][1] = o[n][2] = o[n][3] = 0.0f;
  dev::cp_async_wait<Cfg::kStages - 2>();  // group 0: Q and tile 0
  dev::fence_proxy_async_smem();           // this thread's copies, before the tensor cores read them
  __syncthreads();
  dev::flash_load_q<HD>(qf, s_q, 16 * warp, lane);
  dev::wgmma_fence();
  dev::wg_scores_issue<HD>(s_even, qf, stage_of(0));
  dev::wgmma_commit();
  dev::wgmma_wait<0>();
  dev::fence_operands(dev::wg_flat(s_even));
  // Q's stage is refilled only after the loop's first barrier: every warp has its Q by then.

  // PFX_RACE_STRESS_POINT: per-warp random stalls in race-stress builds only (kernels/race_stress.cuh),
  // between the phases of the loop — wait, refill, Q·Kᵀ + softmax, P·V — so a missing barrier shows in parity.
  // Tile j: its S in s_now (complete), S of tile j+1 issued into s_nb.
  auto tile_step = [&](float (&s_now)[kTile / 8][4], float (&s_nb)[kTile / 8][4], int j) {
    PFX_RACE_STRESS_POINT(1);
    // This thread's copies of tile j+1 have landed (and so every earlier tile's).
    dev::cp_async_wait<Cfg::kStages - 3>();
    dev::fence_proxy_async_smem();
    PFX_RACE_STRESS_POINT(2);
    // The one barrier of the tile: every thread's copies of tile j+1 are visible to the tensor
    // cores, and every warp's MMAs on tile j-1 are done (each waits for them at the end of its
    // tile), so its stage may be refilled with tile j + kStages - 1. The warpgroup's own arrival
    // at each wgmma also lines the four warps up, which is why the GPU tests pass with this
    // barrier planted out (session 21, call 4); the barrier is what the memory model asks for,
    // and the race gate plants the wait above out instead (scripts/gpu/plant_race.sh).
    __syncthreads();
    load_kv(j + Cfg::kStages - 1);
    dev::cp_async_commit();

    const int key0 = j * kTile;
    const uint32_t s_v = stage_of(j) + Cfg::kTileBytes;
    const bool mask = key0 + kTile - 1 > p0 + tw || key0 + kTile > ctx;
    dev::wgmma_fence();
    if (j + 1 < n_tiles) dev::wg_scores_issue<HD>(s_nb, qf, stage_of(j + 1));  // beside the softmax below
    dev::wgmma_commit();
    // The scaled scores go to a fresh array: s_now is also a wgmma accumulator (the other parity's),
    // and writing it between a wgmma and its wait serializes every wgmma (ptxas C7515).
    float corr[2], m_use[2], sc[kTile / 8][4];
    if (mask) {
      dev::softmax_max(s_now, sc, m_run, l_run, corr, m_use, key0, pos0, ctx, true, scale_log2, lane);
    } else {
      dev::softmax_max(s_now, sc, m_run, l_run, corr, m_use, key0, pos0, ctx, false, scale_log2, lane);
    }
    // O * 1 is O: a warp none of whose rows' max moved skips the rescale (the same bits).
    if (__any_sync(0xffffffffu, corr[0] != 1.0f || corr[1] != 1.0f)) dev::softmax_rescale_o<HD>(o, corr);
    uint32_t pf[kTile / 16][4];
    dev::softmax_probs(sc, pf, l_run, m_use);
    PFX_RACE_STRESS_POINT(3);
    dev::wgmma_fence();
    dev::wg_pv_issue<HD>(o, pf, s_v);
    dev::wgmma_commit();
    dev::wgmma_wait<0>();
    dev::fence_operands(dev::wg_flat(o));
    dev::fence_operands(dev::wg_flat(s_nb));
    PFX_RACE_STRESS_POINT(4);
  };
  for (int j = 0; j < n_tiles; j += 2) {
    tile_step(s_even, s_odd, j);
    if (j + 1 < n_tiles) tile_step(s_odd, s_even, j + 1);
  }

  dev::store_rows<HD>(o, l_run, o16, tw, T, H, hw, lane);
}

PFX_KERNEL_LAUNCH_INFO("k_attn_flash_prefill_wg<64>", FlashWgCfg<64>::kThreads, FlashWgCfg<64>::kSmemBytes);
PFX_KERNEL_LAUNCH_INFO("k_attn_flash_prefill_wg<128>", FlashWgCfg<128>::kThreads, FlashWgCfg<128>::kSmemBytes);

namespace detail {

FlashVariantInfo flash_wg_info() {
  return {"wg_wgmma",
          "1 warpgroup x 64 rows, wgmma (Q and P from registers, K and V from shared memory), S of tile j+1 "
          "during tile j's softmax, variant 1's ring, grid and GQA packing",
          FlashWgCfg<128>::kThreads, FlashWgCfg<64>::kSmemBytes, FlashWgCfg<128>::kSmemBytes};
}

void launch_flash_wg(const AttentionArgs& a, cudaStream_t stream) {
  if (a.hd == 64) {
    launch_flash_packed(k_attn_flash_prefill_wg<64>, FlashWgCfg<64>::kThreads, FlashWgCfg<64>::kSmemBytes, a, stream);
  } else {
    launch_flash_packed(k_attn_flash_prefill_wg<128>, FlashWgCfg<128>::kThreads, FlashWgCfg<128>::kSmemBytes, a,
                        stream);
  }
}

}  // namespace detail

}  // namespace pfx::kernels

// The fused quantized GEMM with the decoded weights shared through shared memory (`ws_a64_n256`,
// and `ws_a64c2_n256`: the same CTA on a 2-CTA cluster that shares the X tile, at the end):
// Yᵀ = W · Xᵀ as in k_gemm_ws (kernels/gemm_ws_kernel.cuh), but a CTA's tile is ONE 64-row panel
// × 256 tokens, and its two consumer warpgroups split the decode instead of the rows.
//
// Why: at T = 512 the 128 × 128 tile of k_gemm_ws is issue-bound (docs/gemm-fast.md, "The two
// numbers": ~196 instructions per consumer warp per k-tile for 512 tensor cycles, two warps per
// scheduler), and 128 × 256 tiles leave half the SMs idle (64 tiles at N = 4096). Here, per
// k-tile, warpgroup c decodes only k16 steps 2c and 2c + 1 of the panel (16 weights per thread
// instead of 32), writes those A fragments into a shared 64 × 64 fp16 tile (stmatrix, the 128-byte
// swizzle that wgmma descriptors read), and both warpgroups multiply the whole tile by their own
// 128 tokens of X (wgmma m64n128k16, A and B from shared memory). Same tile count as 128 × 128
// (N/64 × T/256 = N/128 × T/128), same MMAs per SM, half the decode per MMA.
//
// Per k-tile j, consumer warpgroup c (one named barrier of the 256 consumer threads per k-tile;
// three A tiles in a ring):
//   wait `full` of stage j, decode steps 2c, 2c+1 into registers;
//   wgmma_wait<1>: this warpgroup's MMAs of k-tile j - 2 are done; release stage j - 2;
//   stmatrix into A tile j % 3 (last read by the MMAs of k-tile j - 3: done in this warpgroup by the
//     wait above, in the other one before it reached the previous barrier, which this one passed);
//   fence.proxy.async (the tensor cores read what st.shared-class stores wrote), barrier;
//   4 wgmma m64n128k16 (k16 steps 0..3 of A tile j % 3, the warpgroup's half of X stage j), commit.
// Summation order: every output is one fp32 accumulator over k in increasing order, k16 steps by
// the tensor cores, as in k_gemm_ws and cuBLAS: the result is bitwise that of the other variants.
#pragma once
#include <cuda.h>

#include <cstdint>

#include "kernels/gemm_ws_kernel.cuh"
#include "kernels/ptx.cuh"
#include "kernels/race_stress.cuh"
#include "kernels/sm90.h"

namespace pfx::kernels::dev {

template <class L>
struct WsA64Cfg {
  static constexpr int BM = 64, BN = 256, BK = 64, kHalfN = BN / 2;
  static constexpr int kThreads = 384;  // producer + 2 consumer warpgroups
  static constexpr int kProducerRegs = 40, kConsumerRegs = 232;
  static constexpr int kXStageBytes = BN * BK * 2;                   // [256 tokens][64] fp16, 128-byte swizzle
  static constexpr int kWStageBytes = L::kQuantBytes + L::kScaleBytes;  // one panel
  static constexpr int kTxBytes = kXStageBytes + kWStageBytes;
  static constexpr int kABufs = 3, kABytes = BM * BK * 2;  // [64 rows][64] fp16, the same swizzle
  static constexpr int kBudget =
      ::pfx::kernels::sm90::kMaxSmemPerBlock - 1024 /* alignment slack */ - kABufs * kABytes;
  static constexpr int kStagesFit = (kBudget - 8) / (kXStageBytes + kWStageBytes + 16);
  static constexpr int S = kStagesFit > 8 ? 8 : kStagesFit;
  static constexpr int kSmemBytes = 1024 + kABufs * kABytes + S * (kXStageBytes + kWStageBytes) + (2 * S + 1) * 8;
  static constexpr int kConsumerBarrier = 1;  // named barrier id of the two consumer warpgroups

  static_assert(kABytes % 1024 == 0 && kXStageBytes % 1024 == 0, "tiles keep the 1024-byte swizzle alignment");
  static_assert(kWStageBytes % 16 == 0 && L::kQuantBytes % 16 == 0, "bulk copies move 16-byte multiples");
  static_assert(S >= 3, "at least three stages: a stage is released two k-tiles after its use");
  static_assert(kSmemBytes <= ::pfx::kernels::sm90::kMaxSmemPerBlock, "ring exceeds 227 KiB of shared memory");
  static_assert(kProducerRegs * 128 + kConsumerRegs * 256 <= ::pfx::kernels::sm90::kRegistersPerSm,
                "setmaxnreg split exceeds the register file");
};

// Shared address of row `row`, 16-byte chunk `chunk` of a [64][128-byte] tile in the 128-byte
// swizzle (chunk c of row r at c ^ (r % 8): kernels/ptx.cuh, wgmma_desc_sw128).
__device__ __forceinline__ uint32_t ws_a_tile_addr(uint32_t tile, int row, int chunk) {
  return tile + static_cast<uint32_t>(row * 128 + ((chunk ^ (row & 7)) << 4));
}

// Warp `warp` (rows 16·warp ..) of a consumer warpgroup stores its A fragment of k16 step s.
__device__ __forceinline__ void ws_store_a_step(uint32_t tile, int warp, int lane, int s, const uint32_t (&a)[4]) {
  const int m = lane >> 3;  // the 8x8 matrix this lane addresses: a[m]
  const int row = 16 * warp + (lane & 7) + 8 * (m & 1);
  stmatrix_x4(ws_a_tile_addr(tile, row, 2 * s + (m >> 1)), a);
}

// Panel `panel` (0, 1) of the repacked pair `pair`, k-tile kt, into one weight stage.
template <class L>
__device__ __forceinline__ void ws_a64_load_panel(const WsParams& p, uint8_t* stage, int pair, int panel, int kt,
                                                  uint32_t bar) {
  const uint32_t wdst = smem_addr(stage);
  bulk_copy_g2s(wdst, p.w + ws_quant_offset<L>(pair, kt, p.n_groups) + int64_t{panel} * L::kQuantBytes, L::kQuantBytes,
                bar);
  if constexpr (L::kScaleBytes > 0)
    bulk_copy_g2s(wdst + L::kQuantBytes, p.w + ws_scale_offset<L>(pair, kt, p.n_groups) + int64_t{panel} * L::kScaleBytes,
                  L::kScaleBytes, bar);
}

// One consumer warpgroup's side of the shared-A k loop (both kernels below): per k-tile wait
// `full`, decode this warpgroup's two k16 steps, release the stage of two k-tiles ago, store the
// fragments into the A ring, barrier with the other warpgroup, multiply. The ring positions carry
// over from tile to tile. release(stage) frees a stage (every consumer thread calls it).
template <int kType>
struct WsA64Consumer {
  using L = WsLayout<kType>;
  using Cfg = WsA64Cfg<L>;
  using Decode = typename WsDecoder<kType>::type;
  static constexpr int S = Cfg::S;
  const uint8_t* ws;  // the weight stages
  uint32_t full0, a0;
  uint64_t xdesc0, adesc0;
  int c, tid, warp, lane, quad0;
  int stage = 0, abuf = 0, prev1 = S, prev2 = S;  // S: the spare barrier (nothing to release)
  uint32_t phase = 0;

  __device__ __forceinline__ WsA64Consumer(uint8_t* as, const uint8_t* xs, const uint8_t* ws_, uint32_t full, int wg_c,
                                           int thread)
      : ws(ws_),
        full0(full),
        a0(smem_addr(as)),
        // X descriptor of stage 0 at this warpgroup's 128 tokens (16 KB in: 1024 units of 16 bytes).
        xdesc0(wgmma_desc_sw128(smem_addr(xs)) + static_cast<uint64_t>(wg_c * (Cfg::kHalfN * 128 >> 4))),
        adesc0(wgmma_desc_sw128(smem_addr(as))),
        c(wg_c),
        tid(thread),
        warp(thread >> 5),
        lane(thread & 31),
        quad0(thread & 31 & ~3) {}

  template <class Release>
  __device__ __forceinline__ void tile(float (&acc)[Cfg::kHalfN / 2], int nk, const Release& release) {
#pragma unroll
    for (int i = 0; i < Cfg::kHalfN / 2; ++i) acc[i] = 0.0f;
    for (int kt = 0; kt < nk; ++kt) {
      mbar_wait(full0 + 8 * stage, phase);
      PFX_RACE_STRESS_POINT(2);
      const uint8_t* wq = ws + stage * Cfg::kWStageBytes;
      const uint8_t* wsc = wq + L::kQuantBytes;
      Decode dec;
      ws_decoder_load(dec, wq, wsc, tid, quad0, kt % L::kTiles);
      uint32_t f0[4], f1[4];
      if (c == 0) {  // constant steps in each branch: the decoders index their scale arrays by step
        dec.step(0, f0);
        dec.step(1, f1);
      } else {
        dec.step(2, f0);
        dec.step(3, f1);
      }
      wgmma_wait<1>();  // this warpgroup's MMAs of k-tile kt - 2 are done
      release(prev2);
      const uint32_t tile_a = a0 + static_cast<uint32_t>(abuf * Cfg::kABytes);
      ws_store_a_step(tile_a, warp, lane, 2 * c, f0);
      ws_store_a_step(tile_a, warp, lane, 2 * c + 1, f1);
      fence_proxy_async_smem();
      named_barrier_sync(Cfg::kConsumerBarrier, 256);
      const uint64_t adesc = adesc0 + static_cast<uint64_t>((abuf * Cfg::kABytes) >> 4);
      const uint64_t xdesc = xdesc0 + static_cast<uint64_t>((stage * Cfg::kXStageBytes) >> 4);
      wgmma_fence();
#pragma unroll
      for (int s = 0; s < 4; ++s) wgmma_ss_m64n128k16(acc, adesc + 2 * s, xdesc + 2 * s, 1);
      wgmma_commit();
      prev2 = prev1;
      prev1 = stage;
      if (++stage == S) stage = 0, phase ^= 1;
      if (++abuf == Cfg::kABufs) abuf = 0;
    }
    wgmma_wait<0>();
    fence_operands(acc);
    release(prev2);
    release(prev1);
    prev1 = prev2 = S;
  }
};

template <int kType>
__global__ void __launch_bounds__(WsA64Cfg<WsLayout<kType>>::kThreads, 1)
    k_gemm_ws_a64(const __grid_constant__ CUtensorMap xmap, const WsParams p) {
  using L = WsLayout<kType>;
  using Cfg = WsA64Cfg<L>;
  constexpr int S = Cfg::S, BN = Cfg::BN;
  extern __shared__ uint8_t smem_dyn[];
  uint8_t* const smem = smem_dyn + ((1024u - (smem_addr(smem_dyn) & 1023u)) & 1023u);
  uint8_t* const as = smem;                               // [3][64][128] A tiles
  uint8_t* const xs = as + Cfg::kABufs * Cfg::kABytes;    // [S][256][128] X stages
  uint8_t* const ws = xs + S * Cfg::kXStageBytes;         // [S][kWStageBytes] one panel's weights
  const uint32_t full0 = smem_addr(ws + S * Cfg::kWStageBytes);  // [S] mbarriers
  const uint32_t empty0 = full0 + 8 * S;                          // [S + 1]: S is the spare
  const int wg = threadIdx.x >> 7, tid = threadIdx.x & 127;
  const int tiles = p.m_tiles * p.t_tiles;  // m_tiles: 64-row panels here

  if (threadIdx.x == 0) {
    for (int s = 0; s < S; ++s) mbar_init(full0 + 8 * s, 1);
    for (int s = 0; s <= S; ++s) mbar_init(empty0 + 8 * s, 256);  // one arrival per consumer thread
    fence_mbarrier_init();
  }
  __syncthreads();

  if (wg == 0) {
    setmaxnreg_dec<Cfg::kProducerRegs>();
    if (tid != 0) return;
    int stage = 0;
    uint32_t phase = 0;
    for (int tile = blockIdx.x; tile < tiles; tile += gridDim.x) {
      const int mt = tile % p.m_tiles, tt = tile / p.m_tiles;
      for (int kt = 0; kt < p.nk; ++kt) {
        mbar_wait(empty0 + 8 * stage, phase ^ 1);
        PFX_RACE_STRESS_POINT(1);
        const uint32_t bar = full0 + 8 * stage;
        mbar_arrive_expect_tx(bar, Cfg::kTxBytes);
        tma_load_2d(smem_addr(xs + stage * Cfg::kXStageBytes), &xmap, kt * Cfg::BK, tt * BN, bar);
        ws_a64_load_panel<L>(p, ws + stage * Cfg::kWStageBytes, mt >> 1, mt & 1, kt, bar);  // panel mt % 2 of pair mt / 2
        if (++stage == S) stage = 0, phase ^= 1;
      }
      ws_prefetch_old_tile(p, p.y, p.n_out, mt * Cfg::BM, Cfg::BM, tt * BN, BN);
    }
    return;
  }

  setmaxnreg_inc<Cfg::kConsumerRegs>();
  WsA64Consumer<kType> consumer(as, xs, ws, full0, wg - 1, tid);
  const auto release = [&](int st) {
    PFX_RACE_STRESS_POINT(3);
    mbar_arrive(empty0 + 8 * st);
  };
  float acc[Cfg::kHalfN / 2];
  for (int tile = blockIdx.x; tile < tiles; tile += gridDim.x) {
    const int mt = tile % p.m_tiles, tt = tile / p.m_tiles;
    consumer.tile(acc, p.nk, release);
    PFX_RACE_STRESS_POINT(4);
    ws_epilogue<Cfg::kHalfN>(p, p.y, p.n_out, acc, mt * Cfg::BM, tt * BN + consumer.c * Cfg::kHalfN, consumer.lane,
                             consumer.warp);
  }
}

// ---- the shared-A tile on a 2-CTA cluster (`ws_a64c2_n256`) ----------------------------------
// ws_a64_n256 halved the decode per MMA and doubled X's trips through L2 (one per 64 weight rows:
// 6.3 TB/s at T = 512, N = 4096, its bound; docs/gemm-fast.md, session 9). Here the two CTAs of a
// cluster take the two panels of one 128-row pair over the same 256 tokens, and each CTA's
// producer loads half of the X tile (128 tokens) and multicasts it into both CTAs' stages: X
// crosses L2 once per 128 weight rows again, as in ws_n128, while each SM decodes 64 rows for 256
// tokens (half of ws_n128's decode per MMA). Tiles are panel pairs × 256 tokens, one per cluster:
// at T = 512, N = 4096, 64 clusters on 128 SMs (ws_n256: 64 CTAs). Groups (Q/K/V) and the head
// stores work as in k_gemm_ws (the tile is a panel pair of one part).
// A stage is free once the consumers of both CTAs have released it: every consumer thread arrives
// on its own CTA's `empty` and on its peer's (512 arrivals), and no CTA leaves while its peer may
// still multicast into it or arrive on its barriers (cluster barrier at the end).
// Warps 0-7 are the two consumer warpgroups, warp 8 the producer: 288 threads get 224 registers
// each without setmaxnreg (at 384 threads ptxas holds the whole kernel to 168, and the cluster's
// tile walk spilled there).
template <class L>
struct WsA64c2Cfg : WsA64Cfg<L> {
  static constexpr int kThreads = 288, kProducerWarp = 8;
};

template <int kType>
__global__ void __launch_bounds__(WsA64c2Cfg<WsLayout<kType>>::kThreads, 1)
    k_gemm_ws_a64c2(const __grid_constant__ CUtensorMap xmap, const WsParams p) {
  using L = WsLayout<kType>;
  using Cfg = WsA64c2Cfg<L>;
  constexpr int S = Cfg::S, BN = Cfg::BN;
  extern __shared__ uint8_t smem_dyn[];
  uint8_t* const smem = smem_dyn + ((1024u - (smem_addr(smem_dyn) & 1023u)) & 1023u);
  uint8_t* const as = smem;                               // [3][64][128] A tiles
  uint8_t* const xs = as + Cfg::kABufs * Cfg::kABytes;    // [S][256][128] X stages (half from the peer)
  uint8_t* const ws = xs + S * Cfg::kXStageBytes;         // [S][kWStageBytes] this CTA's panel
  const uint32_t full0 = smem_addr(ws + S * Cfg::kWStageBytes);  // [S] mbarriers
  const uint32_t empty0 = full0 + 8 * S;                          // [S + 1]: S is the spare
  const int tiles = p.m_tiles * p.t_tiles;  // m_tiles: 128-row panel pairs

  if (threadIdx.x == 0) {
    for (int s = 0; s < S; ++s) mbar_init(full0 + 8 * s, 1);
    for (int s = 0; s <= S; ++s) mbar_init(empty0 + 8 * s, 512);  // 256 own + 256 peer consumer threads
    fence_mbarrier_init();
  }
  cluster_sync();  // the peer's barriers exist before any multicast or remote arrival

  if (threadIdx.x >= 32 * Cfg::kProducerWarp) {
    if (threadIdx.x == 32 * Cfg::kProducerWarp) {
      const int rank = static_cast<int>(cluster_ctarank());
      int stage = 0;
      uint32_t phase = 0;
      for (int tile = static_cast<int>(cluster_id_x()); tile < tiles; tile += static_cast<int>(cluster_count_x())) {
        const int mt = tile % p.m_tiles, tt = tile / p.m_tiles;
        for (int kt = 0; kt < p.nk; ++kt) {
          mbar_wait(empty0 + 8 * stage, phase ^ 1);  // both CTAs' consumers are done with it
          PFX_RACE_STRESS_POINT(1);
          const uint32_t bar = full0 + 8 * stage;
          mbar_arrive_expect_tx(bar, Cfg::kTxBytes);  // the whole X tile (half from the peer) + own weights
          tma_load_2d_multicast(smem_addr(xs + stage * Cfg::kXStageBytes) + rank * Cfg::kHalfN * 128, &xmap,
                                kt * Cfg::BK, tt * BN + rank * Cfg::kHalfN, bar, 0x3);
          ws_a64_load_panel<L>(p, ws + stage * Cfg::kWStageBytes, mt, rank, kt, bar);
          if (++stage == S) stage = 0, phase ^= 1;
        }
        const WsPartOut o = ws_part_out(p, mt);
        ws_prefetch_old_tile(p, o.y, o.n_out, o.row0 + rank * 64, 64, tt * BN, BN);
      }
    }
    __syncwarp();
  } else {
    WsA64Consumer<kType> consumer(as, xs, ws, full0, static_cast<int>(threadIdx.x >> 7),
                                  static_cast<int>(threadIdx.x & 127));
    const auto release = [&](int st) {
      PFX_RACE_STRESS_POINT(3);
      mbar_arrive(empty0 + 8 * st);
      mbar_arrive_remote(mapa_shared(empty0 + 8 * st, cluster_ctarank() ^ 1u));
    };
    float acc[Cfg::kHalfN / 2];
    for (int tile = static_cast<int>(cluster_id_x()); tile < tiles; tile += static_cast<int>(cluster_count_x())) {
      const int mt = tile % p.m_tiles, tt = tile / p.m_tiles;
      consumer.tile(acc, p.nk, release);
      PFX_RACE_STRESS_POINT(4);
      const WsPartOut o = ws_part_out(p, mt);
      const int row0 = o.row0 + static_cast<int>(cluster_ctarank()) * 64, t0 = tt * BN + consumer.c * Cfg::kHalfN;
      if (p.mode == kWsHeads) ws_store_heads<Cfg::kHalfN, 8>(p, o, acc, row0, t0, consumer.lane, consumer.warp);
      else ws_epilogue<Cfg::kHalfN>(p, o.y, o.n_out, acc, row0, t0, consumer.lane, consumer.warp);
    }
  }
  cluster_sync();  // no CTA leaves while its peer may still write into it or arrive on its barriers
}

}  // namespace pfx::kernels::dev

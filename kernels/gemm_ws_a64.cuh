// The fused quantized GEMM with the decoded weights shared through shared memory (`ws_a64_n256`):
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

template <int kType>
__global__ void __launch_bounds__(WsA64Cfg<WsLayout<kType>>::kThreads, 1)
    k_gemm_ws_a64(const __grid_constant__ CUtensorMap xmap, const WsParams p) {
  using L = WsLayout<kType>;
  using Cfg = WsA64Cfg<L>;
  using Decode = typename WsDecoder<kType>::type;
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
    // Panel mt is panel mt % 2 of the repacked pair mt / 2.
    const auto load_w = [&](int mt, int kt, int stage, uint32_t bar) {
      const uint32_t wdst = smem_addr(ws + stage * Cfg::kWStageBytes);
      const int64_t pair = mt >> 1, panel = mt & 1;
      bulk_copy_g2s(wdst, p.w + ws_quant_offset<L>(pair, kt, p.n_groups) + panel * L::kQuantBytes, L::kQuantBytes,
                    bar);
      if constexpr (L::kScaleBytes > 0)
        bulk_copy_g2s(wdst + L::kQuantBytes, p.w + ws_scale_offset<L>(pair, kt, p.n_groups) + panel * L::kScaleBytes,
                      L::kScaleBytes, bar);
    };
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
        load_w(mt, kt, stage, bar);
        if (++stage == S) stage = 0, phase ^= 1;
      }
      ws_prefetch_old_tile(p, p.y, p.n_out, mt * Cfg::BM, Cfg::BM, tt * BN, BN);
    }
    return;
  }

  setmaxnreg_inc<Cfg::kConsumerRegs>();
  const int c = wg - 1, warp = tid >> 5, lane = tid & 31, quad0 = lane & ~3;
  const uint32_t a0 = smem_addr(as);
  // X descriptor of stage 0 at this warpgroup's 128 tokens (16 KB in: 1024 units of 16 bytes).
  const uint64_t xdesc0 = wgmma_desc_sw128(smem_addr(xs)) + static_cast<uint64_t>(c * (Cfg::kHalfN * 128 >> 4));
  const uint64_t adesc0 = wgmma_desc_sw128(a0);
  const auto release = [&](int st) {
    PFX_RACE_STRESS_POINT(3);
    mbar_arrive(empty0 + 8 * st);
  };
  int stage = 0, abuf = 0, prev1 = S, prev2 = S;  // S: the spare barrier (nothing to release)
  uint32_t phase = 0;
  float acc[Cfg::kHalfN / 2];
  for (int tile = blockIdx.x; tile < tiles; tile += gridDim.x) {
    const int mt = tile % p.m_tiles, tt = tile / p.m_tiles;
#pragma unroll
    for (int i = 0; i < Cfg::kHalfN / 2; ++i) acc[i] = 0.0f;
    for (int kt = 0; kt < p.nk; ++kt) {
      mbar_wait(full0 + 8 * stage, phase);
      PFX_RACE_STRESS_POINT(2);
      const uint8_t* wq = ws + stage * Cfg::kWStageBytes;
      const uint8_t* wsc = wq + L::kQuantBytes;
      const int kt_in = kt % L::kTiles;
      Decode dec;
      if constexpr (Decode::kQuadScales) {
        float v0, v1;
        Decode::lane_scales(wsc, tid, kt_in, v0, v1);
#pragma unroll
        for (int q = 0; q < 4; ++q)
          dec.set_scale(q, __shfl_sync(0xffffffffu, v0, quad0 | q), __shfl_sync(0xffffffffu, v1, quad0 | q));
      }
      dec.load(wq, wsc, tid, kt_in);
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
    PFX_RACE_STRESS_POINT(4);
    ws_epilogue<Cfg::kHalfN>(p, p.y, p.n_out, acc, mt * Cfg::BM, tt * BN + c * Cfg::kHalfN, lane, warp);
  }
}

}  // namespace pfx::kernels::dev

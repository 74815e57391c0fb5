// The fused quantized GEMM kernel template: Y[T,N] = X16[T,K] · fp16(dequant(W[N,K]))ᵀ.
//
// One CTA computes a BT (tokens) × BN (weight rows) tile of Y over all of K, in k-tiles of 64:
//   1. cp.async pipeline, S stages deep: the fp16 X tile [BT][64] and the raw quantized bytes of
//      the W tile (gemm_fast_weights.cuh), 16-byte chunks, rows past T / N zero-filled.
//   2. Dequantization, one k-tile ahead of the MMA: all threads turn the raw W stage into an fp16
//      tile [BN][64] (double-buffered), each weight exactly once per CTA.
//   3. Tensor cores on fp16 × fp16 with fp32 accumulators: mma.sync m16n8k16 fed by ldmatrix, or
//      (sm_90a) wgmma m64nBNk16 straight from shared memory, issued asynchronously so that the
//      dequantization of the next k-tile runs while the tensor cores work.
//   4. Epilogue from the accumulator registers: fp32 store, fp32 accumulate-into, fp16 store, or
//      the SwiGLU pair a16 = fp16(silu(g)·u).
// X and W tiles use 128-byte rows with the 128-byte XOR swizzle (16-byte chunk c of row r stored at
// chunk c ^ (r % 8)): conflict-free for ldmatrix and cp.async, and exactly wgmma's SW128 K-major
// layout, so both MMA flavours read the same tiles.
//
// Two main loops:
//  - classic (gemm_fast_body: k_gemm_mma, k_gemm_wgmma): one __syncthreads per k-tile carries every
//    hazard (r39's fence accounting): when iteration i starts, (a) k-tile i+1's raw bytes have
//    landed (each thread waited for its own cp.async groups), (b) the fp16 tile of k-tile i is
//    complete, (c) the MMA of k-tile i-1 is done with its X stage and its fp16 buffer, the next to
//    be overwritten (by the copy of k-tile i+S-1 and the dequantization of k-tile i+1). The wgmma
//    flavour waits for all its MMAs before that barrier, so the tensor cores drain every k-tile.
//  - pipelined (gemm_fast_body_pipe: k_gemm_wgmma_pipe): the raw weights are copied one k-tile
//    ahead of the activations, both D k-tiles ahead of their consumers, and wgmma_wait<1> keeps the
//    MMAs of one k-tile in flight across the barrier; three fp16 weight buffers and D+2 X stages
//    make that safe (hazards listed at the loop).
// Both wgmma loops fence generic-proxy writes (cp.async, st.shared) before async-proxy reads.
#pragma once
#include <cuda_fp16.h>

#include <cstdint>

#include "kernels/gemm_fast_weights.cuh"
#include "kernels/ptx.cuh"
#include "kernels/sm90.h"

namespace pfx::kernels::dev {

enum EpilogueMode : int { kStoreF32 = 0, kAccumulateF32 = 1, kStoreF16 = 2, kSwiglu = 3 };

struct GemmParams {
  const uint8_t* w[2];      // weight matrices: w[0] (or gate), w[1] = up (SwiGLU only)
  const uint8_t* w_end[2];  // one past each matrix's last byte (cp.async source clamp)
  int64_t row_bytes;        // bytes per weight row
  int rb16;                 // row_bytes % 16 (row misalignment step)
  int n_rows;               // rows per weight matrix (N)
  const uint16_t* x;        // [T, K] fp16
  int T, K;
  void* y;                  // [T, N]: float or fp16 by mode
  int mode;                 // EpilogueMode
};

// Tile configuration. MMA flavour mma.sync: kWarpsT × kWarpsN warps, each a (BT/kWarpsT) ×
// (BN/kWarpsN) warp tile. wgmma: BT/64 warpgroups, each 64 tokens × all BN rows.
template <int kBT, int kBN, int kWarpsT, int kWarpsN, int kStages, bool kUseWgmma, int kMinBlocksPerSm>
struct GemmCfg {
  static constexpr int BT = kBT, BN = kBN, BK = 64, S = kStages;
  static constexpr bool kWgmma = kUseWgmma, kPipelined = false;
  static constexpr int kMinBlocks = kMinBlocksPerSm;
  static constexpr int kWarps = kUseWgmma ? 4 * (kBT / 64) : kWarpsT * kWarpsN;
  static constexpr int kThreads = 32 * kWarps;
  static constexpr int kWarpsAlongN = kUseWgmma ? 1 : kWarpsN;
  // Per-thread accumulator fragment: MI × NI tiles of 16 × 8.
  static constexpr int MI = kUseWgmma ? 1 : (kBT / kWarpsT) / 16;
  static constexpr int NI = kUseWgmma ? kBN / 8 : (kBN / kWarpsN) / 8;
  static constexpr int WT = kUseWgmma ? 64 : kBT / kWarpsT;  // tokens per warp(group)
  static constexpr int WN = kUseWgmma ? kBN : kBN / kWarpsN;  // weight rows per warp(group)
  static constexpr int kTileRowBytes = BK * 2;                // 128: one fp16 row of a k-tile
  static constexpr int kXStageBytes = BT * kTileRowBytes;
  static constexpr int kWdBytes = BN * kTileRowBytes;

  template <class W>
  static constexpr int smem_bytes() {
    return 1024 /* alignment slack: swizzled tiles must start on 1024 bytes */ + S * kXStageBytes + 2 * kWdBytes +
           S * BN * W::kRowStride;
  }

  static_assert(kStages >= 3, "the k-tile i+1 dequantization needs its stage landed while i+S-1 is in flight");
  static_assert(kBT % 64 == 0 && kBN % 32 == 0, "tile shape");
  static_assert(kUseWgmma || ((kBT / kWarpsT) % 16 == 0 && (kBN / kWarpsN) % 16 == 0), "mma.sync warp tile: 16 x 16 multiples");
  static_assert(!kUseWgmma || kBN == 128 || kBN == 256, "wgmma flavour: n128 or n256");
  static_assert(NI % 2 == 0, "SwiGLU pairs gate and up halves of a warp's columns");
  static_assert(kThreads <= ::pfx::kernels::sm90::kMaxThreadsPerBlock, "threads per block");
  static_assert(MI * NI * 4 <= 128, "accumulators: at most 128 fp32 registers per thread");
};

// Tile configuration of the pipelined wgmma loop: BT/64 warpgroups, each 64 tokens × all BN rows;
// D = k-tiles of copy lookahead; D+2 X stages, D+1 raw-weight stages, 3 fp16 weight buffers.
template <int kBT, int kBN, int kLookahead, int kMinBlocksPerSm>
struct GemmPipeCfg {
  static constexpr int BT = kBT, BN = kBN, BK = 64, D = kLookahead;
  static constexpr int SX = D + 2, SW = D + 1, kWdBufs = 3;
  static constexpr int S = SX;  // reported as the stage count
  static constexpr bool kWgmma = true, kPipelined = true;
  static constexpr int kMinBlocks = kMinBlocksPerSm;
  static constexpr int kWarps = 4 * (kBT / 64);
  static constexpr int kThreads = 32 * kWarps;
  static constexpr int kWarpsAlongN = 1;
  static constexpr int MI = 1, NI = kBN / 8, WT = 64, WN = kBN;
  static constexpr int kTileRowBytes = BK * 2;
  static constexpr int kXStageBytes = BT * kTileRowBytes;
  static constexpr int kWdBytes = BN * kTileRowBytes;

  template <class W>
  static constexpr int smem_bytes() {
    return 1024 + SX * kXStageBytes + kWdBufs * kWdBytes + SW * BN * W::kRowStride;
  }

  static_assert(kLookahead >= 1, "at least one k-tile of lookahead");
  static_assert(kBT % 64 == 0 && (kBN == 128 || kBN == 256), "wgmma tile: 64-token warpgroups, n128 or n256");
  static_assert(kThreads <= ::pfx::kernels::sm90::kMaxThreadsPerBlock, "threads per block");
  static_assert(NI * 4 <= 128, "accumulators: at most 128 fp32 registers per thread");
};

// Which weight row feeds tile slot `slot` (0..BN-1) of N-tile `tile_n`. Plain: rows tile_n·BN + slot.
// SwiGLU: each warp(group)'s WN columns are WN/2 gate rows then the same WN/2 up rows, so a thread
// holds g and u of one output element in accumulators ni and ni + NI/2.
template <class Cfg, bool kSwi>
PFX_HD void slot_row(int slot, int tile_n, int& mat, int& n) {
  if constexpr (kSwi) {
    constexpr int kHalf = Cfg::WN / 2;
    const int blk = slot / Cfg::WN, j = slot % Cfg::WN;
    mat = j >= kHalf ? 1 : 0;
    n = tile_n * (Cfg::BN / 2) + blk * kHalf + (j % kHalf);
  } else {
    mat = 0;
    n = tile_n * Cfg::BN + slot;
  }
}

__device__ __forceinline__ uint32_t swz(int row, int chunk) {
  return static_cast<uint32_t>(row * 128 + ((chunk ^ (row & 7)) << 4));
}

// silu(g)·u = g / (1 + exp(-g)) · u in fp32; the reciprocal (correctly rounded) avoids the division
// slow path and its stack frame, and differs from a true division by at most one ulp.
__device__ __forceinline__ float silu_mul(float g, float u) { return g * __frcp_rn(1.0f + expf(-g)) * u; }

// ---- pieces shared by both main loops ---------------------------------------------------------

// This thread's share of the raw weight copies: the same rows every k-tile. A row past N gets a
// null pointer (its chunks are zero-filled).
template <class Cfg, class W, bool kSwi>
struct WeightCopies {
  static constexpr int kChunks = Cfg::BN * W::kChunks;
  static constexpr int kPerThread = (kChunks + Cfg::kThreads - 1) / Cfg::kThreads;
  const uint8_t* row[kPerThread];
  const uint8_t* end[kPerThread];

  __device__ __forceinline__ WeightCopies(const GemmParams& p, int tid, int tile_n) {
#pragma unroll
    for (int i = 0; i < kPerThread; ++i) {
      const int idx = tid + i * Cfg::kThreads;
      const int slot = idx / W::kChunks;
      int mat = 0, n = 0;
      slot_row<Cfg, kSwi>(slot < Cfg::BN ? slot : 0, tile_n, mat, n);
      const bool ok = idx < kChunks && n < p.n_rows;
      // Selects, not p.w[mat]: indexing the parameter array would copy it to the stack.
      row[i] = ok ? (mat ? p.w[1] : p.w[0]) + static_cast<int64_t>(n) * p.row_bytes : nullptr;
      end[i] = mat ? p.w_end[1] : p.w_end[0];
    }
  }

  // Raw bytes of k-tile kt into the stage at shared address `stage_u`.
  __device__ __forceinline__ void load(const GemmParams& p, int tid, int kt, uint32_t stage_u) const {
#pragma unroll
    for (int i = 0; i < kPerThread; ++i) {
      const int idx = tid + i * Cfg::kThreads;
      if (kChunks % Cfg::kThreads != 0 && idx >= kChunks) break;
      const int slot = idx / W::kChunks, c = idx % W::kChunks;
      const uint32_t dst = stage_u + slot * W::kRowStride + c * 16;
      if (row[i] == nullptr) {
        cp_async_16(dst, p.w[0], 0u);  // row past N: zeros
        continue;
      }
      const uint8_t* src = W::chunk_src(row[i], kt, c);
      uint32_t bytes = 16u;
      if constexpr (W::kMayOverrun) {
        bytes = chunk_bytes_inside(src, end[i]);
        if (bytes == 0u) src = p.w[0];
      }
      cp_async_16(dst, src, bytes);
    }
  }
};

// The fp16 X tile of k-tile kt (rows t0 .. t0+BT-1; rows past T zero-filled) into `stage_u`.
template <class Cfg>
__device__ __forceinline__ void load_x_tile(const GemmParams& p, int tid, int t0, int kt, uint32_t stage_u) {
  constexpr int kCopies = Cfg::BT * 8 / Cfg::kThreads;
  static_assert(Cfg::BT * 8 % Cfg::kThreads == 0, "X tile copies split evenly");
#pragma unroll
  for (int i = 0; i < kCopies; ++i) {
    const int idx = tid + i * Cfg::kThreads;
    const int r = idx >> 3, c = idx & 7;
    const int t = t0 + r;
    const bool ok = t < p.T;
    const uint16_t* src = p.x + static_cast<int64_t>(ok ? t : 0) * p.K + kt * 64 + c * 8;
    cp_async_16(stage_u + swz(r, c), src, ok ? 16u : 0u);
  }
}

// Raw stage -> fp16 tile (swizzled rows), every weight of the tile once. q4_K tasks are a
// sub-block of 32 weights, or half of one where the CTA has more threads than sub-blocks.
template <class Cfg, class W, bool kSwi>
__device__ __forceinline__ void dequant_tile(const GemmParams& p, int tid, int tile_n, int kt, const uint8_t* raw_stage,
                                             uint8_t* out) {
  constexpr int NT = Cfg::kThreads, BN = Cfg::BN;
  if constexpr (W::kTasksPerRow == 2) {  // q4_K; lanes on consecutive rows
    constexpr int kSplit = BN * 2 >= NT ? 1 : 2;
    constexpr int kTasks = BN * 2 * kSplit;
    static_assert(kTasks % NT == 0, "dequant tasks split evenly");
#pragma unroll
    for (int i = 0; i < kTasks / NT; ++i) {
      const int task = tid + i * NT;
      const int r = task % BN, s = (task / BN) % 2;
      const uint8_t* raw = raw_stage + r * W::kRowStride;
      if constexpr (kSplit == 1) {
        uint32_t h[16];
        W::dequant32(raw, kt, s, h);
#pragma unroll
        for (int q = 0; q < 4; ++q)
          *reinterpret_cast<uint4*>(out + swz(r, 4 * s + q)) = make_uint4(h[4 * q], h[4 * q + 1], h[4 * q + 2], h[4 * q + 3]);
      } else {
        const int hh = task / (2 * BN);  // which 16 of the sub-block's 32
        uint32_t h[8];
        W::dequant16(raw, kt, s, hh, h);
        *reinterpret_cast<uint4*>(out + swz(r, 4 * s + 2 * hh)) = make_uint4(h[0], h[1], h[2], h[3]);
        *reinterpret_cast<uint4*>(out + swz(r, 4 * s + 2 * hh + 1)) = make_uint4(h[4], h[5], h[6], h[7]);
      }
    }
  } else {  // 8 weights per task; 8 lanes share a row
    constexpr int kTasks = BN * W::kTasksPerRow;
    static_assert(kTasks % NT == 0, "dequant tasks split evenly");
#pragma unroll
    for (int i = 0; i < kTasks / NT; ++i) {
      const int task = tid + i * NT;
      const int r = task >> 3, kc = task & 7;
      int mat = 0, n = 0;
      slot_row<Cfg, kSwi>(r, tile_n, mat, n);
      const int m = W::misalign(n, p.rb16, kt);
      *reinterpret_cast<uint4*>(out + swz(r, kc)) = W::dequant8(raw_stage + r * W::kRowStride, kt, kc, m);
    }
  }
}

// The four k16 steps of one k-tile for this thread's warpgroup: D(64 × BN) += X(64 × 64)·Wd(BN × 64)ᵀ.
template <class Cfg, int kAcc>
__device__ __forceinline__ void wgmma_ktile(float (&acc)[kAcc], uint32_t xa, uint32_t wb) {
#pragma unroll
  for (int kk = 0; kk < 4; ++kk) {
    if constexpr (Cfg::BN == 128)
      wgmma_ss_m64n128k16(acc, wgmma_desc_sw128(xa + kk * 32), wgmma_desc_sw128(wb + kk * 32), 1);
    else
      wgmma_ss_m64n256k16(acc, wgmma_desc_sw128(xa + kk * 32), wgmma_desc_sw128(wb + kk * 32), 1);
  }
}

// Epilogue straight from the accumulators: acc[(mi·NI + ni)·4 + e] holds row row0 + 16mi + lane/4
// + 8(e/2), tile column col0 + 8ni + 2(lane%4) + e%2 (mma.sync C and wgmma D fragments alike).
template <class Cfg, bool kSwi, int kAcc>
__device__ __forceinline__ void store_tile(const GemmParams& p, const float (&acc)[kAcc], int t0, int tile_n, int row0,
                                           int col0, int lane) {
  constexpr int MI = Cfg::MI, NI = Cfg::NI, BN = Cfg::BN;
  static_assert(kAcc == MI * NI * 4, "accumulator count");
  const int g = lane >> 2, c4 = lane & 3;
  const int n_out = p.n_rows;
  constexpr int kNiOut = kSwi ? NI / 2 : NI;
#pragma unroll
  for (int mi = 0; mi < MI; ++mi) {
#pragma unroll
    for (int hh = 0; hh < 2; ++hh) {
      const int t = t0 + row0 + mi * 16 + g + 8 * hh;
      if (t >= p.T) continue;
#pragma unroll
      for (int ni = 0; ni < kNiOut; ++ni) {
        const float v0 = acc[(mi * NI + ni) * 4 + 2 * hh], v1 = acc[(mi * NI + ni) * 4 + 2 * hh + 1];
        if constexpr (kSwi) {
          const int col = tile_n * (BN / 2) + col0 / 2 + ni * 8 + 2 * c4;
          if (col >= n_out) continue;
          const float u0 = acc[(mi * NI + ni + NI / 2) * 4 + 2 * hh], u1 = acc[(mi * NI + ni + NI / 2) * 4 + 2 * hh + 1];
          *reinterpret_cast<uint32_t*>(static_cast<uint16_t*>(p.y) + static_cast<int64_t>(t) * n_out + col) =
              pack_half2_rn(silu_mul(v0, u0), silu_mul(v1, u1));
        } else {
          const int col = tile_n * BN + col0 + ni * 8 + 2 * c4;
          if (col >= n_out) continue;
          const int64_t off = static_cast<int64_t>(t) * n_out + col;
          if (p.mode == kStoreF16) {
            *reinterpret_cast<uint32_t*>(static_cast<uint16_t*>(p.y) + off) = pack_half2_rn(v0, v1);
          } else {
            float2* dst = reinterpret_cast<float2*>(static_cast<float*>(p.y) + off);
            if (p.mode == kAccumulateF32) {
              const float2 old = *dst;
              *dst = make_float2(__fadd_rn(old.x, v0), __fadd_rn(old.y, v1));
            } else {
              *dst = make_float2(v0, v1);
            }
          }
        }
      }
    }
  }
}

__device__ __forceinline__ uint8_t* align1024(uint8_t* p) {
  return reinterpret_cast<uint8_t*>((reinterpret_cast<uintptr_t>(p) + 1023) & ~static_cast<uintptr_t>(1023));
}

// ---- classic loop: mma.sync or wgmma, one barrier per k-tile, MMAs drained each k-tile ----------
template <class Cfg, class W, bool kSwi>
__device__ __forceinline__ void gemm_fast_body(const GemmParams& p) {
  constexpr int BT = Cfg::BT, BN = Cfg::BN, S = Cfg::S;
  constexpr int MI = Cfg::MI, NI = Cfg::NI;
  extern __shared__ uint8_t smem_dyn[];
  uint8_t* const smem = align1024(smem_dyn);
  uint8_t* const xs = smem;                            // [S][BT][128] swizzled fp16
  uint8_t* const wd = xs + S * Cfg::kXStageBytes;      // [2][BN][128] swizzled fp16
  uint8_t* const wr = wd + 2 * Cfg::kWdBytes;          // [S][BN][kRowStride] raw blocks
  const uint32_t xs_u = smem_addr(xs), wd_u = smem_addr(wd), wr_u = smem_addr(wr);
  constexpr int kRawStage = BN * W::kRowStride;

  const int tid = threadIdx.x, lane = tid & 31, warp = tid >> 5;
  const int t0 = blockIdx.x * BT;
  const int tile_n = blockIdx.y;
  const int nk = p.K / 64;
  const WeightCopies<Cfg, W, kSwi> wcopy(p, tid, tile_n);

  auto load_tile = [&](int kt, int stage) {
    load_x_tile<Cfg>(p, tid, t0, kt, xs_u + stage * Cfg::kXStageBytes);
    wcopy.load(p, tid, kt, wr_u + stage * kRawStage);
  };
  auto dequant = [&](int kt, int stage, int buf) {
    dequant_tile<Cfg, W, kSwi>(p, tid, tile_n, kt, wr + stage * kRawStage, wd + buf * Cfg::kWdBytes);
  };

  float acc[MI * NI * 4];
#pragma unroll
  for (int i = 0; i < MI * NI * 4; ++i) acc[i] = 0.0f;

  // mma.sync flavour: warp (wm, wn) owns rows [wm·WT, +WT) × cols [wn·WN, +WN) of the tile.
  const int wn = warp % Cfg::kWarpsAlongN, wm = warp / Cfg::kWarpsAlongN;

  auto mma_tile = [&](int stage, int buf) {
    const uint32_t xb = xs_u + stage * Cfg::kXStageBytes, wb = wd_u + buf * Cfg::kWdBytes;
#pragma unroll
    for (int kk = 0; kk < 4; ++kk) {
      uint32_t a[MI][4], b[NI / 2][4];
#pragma unroll
      for (int mi = 0; mi < MI; ++mi) {
        const int row = wm * Cfg::WT + mi * 16 + (lane & 15);
        ldmatrix_x4(a[mi], xb + swz(row, 2 * kk + (lane >> 4)));
      }
#pragma unroll
      for (int nj = 0; nj < NI / 2; ++nj) {
        const int row = wn * Cfg::WN + nj * 16 + (lane & 7) + ((lane >> 4) << 3);
        ldmatrix_x4(b[nj], wb + swz(row, 2 * kk + ((lane >> 3) & 1)));
      }
#pragma unroll
      for (int mi = 0; mi < MI; ++mi)
#pragma unroll
        for (int ni = 0; ni < NI; ++ni)
          mma_m16n8k16_f16_f32(&acc[(mi * NI + ni) * 4], a[mi], b[ni >> 1][(ni & 1) * 2], b[ni >> 1][(ni & 1) * 2 + 1]);
    }
  };

  // ---- prologue: k-tiles 0..S-2 in flight, k-tile 0 dequantized ----
#pragma unroll
  for (int s = 0; s < S - 1; ++s) {
    if (s < nk) load_tile(s, s);
    cp_async_commit();
  }
  cp_async_wait<S - 2>();
  __syncthreads();
  dequant(0, 0, 0);

  // ---- main loop ----
  for (int i = 0; i < nk; ++i) {
    cp_async_wait<S - 3>();  // k-tile i+1 landed (this thread's copies)
    if constexpr (Cfg::kWgmma) fence_proxy_async_smem();
    __syncthreads();
    if (i + S - 1 < nk) load_tile(i + S - 1, (i + S - 1) % S);
    cp_async_commit();
    const int stage = i % S, buf = i & 1;
    if constexpr (Cfg::kWgmma) {
      fence_operands(acc);
      wgmma_fence();
      wgmma_ktile<Cfg>(acc, xs_u + stage * Cfg::kXStageBytes + (warp >> 2) * 64 * 128, wd_u + buf * Cfg::kWdBytes);
      wgmma_commit();
      if (i + 1 < nk) dequant(i + 1, (i + 1) % S, buf ^ 1);
      fence_proxy_async_smem();
      wgmma_wait<0>();
      fence_operands(acc);
    } else {
      if (i + 1 < nk) dequant(i + 1, (i + 1) % S, buf ^ 1);
      mma_tile(stage, buf);
    }
  }
  cp_async_wait<0>();  // nothing real is pending; leave no group behind at exit

  const int row0 = Cfg::kWgmma ? (warp >> 2) * 64 + (warp & 3) * 16 : wm * Cfg::WT;
  const int col0 = Cfg::kWgmma ? 0 : wn * Cfg::WN;
  store_tile<Cfg, kSwi>(p, acc, t0, blockIdx.y, row0, col0, lane);
}

// ---- pipelined wgmma loop ---------------------------------------------------------------------
// Iteration i copies X tile i+D and raw W tile i+D+1 (one cp.async group), issues the MMAs of
// k-tile i, dequantizes W tile i+1, then waits until only k-tile i's MMAs may still run. Groups:
// 0 = W tile 0, 1+j = (X tile j, W tile j+1). Hazards at the barrier that opens iteration i, with
// every thread past iteration i-1:
//  - landed and visible: X tile i and W tile i+1 (group i+1: each thread waited for its copies,
//    fenced, then the barrier), the fp16 tile of k-tile i (dequantized in iteration i-1, fenced);
//  - free: the MMAs of k-tile i-2 are complete (wait<1> in iteration i-1), so X stage
//    (i+D) % (D+2) = (i-2) % (D+2) and fp16 buffer (i+1) % 3 = (i-2) % 3 may be overwritten; raw
//    stage (i+D+1) % (D+1) = i % (D+1) was last read by dequant(i) in iteration i-1.
template <class Cfg, class W, bool kSwi>
__device__ __forceinline__ void gemm_fast_body_pipe(const GemmParams& p) {
  constexpr int BT = Cfg::BT, BN = Cfg::BN, D = Cfg::D, SX = Cfg::SX, SW = Cfg::SW;
  constexpr int kAcc = Cfg::NI * 4;
  extern __shared__ uint8_t smem_dyn[];
  uint8_t* const smem = align1024(smem_dyn);
  uint8_t* const xs = smem;                            // [SX][BT][128] swizzled fp16
  uint8_t* const wd = xs + SX * Cfg::kXStageBytes;     // [3][BN][128] swizzled fp16
  uint8_t* const wr = wd + 3 * Cfg::kWdBytes;          // [SW][BN][kRowStride] raw blocks
  const uint32_t xs_u = smem_addr(xs), wd_u = smem_addr(wd), wr_u = smem_addr(wr);
  constexpr int kRawStage = BN * W::kRowStride;

  const int tid = threadIdx.x, lane = tid & 31, warp = tid >> 5;
  const int t0 = blockIdx.x * BT;
  const int tile_n = blockIdx.y;
  const int nk = p.K / 64;
  const WeightCopies<Cfg, W, kSwi> wcopy(p, tid, tile_n);
  const uint32_t x_warpgroup = static_cast<uint32_t>((warp >> 2) * 64 * 128);

  float acc[kAcc];
#pragma unroll
  for (int i = 0; i < kAcc; ++i) acc[i] = 0.0f;

  // Prologue: group 0 = W tile 0; groups 1..D = (X tile j, W tile j+1) for j = 0..D-1.
  wcopy.load(p, tid, 0, wr_u);
  cp_async_commit();
#pragma unroll
  for (int j = 0; j < D; ++j) {
    if (j < nk) load_x_tile<Cfg>(p, tid, t0, j, xs_u + (j % SX) * Cfg::kXStageBytes);
    if (j + 1 < nk) wcopy.load(p, tid, j + 1, wr_u + ((j + 1) % SW) * kRawStage);
    cp_async_commit();
  }
  cp_async_wait<D>();  // group 0: W tile 0
  __syncthreads();
  dequant_tile<Cfg, W, kSwi>(p, tid, tile_n, 0, wr, wd);
  fence_operands(acc);

  for (int i = 0; i < nk; ++i) {
    cp_async_wait<D - 1>();  // group i+1: X tile i, W tile i+1
    fence_proxy_async_smem();
    __syncthreads();
    {
      const int xt = i + D, wt = i + D + 1;
      if (xt < nk) load_x_tile<Cfg>(p, tid, t0, xt, xs_u + (xt % SX) * Cfg::kXStageBytes);
      if (wt < nk) wcopy.load(p, tid, wt, wr_u + (wt % SW) * kRawStage);
      cp_async_commit();
    }
    wgmma_fence();
    wgmma_ktile<Cfg>(acc, xs_u + (i % SX) * Cfg::kXStageBytes + x_warpgroup, wd_u + (i % 3) * Cfg::kWdBytes);
    wgmma_commit();
    if (i + 1 < nk)
      dequant_tile<Cfg, W, kSwi>(p, tid, tile_n, i + 1, wr + ((i + 1) % SW) * kRawStage,
                                 wd + ((i + 1) % 3) * Cfg::kWdBytes);
    fence_proxy_async_smem();
    wgmma_wait<1>();  // k-tile i-1's MMAs are done; k-tile i's may still run
  }
  wgmma_wait<0>();
  fence_operands(acc);
  cp_async_wait<0>();

  store_tile<Cfg, kSwi>(p, acc, t0, tile_n, (warp >> 2) * 64 + (warp & 3) * 16, 0, lane);
}

}  // namespace pfx::kernels::dev

// The warp-specialized fused quantized GEMM (kernels/gemm_ws.h): Yᵀ = W · Xᵀ, the weight as the
// wgmma M side, dequantized straight into registers in the A-fragment layout.
//
// One persistent CTA per SM walks output tiles of 128 weight rows × BN tokens (tile = m + Mt·n: the
// CTAs running at one time share the X tile through L2): whole tiles round robin, or (the ws_sk_*
// variants) an even share of the tile-major k-tile iterations, a tile's chain continued by the
// next CTA from the accumulators the previous one left in a workspace (kernels/gemm_ws_schedule.cuh).
// The tiles may belong to up to three matrices over the same X, repacked one after another (a
// layer's Q, K and V: WsParams::parts). Three warpgroups:
//   producer (warpgroup 0, 40 registers): one thread streams each k-tile (64 wide) into a ring of
//     S shared-memory stages: the X tile [BN tokens][64] fp16 by a tensor-map copy (128-byte
//     swizzle, rows past T zero-filled) and the repacked weight bytes of both 64-row panels
//     (kernels/gemm_ws_layout.cuh) by two bulk copies, all completing on the stage's `full`
//     mbarrier;
//   consumers (warpgroups 1, 2: panel 0, 1; 232 registers): per k-tile, wait `full`, load the
//     thread's weight words and scales (one or two 16-byte shared loads), then for each of the 4
//     k16 steps decode the exact fp16 A fragment and issue wgmma m64nBNk16 (A registers, B = the
//     X stage, fp32 accumulators). Up to 3 MMAs stay in flight while the next fragment is decoded:
//     the decode of step s of k-tile i waits only for step s of k-tile i-1 (the MMA that last read
//     those A registers); the stage of k-tile i-1 is released (`empty`, one arrival per consumer
//     thread) once step 3 of k-tile i-1 is complete. The epilogue stores from the accumulators while
//     the producer already fills the next tile's stages.
// Summation order: every output is one fp32 accumulator over k in increasing order, k16 steps by
// the tensor cores, exactly as cuBLAS accumulates the generic path's fp16 weights (no split-K: a
// split chain hands the accumulator itself on, in k order).
#pragma once
#include <cuda.h>
#include <cuda_fp16.h>

#include <cstdint>

#include "kernels/elementwise_math.cuh"
#include "kernels/gemm_ws_layout.cuh"
#include "kernels/gemm_ws_schedule.cuh"
#include "kernels/ptx.cuh"
#include "kernels/race_stress.cuh"
#include "kernels/rope_math.cuh"
#include "kernels/sm90.h"

namespace pfx::kernels::dev {

enum WsMode : int { kWsStoreF32 = 0, kWsAccumulateF32 = 1, kWsStoreF16 = 2, kWsSwiglu = 3, kWsHeads = 4 };
// kWsHeads: how each part is stored (WsParams::part_store, bits): fp16 rows [T][n_out], or with
// kWsHeadCache the KV-cache layout [n_out / hd][max_ctx][hd] at rows p0 + t; kWsHeadRotate: each
// head's pairs (2i, 2i+1) turned by RoPE first.
enum WsHeadStore : int { kWsHeadRotate = 1, kWsHeadCache = 2 };

inline constexpr int kWsMaxParts = 3;

struct WsParams {
  const uint8_t* w;  // repacked weights
  int64_t n_groups;  // K / kGroupK
  int m_tiles;       // 128-row panel pairs
  int t_tiles;       // BN-token tiles
  int nk;            // K / 64
  int T;             // tokens
  int n_out;         // output columns: the matrix's rows (SwiGLU: half of them)
  void* y;           // [T, n_out]: fp32 (StoreF32, AccumulateF32) or fp16
  int mode;          // WsMode
  // k_gemm_ws only. Several matrices over the same X (Q, K, V), repacked one after the other:
  // part i owns the panel pairs [part_end[i-1], part_end[i]) and writes part_y[i] [T, part_n_out[i]].
  // One part: part_y[0] = y, part_n_out[0] = n_out, part_end[0] = m_tiles.
  int parts;
  int part_end[kWsMaxParts];
  int part_n_out[kWsMaxParts];
  void* part_y[kWsMaxParts];
  // Split chains (kernels/gemm_ws_schedule.cuh): iterations per CTA (0: whole tiles), the heads'
  // accumulators ([CTA][panel][kBN / 8][128 threads] float4) and their ready flags ([CTA]: 1 once
  // the slot is written; the tail that reads it sets it back to 0 for the next launch).
  int chunk;
  float4* partial;
  unsigned* ready;
  // kWsHeads (the attention's inputs straight from the Q/K/V GEMM): per part a WsHeadStore, the
  // head dim, the cos/sin of every token's rotation pairs ([T][hd / 2], kernels::rope_table), the
  // first token's position and the cache rows per head.
  int part_store[kWsMaxParts];
  const float2* rope_cs;
  int head_dim, p0, max_ctx;
};

// Tile shape, ring depth and shared memory of one instantiation.
template <int kBN, class L>
struct WsCfg {
  static constexpr int BM = 128, BN = kBN, BK = 64;
  static constexpr int kThreads = 384;  // producer + 2 consumer warpgroups
  static constexpr int kProducerRegs = 40, kConsumerRegs = 232;
  static constexpr int kXStageBytes = BN * BK * 2;                              // [BN][64] fp16, swizzled rows of 128 B
  static constexpr int kWStageBytes = 2 * L::kQuantBytes + 2 * L::kScaleBytes;  // both panels
  static constexpr int kTxBytes = kXStageBytes + kWStageBytes;                  // what `full` counts
  static constexpr int kBudget = ::pfx::kernels::sm90::kMaxSmemPerBlock - 1024 /* 1024-byte alignment slack */;
  static constexpr int kStagesFit = (kBudget - 8) / (kXStageBytes + kWStageBytes + 16);
  static constexpr int S = kStagesFit > 10 ? 10 : kStagesFit;
  static constexpr int kSmemBytes = 1024 + S * (kXStageBytes + kWStageBytes) + (2 * S + 1) * 8;

  static_assert(BN % 64 == 0 && BN >= 64 && BN <= 256, "wgmma n: 64, 128, 192 or 256 tokens");
  static_assert(kXStageBytes % 1024 == 0, "X stages keep the 1024-byte alignment of the 128-byte swizzle");
  static_assert(kWStageBytes % 16 == 0 && L::kQuantBytes % 16 == 0 && L::kScaleBytes % 16 == 0,
                "bulk copies move 16-byte multiples to 16-byte aligned addresses");
  static_assert(S >= 3, "at least three stages in the ring");
  static_assert(kSmemBytes <= ::pfx::kernels::sm90::kMaxSmemPerBlock, "ring exceeds 227 KiB of shared memory");
  static_assert(kProducerRegs * 128 + kConsumerRegs * 256 <= ::pfx::kernels::sm90::kRegistersPerSm,
                "setmaxnreg split exceeds the register file");
};

template <int kBN>
__device__ __forceinline__ void ws_wgmma(float (&acc)[kBN / 2], const uint32_t (&a)[4], uint64_t desc_b) {
  if constexpr (kBN == 64)
    wgmma_rs_m64n64k16(acc, a, desc_b, 1);
  else if constexpr (kBN == 128)
    wgmma_rs_m64n128k16(acc, a, desc_b, 1);
  else
    wgmma_rs_m64n256k16(acc, a, desc_b, 1);
}

// Stores the warpgroup's 64 × BN accumulator tile. Each pair of lanes (g, g^1) swaps one value so
// that a thread holds two adjacent output columns of one token: 8-byte (4-byte fp16) stores.
// AccumulateF32 (y += acc: the residual adds of attn_output and ffn_down) loads the old values of
// kAccChunk column groups before it stores any of them. Written as one load-add-store per value,
// the compiler must keep each load behind the previous store (they may alias), and the epilogue
// was a chain of dependent global round trips (H200 trace: attn_output 82 µs, attn_q 35 µs).
// So a tile's epilogue costs kBN / 8 / kAccChunk round trips to L2 (the producer has asked L2 for
// the old values, ws_prefetch_old_tile). kAccChunk is what the registers allow without spilling
// (ptxas, every type): k_gemm_ws takes all 16 at BN 128 and 8 at BN 256 (128 accumulator
// registers); the other kernels the default, 8 and 4. Until session 23 BN 256 held one group: 32
// round trips per tile, ~19 µs of a 4096 × 4096 launch at T = 2048 (gemm_bench: 100.6 µs
// StoreF32, 119.5 accumulate).
template <int kBN, int kAccChunk = (kBN <= 128 ? 8 : 4)>
__device__ __forceinline__ void ws_epilogue(const WsParams& p, void* y, int n_out, const float (&acc)[kBN / 2], int row0,
                                            int t0, int lane, int warp) {
  const int g = lane >> 2, c = lane & 3;
  const bool even = (g & 1) == 0;
  if (p.mode == kWsAccumulateF32) {
    static_assert((kBN / 8) % kAccChunk == 0, "whole batches of column groups");
    const int t_me = t0 + 2 * c + (even ? 0 : 1);             // this thread's token in group j = 0
    const int n_me = row0 + 16 * warp + g - (even ? 0 : 1);   // its first output column (h = 0)
    float* const y0 = static_cast<float*>(y) + static_cast<int64_t>(t_me) * n_out + n_me;
    const int64_t group_stride = int64_t{8} * n_out;        // 8 tokens
#pragma unroll
    for (int j0 = 0; j0 < kBN / 8; j0 += kAccChunk) {
      float2 old[kAccChunk][2];
      float lo[kAccChunk][2], hi[kAccChunk][2];
#pragma unroll
      for (int jj = 0; jj < kAccChunk; ++jj)
#pragma unroll
        for (int h = 0; h < 2; ++h) {
          const int j = j0 + jj;
          const float v0 = acc[4 * j + 2 * h], v1 = acc[4 * j + 2 * h + 1];
          const float recv = __shfl_xor_sync(0xffffffffu, even ? v1 : v0, 4);
          lo[jj][h] = even ? v0 : recv;
          hi[jj][h] = even ? recv : v1;
          const bool in = t_me + 8 * j < p.T && n_me + 8 * h < n_out;
          old[jj][h] = in ? *reinterpret_cast<const float2*>(y0 + j * group_stride + 8 * h) : make_float2(0.0f, 0.0f);
        }
#pragma unroll
      for (int jj = 0; jj < kAccChunk; ++jj)
#pragma unroll
        for (int h = 0; h < 2; ++h) {
          const int j = j0 + jj;
          if (t_me + 8 * j < p.T && n_me + 8 * h < n_out)
            *reinterpret_cast<float2*>(y0 + j * group_stride + 8 * h) =
                make_float2(__fadd_rn(old[jj][h].x, lo[jj][h]), __fadd_rn(old[jj][h].y, hi[jj][h]));
        }
    }
    return;
  }
#pragma unroll
  for (int j = 0; j < kBN / 8; ++j) {
    const int t_even = t0 + 8 * j + 2 * c;
    if (p.mode == kWsSwiglu) {
      // Rows g (gate) and g + 8 (up) of the warp's 16 are one output column (interleaved repack).
      const float a_even = swiglu_f32(acc[4 * j + 0], acc[4 * j + 2]);
      const float a_odd = swiglu_f32(acc[4 * j + 1], acc[4 * j + 3]);
      const float recv = __shfl_xor_sync(0xffffffffu, even ? a_odd : a_even, 4);
      const int col = row0 / 2 + 8 * warp + g;  // this thread's output column
      const int t = even ? t_even : t_even + 1, col0 = even ? col : col - 1;
      if (t < p.T && col0 < n_out)
        *reinterpret_cast<uint32_t*>(static_cast<uint16_t*>(y) + static_cast<int64_t>(t) * n_out + col0) =
            even ? pack_half2_rn(a_even, recv) : pack_half2_rn(recv, a_odd);
    } else {
#pragma unroll
      for (int h = 0; h < 2; ++h) {
        const float v0 = acc[4 * j + 2 * h], v1 = acc[4 * j + 2 * h + 1];
        const float recv = __shfl_xor_sync(0xffffffffu, even ? v1 : v0, 4);
        const int n = row0 + 16 * warp + g + 8 * h;
        const int t = even ? t_even : t_even + 1, n0 = even ? n : n - 1;
        if (t >= p.T || n0 >= n_out) continue;
        const float lo = even ? v0 : recv, hi = even ? recv : v1;
        const int64_t off = static_cast<int64_t>(t) * n_out + n0;
        if (p.mode == kWsStoreF16)
          *reinterpret_cast<uint32_t*>(static_cast<uint16_t*>(y) + off) = pack_half2_rn(lo, hi);
        else
          *reinterpret_cast<float2*>(static_cast<float*>(y) + off) = make_float2(lo, hi);
      }
    }
  }
}

// AccumulateF32: the producer, once it has issued the tile's last k-tile (the consumers are then
// the ring's depth, several microseconds, behind), asks L2 for the old values of the tile the
// epilogue will add to: per token row one bulk prefetch of the tile's columns. The epilogue's loads
// then wait on L2, not DRAM (at BN 256 it has one column group in flight per thread: 32 round trips
// per tile, ~4 ms of a pp2048 pass before this). Rows must be 16-byte multiples (n_out % 4 == 0),
// else nothing is prefetched.
__device__ __forceinline__ void ws_prefetch_old_tile(const WsParams& p, void* y_out, int n_out, int col0, int bm, int t0, int bn) {
  if (p.mode != kWsAccumulateF32 || n_out % 4 != 0 || col0 >= n_out) return;
  const int cols = min(bm, n_out - col0);
  const int t_end = min(t0 + bn, p.T);
  const float* y = static_cast<const float*>(y_out) + col0;
  for (int t = t0; t < t_end; ++t)
    prefetch_l2_bulk(y + static_cast<int64_t>(t) * n_out, static_cast<uint32_t>(cols) * 4u);
}

// The output a tile of panel pair mt writes: its part's matrix, row stride and first row.
struct WsPartOut {
  void* y;
  int n_out, row0;
  int store;  // kWsHeads: its WsHeadStore bits
};
// Constant indices only: a runtime index into the parameter arrays would copy them to the stack.
__device__ __forceinline__ WsPartOut ws_part_out(const WsParams& p, int mt) {
  WsPartOut o{p.part_y[0], p.part_n_out[0], mt * 128, p.part_store[0]};
#pragma unroll
  for (int i = 1; i < kWsMaxParts; ++i)
    if (i < p.parts && mt >= p.part_end[i - 1])
      o = {p.part_y[i], p.part_n_out[i], (mt - p.part_end[i - 1]) * 128, p.part_store[i]};
  return o;
}

// kWsHeads: the warpgroup's 64 × BN tile as the attention's inputs, fp16, in the part's layout
// (WsHeadStore), rows of output columns n0 and n0 + 1 (n0 even: lanes g and g^1 swap one value as
// in ws_epilogue) being one rotation pair of a head. The pair is turned from the fp32 values the
// StoreF32 epilogue would store, by the RoPE kernels' own rotation and cos/sin: the same bits as
// this GEMM with StoreF32 followed by kernels::rope_store_qkv_fused.
template <int kBN, int kBatch>
__device__ __forceinline__ void ws_store_heads(const WsParams& p, const WsPartOut& o, const float (&acc)[kBN / 2],
                                               int row0, int t0, int lane, int warp) {
  const int g = lane >> 2, c = lane & 3;
  const bool even = (g & 1) == 0;
  const bool rotate = (o.store & kWsHeadRotate) != 0, cache = (o.store & kWsHeadCache) != 0;
  const int hd = p.head_dim;
  const int t_stride = cache ? hd : o.n_out;     // elements from one token's row to the next
  const int t_me = t0 + 2 * c + (even ? 0 : 1);  // this thread's token in column group j = 0
  uint16_t* const y = static_cast<uint16_t*>(o.y);
  // The thread's two pairs (row halves h): first column, head, place in the head.
  int n0[2], head[2], d[2];
#pragma unroll
  for (int h = 0; h < 2; ++h) {
    n0[h] = row0 + 16 * warp + (g & ~1) + 8 * h;
    head[h] = n0[h] / hd, d[h] = n0[h] - head[h] * hd;
  }
  // cos/sin come through the read-only path (the table is not written while the kernel runs), a
  // batch of kBatch column groups' worth loaded before their stores: loaded one at a time where
  // each is used, every load was one L2 round trip behind the previous store, and the first
  // build's Q/K/V launches ran 35-40% longer than StoreF32 + the RoPE kernel. kBatch is what the
  // registers allow without spilling (ws_kernel).
  static_assert((kBN / 8) % kBatch == 0, "whole batches of column groups");
#pragma unroll
  for (int j0 = 0; j0 < kBN / 8; j0 += kBatch) {
    float2 cs[kBatch][2];
#pragma unroll
    for (int jj = 0; jj < kBatch; ++jj)
#pragma unroll
      for (int h = 0; h < 2; ++h) {
        const int t = t_me + 8 * (j0 + jj);
        cs[jj][h] = rotate && t < p.T && n0[h] < o.n_out
                        ? __ldg(p.rope_cs + static_cast<int64_t>(t) * (hd >> 1) + (d[h] >> 1))
                        : make_float2(1.0f, 0.0f);
      }
#pragma unroll
    for (int jj = 0; jj < kBatch; ++jj) {
      const int j = j0 + jj, t = t_me + 8 * j;
#pragma unroll
      for (int h = 0; h < 2; ++h) {
        const float v0 = acc[4 * j + 2 * h], v1 = acc[4 * j + 2 * h + 1];
        const float recv = __shfl_xor_sync(0xffffffffu, even ? v1 : v0, 4);
        if (t >= p.T || n0[h] >= o.n_out) continue;
        float2 v = even ? make_float2(v0, recv) : make_float2(recv, v1);
        if (rotate) v = rope_rotate_pair(v.x, v.y, cs[jj][h]);
        const int64_t at = cache ? (static_cast<int64_t>(head[h]) * p.max_ctx + p.p0 + t) * hd + d[h]
                                 : static_cast<int64_t>(t) * t_stride + n0[h];
        *reinterpret_cast<uint32_t*>(y + at) = pack_half2_rn(v.x, v.y);
      }
    }
  }
}

// A slot's flag: free (0) → its head's accumulators ready (kWsSlotReady) → free again once the
// tail that continues them has read them.
inline constexpr unsigned kWsSlotReady = 1u;

// A head piece's accumulators into slot `slot` of the workspace, then its ready flag. The slot is
// this launch's alone: launches that use the workspace never overlap (a stream runs them one after
// the other: they are not programmatic dependents, and one that became one would have to wait in
// pdl_wait before its first workspace access; the host orders launches on two streams,
// kernels/gemm_ws.cu). A claim checked here (atomicCAS, __trap on a
// collision) made ptxas serialize every wgmma of the split kernels (C7512: the trap's path keeps
// registers live across the k loop); docs/gemm-fast.md, session 16. Each consumer thread
// writes its fragment as float4s, [slot][panel][i][thread] (a warp's store is 512 contiguous
// bytes); every writer's fence orders its stores before the barrier, and the flag is published
// after it (the threadfence-then-flag pattern). Stores and loads are cache-streaming (evict
// first): 17 MB of slots per launch should not push the activations that the next kernels read
// back (the residual stream) out of L2.
template <int kBN>
__device__ __forceinline__ void ws_store_head(const WsParams& p, const float (&acc)[kBN / 2], int slot, int panel,
                                              int tid) {
  float4* dst = p.partial + ((static_cast<int64_t>(slot) * 2 + panel) * (kBN / 8)) * 128 + tid;
#pragma unroll
  for (int i = 0; i < kBN / 8; ++i)
    __stcs(dst + i * 128, make_float4(acc[4 * i], acc[4 * i + 1], acc[4 * i + 2], acc[4 * i + 3]));
  __threadfence();
  named_barrier_sync(1, 256);
  if (panel == 0 && tid == 0) st_release_gpu(p.ready + slot, kWsSlotReady);
}

// A tail piece's start: wait until slot `slot` is ready (every consumer thread acquires it), take
// the head's accumulators, and once every consumer thread has read them clear the flag for the
// next launch (nobody else reads the slot in this one).
template <int kBN>
__device__ __forceinline__ void ws_load_head(const WsParams& p, float (&acc)[kBN / 2], int slot, int panel, int tid) {
  while (ld_acquire_gpu(p.ready + slot) != kWsSlotReady) __nanosleep(128);
  const float4* src = p.partial + ((static_cast<int64_t>(slot) * 2 + panel) * (kBN / 8)) * 128 + tid;
#pragma unroll
  for (int i = 0; i < kBN / 8; ++i) {
    const float4 v = __ldcs(src + i * 128);
    acc[4 * i] = v.x, acc[4 * i + 1] = v.y, acc[4 * i + 2] = v.z, acc[4 * i + 3] = v.w;
  }
  named_barrier_sync(1, 256);
  if (panel == 0 && tid == 0) p.ready[slot] = 0u;
}

// A consumer thread's decoder for one k-tile of a stage: its share of its quad's scales, exchanged
// by shuffles (kQuadScales decoders), then its quants. wq / wsc: the panel's quants and scales in
// the stage; kt_in: the k-tile's index inside its group.
template <class Decode>
__device__ __forceinline__ void ws_decoder_load(Decode& dec, const uint8_t* wq, const uint8_t* wsc, int tid, int quad0,
                                                int kt_in) {
  if constexpr (Decode::kQuadScales) {
    float v0, v1;
    Decode::lane_scales(wsc, tid, kt_in, v0, v1);
#pragma unroll
    for (int c = 0; c < 4; ++c)
      dec.set_scale(c, __shfl_sync(0xffffffffu, v0, quad0 | c), __shfl_sync(0xffffffffu, v1, quad0 | c));
  }
  dec.load(wq, wsc, tid, kt_in);
}

// One consumer warpgroup's k loop, shared by both kernels: per k-tile wait `full`, take the
// thread's quants and its quad's scales from the stage, then per k16 step decode the A fragment
// and issue the wgmma. The decode of step s waits only for step s of the previous k-tile (the MMA
// that last read those registers: `wait_group 3`), and the previous k-tile's stage is released at
// step 3, once all its MMAs are done. `prev` starts at the spare barrier S, so the release needs
// no branch on the k-tile: ptxas serializes every wgmma (C7513) when one runs under a runtime
// condition. The ring position carries over from tile to tile.
template <int kType, int kBN, int S, int kXStageBytes, int kWStageBytes>
struct WsConsumer {
  using L = WsLayout<kType>;
  using Decode = typename WsDecoder<kType>::type;
  int stage = 0, prev = S;
  uint32_t phase = 0;
  uint32_t a[4][4];
  uint64_t xdesc0;  // descriptor of X stage 0; a stage adds kXStageBytes, a k16 step 32 bytes
  int tid, quad0;

  __device__ __forceinline__ WsConsumer(const uint8_t* xs, int thread, int lane)
      : xdesc0(wgmma_desc_sw128(smem_addr(xs))), tid(thread), quad0(lane & ~3) {
#pragma unroll
    for (int s = 0; s < 4; ++s)
#pragma unroll
      for (int i = 0; i < 4; ++i) a[s][i] = 0;
  }

  // acc += Σ over k-tiles [k0, k1) (fresh: acc = 0 first); the stage's quants of this warpgroup's
  // panel at ws + quant_off, its scales at ws + scale_off. release(stage) frees a stage (every
  // consumer thread calls it).
  template <class Release>
  __device__ __forceinline__ void tile(float (&acc)[kBN / 2], int k0, int k1, bool fresh, uint32_t full0,
                                       const uint8_t* ws, int quant_off, int scale_off, const Release& release) {
    if (fresh) {
#pragma unroll
      for (int i = 0; i < kBN / 2; ++i) acc[i] = 0.0f;
    }
    for (int kt = k0; kt < k1; ++kt) {
      mbar_wait(full0 + 8 * stage, phase);
      PFX_RACE_STRESS_POINT(2);
      const uint8_t* wq = ws + stage * kWStageBytes + quant_off;
      const uint8_t* wsc = ws + stage * kWStageBytes + scale_off;
      Decode dec;
      ws_decoder_load(dec, wq, wsc, tid, quad0, kt % L::kTiles);
      // In 16-byte units in the descriptor's address field, which cannot carry: shared addresses
      // stay below 2^18.
      const uint64_t xdesc = xdesc0 + static_cast<uint64_t>((stage * kXStageBytes) >> 4);
#pragma unroll
      for (int s = 0; s < 4; ++s) {
        wgmma_wait<3>();  // step s of the previous k-tile is done: a[s] may be overwritten
        fence_operands(a[s]);
        if (s == 3) release(prev);  // every MMA of the previous k-tile is done
        dec.step(s, a[s]);
        wgmma_fence();
        ws_wgmma<kBN>(acc, a[s], xdesc + 2 * s);
        wgmma_commit();
      }
      prev = stage;
      if (++stage == S) stage = 0, phase ^= 1;
    }
    wgmma_wait<0>();
    fence_operands(acc);
  }
};

// kSplit: the split-chain schedule (p.chunk > 0 possible); false compiles the whole-tile walk alone,
// with no head or tail code in it (the ws_n* variants' code as before split chains existed: in the
// first build with one instantiation for both, the whole-tile launches of a pp512 pass ran 3-8%
// slower in the same-call trace, docs/gemm-fast.md, session 11).
// kHeads: the epilogue is ws_store_heads alone (kernel k_gemm_ws_heads); in one kernel with the
// other epilogues, the split 256-token kernel spilled (168 registers, 128 of them accumulators).
template <int kType, int kBN, bool kSplit, bool kHeads>
__device__ __forceinline__ void ws_kernel(const CUtensorMap& xmap, const WsParams& p) {
  using L = WsLayout<kType>;
  using Cfg = WsCfg<kBN, L>;
  constexpr int S = Cfg::S, BN = Cfg::BN;
  extern __shared__ uint8_t smem_dyn[];
  // Offset, not an integer round trip, so the compiler keeps the shared address space (LDS).
  uint8_t* const smem = smem_dyn + ((1024u - (smem_addr(smem_dyn) & 1023u)) & 1023u);
  uint8_t* const xs = smem;                               // [S][BN][128] swizzled fp16
  uint8_t* const ws = xs + S * Cfg::kXStageBytes;         // [S][kWStageBytes] repacked weights
  const uint32_t full0 = smem_addr(ws + S * Cfg::kWStageBytes);  // [S] mbarriers
  const uint32_t empty0 = full0 + 8 * S;                          // [S + 1] mbarriers (S: see `prev`)
  const int wg = threadIdx.x >> 7, tid = threadIdx.x & 127;
  const WsSchedule sched{p.m_tiles * p.t_tiles, p.nk, kSplit ? p.chunk : 0};
  const int units = sched.units(blockIdx.x, gridDim.x);
  // Unit i of this CTA; without kSplit a whole tile, known at compile time (no piece code).
  const auto unit_at = [&](int i) {
    return kSplit ? sched.unit(blockIdx.x, gridDim.x, i)
                  : WsUnit{static_cast<int>(blockIdx.x) + i * static_cast<int>(gridDim.x), 0, p.nk, kWsWholeTile};
  };

  if (threadIdx.x == 0) {
    for (int s = 0; s < S; ++s) mbar_init(full0 + 8 * s, 1);  // the producer's arrive.expect_tx, then the copies' bytes
    for (int s = 0; s <= S; ++s) mbar_init(empty0 + 8 * s, 256);  // one arrival per consumer thread
    fence_mbarrier_init();
  }
  __syncthreads();

  if (wg == 0) {
    setmaxnreg_dec<Cfg::kProducerRegs>();
    if (tid != 0) return;
    int stage = 0;
    uint32_t phase = 0;
    for (int i = 0; i < units; ++i) {
      const WsUnit u = unit_at(i);
      const int mt = u.tile % p.m_tiles, tt = u.tile / p.m_tiles;
      for (int kt = u.k0; kt < u.k1; ++kt) {
        mbar_wait(empty0 + 8 * stage, phase ^ 1);  // the consumers are done with this stage's last use
        PFX_RACE_STRESS_POINT(1);
        const uint32_t bar = full0 + 8 * stage;
        mbar_arrive_expect_tx(bar, Cfg::kTxBytes);
        tma_load_2d(smem_addr(xs + stage * Cfg::kXStageBytes), &xmap, kt * Cfg::BK, tt * BN, bar);
        const uint32_t wdst = smem_addr(ws + stage * Cfg::kWStageBytes);
        bulk_copy_g2s(wdst, p.w + ws_quant_offset<L>(mt, kt, p.n_groups), 2 * L::kQuantBytes, bar);
        if constexpr (L::kScaleBytes > 0)
          bulk_copy_g2s(wdst + 2 * L::kQuantBytes, p.w + ws_scale_offset<L>(mt, kt, p.n_groups), 2 * L::kScaleBytes, bar);
        if (++stage == S) stage = 0, phase ^= 1;
      }
      if (u.kind != kWsHeadPiece) {
        const WsPartOut o = ws_part_out(p, mt);
        ws_prefetch_old_tile(p, o.y, o.n_out, o.row0, Cfg::BM, tt * BN, BN);
      }
    }
    return;
  }

  setmaxnreg_inc<Cfg::kConsumerRegs>();
  const int panel = wg - 1, warp = tid >> 5, lane = tid & 31;
  WsConsumer<kType, BN, S, Cfg::kXStageBytes, Cfg::kWStageBytes> consumer(xs, tid, lane);
  // Every thread that read the stage arrives itself (its own release), so each read is ordered
  // before the producer's next copy into the stage by a direct release/acquire pair rather than
  // through a warp barrier and one lane's arrival (docs/gemm-fast.md, "racecheck").
  const auto release = [&](int st) {
    PFX_RACE_STRESS_POINT(3);
    mbar_arrive(empty0 + 8 * st);
  };
  float acc[BN / 2];
  for (int i = 0; i < units; ++i) {
    const WsUnit u = unit_at(i);
    const int mt = u.tile % p.m_tiles, tt = u.tile / p.m_tiles;
    if (u.kind == kWsTailPiece) ws_load_head<BN>(p, acc, static_cast<int>(blockIdx.x) - 1, panel, tid);
    consumer.tile(acc, u.k0, u.k1, u.kind != kWsTailPiece, full0, ws, panel * L::kQuantBytes,
                  2 * L::kQuantBytes + panel * L::kScaleBytes, release);
    PFX_RACE_STRESS_POINT(4);
    if (u.kind == kWsHeadPiece) {
      ws_store_head<BN>(p, acc, static_cast<int>(blockIdx.x), panel, tid);
      continue;
    }
    const WsPartOut o = ws_part_out(p, mt);
    // cos/sin loads in flight per batch: 2 column groups in the split 256-token kernel (4 spill
    // there: its piece bookkeeping is live across the epilogue), 8 elsewhere (16 spill).
    if constexpr (kHeads)
      ws_store_heads<BN, (BN == 256 && kSplit) ? 2 : 8>(p, o, acc, o.row0 + panel * 64, tt * BN, lane, warp);
    else ws_epilogue<BN, (BN <= 128 ? 16 : 8)>(p, o.y, o.n_out, acc, o.row0 + panel * 64, tt * BN, lane, warp);
  }
}

template <int kType, int kBN, bool kSplit>
__global__ void __launch_bounds__(WsCfg<kBN, WsLayout<kType>>::kThreads, 1)
    k_gemm_ws(const __grid_constant__ CUtensorMap xmap, const WsParams p) {
  ws_kernel<kType, kBN, kSplit, false>(xmap, p);
}

// The same GEMM storing the attention's inputs (WsMode kWsHeads).
template <int kType, int kBN, bool kSplit>
__global__ void __launch_bounds__(WsCfg<kBN, WsLayout<kType>>::kThreads, 1)
    k_gemm_ws_heads(const __grid_constant__ CUtensorMap xmap, const WsParams p) {
  ws_kernel<kType, kBN, kSplit, true>(xmap, p);
}

// ---- the cluster variant: one consumer warpgroup per CTA, two CTAs per panel pair -------------
// A 2-CTA cluster computes the same 128 × BN tile as one CTA of k_gemm_ws, on two SMs: CTA rank r
// consumes panel r with one consumer warpgroup, so twice as many SMs work on a shape with few
// tiles (T = 512, N = 4096: 64 tiles), each at the wide tile's dequantization per MMA. The X tile
// is shared as before, through the copy engine: each CTA's producer loads half of its rows and
// multicasts them into both CTAs' stages, so L2 traffic stays that of the 128-row tile. A stage
// is free only when the consumers of both CTAs have released it (each consumer thread arrives on
// its own and its peer's `empty`: 256 arrivals), and no CTA leaves while its peer may still write
// into it or arrive on its barriers (cluster barrier at the end).
// kCtasPerSm 2: a shallower ring (3 stages) so that two CTAs share an SM and one's epilogue runs
// under the other's MMAs.
template <int kBN, class L, int kCtasPerSm>
struct WsC2Cfg {
  static constexpr int BM = 128, BN = kBN, BK = 64, kMinBlocks = kCtasPerSm;
  static constexpr int kThreads = 160;  // consumer warpgroup (warps 0-3) + producer warp 4
  static constexpr int kXStageBytes = BN * BK * 2;
  static constexpr int kWStageBytes = L::kQuantBytes + L::kScaleBytes;  // this CTA's panel
  static constexpr int kTxBytes = kXStageBytes + kWStageBytes;
  static constexpr int kBudget = ::pfx::kernels::sm90::kSmemPerSm / kCtasPerSm - 1024 /* per-block reservation */ -
                                 1024 /* 1024-byte alignment slack */;
  static constexpr int kStagesFit = (kBudget - 8) / (kXStageBytes + kWStageBytes + 16);
  static constexpr int S = kStagesFit > 10 ? 10 : kStagesFit;
  static constexpr int kSmemBytes = 1024 + S * (kXStageBytes + kWStageBytes) + (2 * S + 1) * 8;
  static_assert(BN % 16 == 0 && BN >= 64 && BN <= 256, "wgmma n; half the box per CTA");
  static_assert((BN / 2) * 128 % 1024 == 0, "each half of the X stage keeps the 1024-byte swizzle alignment");
  static_assert(kWStageBytes % 16 == 0, "bulk copies move 16-byte multiples");
  // Two stages suffice to make progress (a consumer holds at most the previous k-tile's stage
  // while it waits for the next); three or more keep loads in flight.
  static_assert(S >= 2, "at least two stages in the ring");
  static_assert(kSmemBytes <= ::pfx::kernels::sm90::kMaxSmemPerBlock, "ring exceeds 227 KiB of shared memory");
  static_assert(kCtasPerSm * (kSmemBytes + 1024) <= ::pfx::kernels::sm90::kSmemPerSm, "CTAs per SM exceed shared memory");
};

template <int kType, int kBN, int kCtasPerSm>
__global__ void __launch_bounds__(WsC2Cfg<kBN, WsLayout<kType>, kCtasPerSm>::kThreads) __maxnreg__(kCtasPerSm == 2 ? 200 : 255)
    k_gemm_ws_c2(const __grid_constant__ CUtensorMap xmap, const WsParams p) {
  using L = WsLayout<kType>;
  using Cfg = WsC2Cfg<kBN, L, kCtasPerSm>;
  constexpr int S = Cfg::S, BN = Cfg::BN;
  extern __shared__ uint8_t smem_dyn[];
  uint8_t* const smem = smem_dyn + ((1024u - (smem_addr(smem_dyn) & 1023u)) & 1023u);
  uint8_t* const xs = smem;                        // [S][BN][128] swizzled fp16
  uint8_t* const ws = xs + S * Cfg::kXStageBytes;  // [S][kWStageBytes] this panel's repacked weights
  const uint32_t full0 = smem_addr(ws + S * Cfg::kWStageBytes);
  const uint32_t empty0 = full0 + 8 * S;  // [S + 1]: S is the spare of the first release
  const uint32_t rank = cluster_ctarank(), peer = rank ^ 1u;
  const int warp = threadIdx.x >> 5, lane = threadIdx.x & 31;
  const int tiles = p.m_tiles * p.t_tiles;
  const int cluster = static_cast<int>(cluster_id_x()), clusters = static_cast<int>(cluster_count_x());

  if (threadIdx.x == 0) {
    for (int s = 0; s < S; ++s) mbar_init(full0 + 8 * s, 1);
    for (int s = 0; s <= S; ++s) mbar_init(empty0 + 8 * s, 256);  // 128 own + 128 peer consumer threads
    fence_mbarrier_init();
  }
  cluster_sync();  // the peer's barriers exist before any multicast or remote arrival

  if (warp == 4) {
    if (lane == 0) {
      int stage = 0;
      uint32_t phase = 0;
      for (int tile = cluster; tile < tiles; tile += clusters) {
        const int mt = tile % p.m_tiles, tt = tile / p.m_tiles;
        for (int kt = 0; kt < p.nk; ++kt) {
          mbar_wait(empty0 + 8 * stage, phase ^ 1);  // both CTAs' consumers are done with it
          PFX_RACE_STRESS_POINT(1);
          const uint32_t bar = full0 + 8 * stage;
          mbar_arrive_expect_tx(bar, Cfg::kTxBytes);  // the whole X tile (half from the peer) + own weights
          tma_load_2d_multicast(smem_addr(xs + stage * Cfg::kXStageBytes) + rank * (BN / 2) * 128, &xmap, kt * Cfg::BK,
                                tt * BN + static_cast<int>(rank) * (BN / 2), bar, 0x3);
          const uint32_t wdst = smem_addr(ws + stage * Cfg::kWStageBytes);
          bulk_copy_g2s(wdst, p.w + ws_quant_offset<L>(mt, kt, p.n_groups) + rank * L::kQuantBytes, L::kQuantBytes, bar);
          if constexpr (L::kScaleBytes > 0)
            bulk_copy_g2s(wdst + L::kQuantBytes, p.w + ws_scale_offset<L>(mt, kt, p.n_groups) + rank * L::kScaleBytes,
                          L::kScaleBytes, bar);
          if (++stage == S) stage = 0, phase ^= 1;
        }
      }
    }
    __syncwarp();
  } else {
    WsConsumer<kType, BN, S, Cfg::kXStageBytes, Cfg::kWStageBytes> consumer(xs, threadIdx.x, lane);
    // Both CTAs' producers write this stage (the X multicast): every consumer thread arrives on
    // its own CTA's and its peer's `empty` (each read ordered by its own thread's release).
    const auto release = [&](int st) {
      PFX_RACE_STRESS_POINT(3);
      mbar_arrive(empty0 + 8 * st);
      mbar_arrive_remote(mapa_shared(empty0 + 8 * st, peer));
    };
    float acc[BN / 2];
    for (int tile = cluster; tile < tiles; tile += clusters) {
      const int mt = tile % p.m_tiles, tt = tile / p.m_tiles;
      consumer.tile(acc, 0, p.nk, true, full0, ws, 0, L::kQuantBytes, release);
      PFX_RACE_STRESS_POINT(4);
      ws_epilogue<BN>(p, p.y, p.n_out, acc, mt * Cfg::BM + static_cast<int>(rank) * 64, tt * BN, lane, warp);
    }
  }
  cluster_sync();  // no CTA leaves while its peer may still write into it or arrive on its barriers
}

// The repack (gemm_ws_repack): block (group, pair) writes that chunk, one 32-bit word per thread
// and pass.
template <int kType>
__global__ void __launch_bounds__(256) k_gemm_ws_repack(const WsRowSource src, int64_t n_groups, uint32_t* out) {
  constexpr int kWords = static_cast<int>(ws_group_bytes<WsLayout<kType>>() / 4);
  const int64_t group = blockIdx.x, pair = blockIdx.y;
  uint32_t* chunk = out + (pair * n_groups + group) * kWords;
  for (int w = threadIdx.x; w < kWords; w += blockDim.x) chunk[w] = ws_repacked_word_at<kType>(src, pair, group, 4 * w);
}

}  // namespace pfx::kernels::dev

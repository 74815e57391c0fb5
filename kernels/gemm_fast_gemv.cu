// Decode mat-vec of the fast path (gemv_fast): Y[T,N] = X16[T,K] · fp16(W[N,K])ᵀ for T <= 8, reading
// the raw quantized rows once, at memory bandwidth rather than instruction rate. Two kernels:
// k_gemv_direct (q4_K, q5_K, q6_K: the default for them; below) and the staged k_gemv_fast (q8_0,
// f16, and q4_K / q6_K as the named kernel "staged", for side-by-side timing in gemv_bench).
//
// Staged: a block owns 16 weight rows; its kWarps warps split K into units of 256 (warp w takes units
// w, w + kWarps, ...). Each warp streams its units through a private kStages-deep ring in shared
// memory with 16-byte cp.async copies (weights and the activation chunks the unit meets, laid out
// for the MMA: gemm_fast_gemv_tile.cuh), so several units per warp are in flight while it decodes
// an earlier one. Decoding gives each weight its exact fp16 value (the GEMM's decoders) directly as
// an A fragment of mma.sync m16n8k16: weights × tokens, fp32 accumulators, so T = 1..8 cost the same
// and the decode (~4 instructions per weight) is the only per-weight ALU work. The warps' partial
// sums are added in warp order in shared memory: every output is the same fixed-order sum on every
// run.
#include <cuda_fp16.h>

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <type_traits>

#include "kernels/cuda_check.h"
#include "kernels/gemm_fast.h"
#include "kernels/common.cuh"
#include "kernels/elementwise_math.cuh"
#include "kernels/gemm_fast_gemv_direct.cuh"
#include "kernels/gemm_fast_gemv_epilogue.cuh"
#include "kernels/gemm_fast_gemv_job.cuh"
#include "kernels/gemm_fast_gemv_seq.cuh"
#include "kernels/gemm_fast_gemv_store.cuh"
#include "kernels/gemm_fast_gemv_tile.cuh"
#include "kernels/gemm_fast_internal.h"
#include "kernels/gemm_fast_kernel.cuh"
#include "kernels/gemm_fast_launch_info.cuh"
#include "kernels/pdl_launch.h"
#include "kernels/ptx.cuh"
#include "kernels/rope_math.cuh"
#include "kernels/sm90.h"
#include "util/error.h"

namespace pfx::kernels::dev {

namespace {

// Shape of one instantiation. A warp's ring gets about 12 KiB (2-4 stages: at T = 1 a q4_K stage is
// 2.8 KiB, so 3 units are in flight behind the one being decoded); 8 warps per block when two such
// blocks fit an SM's shared memory (16 warps/SM, ~70-140 KiB of copies in flight), else 4.
template <class W, int kT>
struct GemvCfg {
  static constexpr int kStageBytes = kGemvStageBytes<W, kT>;
  static constexpr int kStages = 12 * 1024 / kStageBytes < 2 ? 2 : (12 * 1024 / kStageBytes > 4 ? 4 : 12 * 1024 / kStageBytes);
  static constexpr int kWarpBytes = kStages * kStageBytes;
  static constexpr int kBlockBytes8 = 8 * kWarpBytes;
  static constexpr bool kEight = 2 * (kBlockBytes8 + 1024) <= ::pfx::kernels::sm90::kSmemPerSm;
  static constexpr int kWarps = kEight ? 8 : 4;
  static constexpr int kThreads = 32 * kWarps;
  static constexpr int kSmem = kWarps * kWarpBytes;
  // Blocks per SM that shared memory allows (at most 4): the register cap of __launch_bounds__.
  static constexpr int kFit = ::pfx::kernels::sm90::kSmemPerSm / (kSmem + 1024);
  static constexpr int kMinBlocks = kFit > 4 ? 4 : kFit;
  static_assert(kSmem <= ::pfx::kernels::sm90::kMaxSmemPerBlock, "gemv stages exceed 227 KiB");
  static_assert(kMinBlocks >= 1, "one gemv block must fit an SM");
  static_assert(kWarpBytes >= 32 * 16, "the partial-sum slot of a warp lives in its ring");
  static_assert(kStageBytes % 16 == 0, "stages must keep 16-byte alignment");
};

// Every output of the 16-row tile at n0, summed (gemv_partial_sum) and stored.
template <int kT>
__device__ __forceinline__ void gemv_sum_and_store(const GemvParams& p, int n0, const uint8_t* partials, int stride,
                                                   int warps) {
  for (int o = static_cast<int>(threadIdx.x); o < kGemvRows * kT; o += static_cast<int>(blockDim.x)) {
    const int n = n0 + o % kGemvRows;
    if (n < p.src.N) gemv_store(p, n, o / kGemvRows, gemv_partial_sum(partials, stride, warps, o));
  }
}

template <class W, int kT>
__global__ void __launch_bounds__(GemvCfg<W, kT>::kThreads, GemvCfg<W, kT>::kMinBlocks) k_gemv_fast(const GemvParams p) {
  using C = GemvCfg<W, kT>;
  using U = GemvUnit<W>;
  extern __shared__ __align__(16) uint8_t gemv_smem[];
  const int warp = static_cast<int>(threadIdx.x) >> 5, lane = static_cast<int>(threadIdx.x) & 31;
  const int n0 = static_cast<int>(blockIdx.x) * kGemvRows;
  uint8_t* const ring = gemv_smem + warp * C::kWarpBytes;
  const uint32_t ring_u = smem_addr(ring);
  const int units = (p.src.K + kGemvUnitK - 1) / kGemvUnitK;
  const int my_units = warp < units ? (units - 1 - warp) / C::kWarps + 1 : 0;

  // Unit i of this warp goes to stage i % kStages; one cp.async group per unit (empty past the end,
  // so that wait_group counts stay uniform).
  const GemvCopier<W, kT> copier(p.src, n0, lane);
  const auto issue = [&](int i, int stage) {
    if (i < my_units) {
      const uint32_t stage_u = ring_u + static_cast<uint32_t>(stage * C::kStageBytes);
      copier.stage(warp + i * C::kWarps,
                   [&](int off, const void* src, uint32_t bytes) { cp_async_16(stage_u + off, src, bytes); });
    }
    cp_async_commit();
  };
#pragma unroll
  for (int i = 0; i < C::kStages - 1; ++i) issue(i, i);

  const uint8_t* const row_lo = gemv_row(p.src, n0 + (lane >> 2));
  const uint8_t* const row_hi = gemv_row(p.src, n0 + (lane >> 2) + 8);
  float acc[4] = {0.0f, 0.0f, 0.0f, 0.0f};
  int stage = 0;  // = i % kStages
#pragma unroll 1
  for (int i = 0; i < my_units; ++i) {
    issue(i + C::kStages - 1, stage == 0 ? C::kStages - 1 : stage - 1);  // the stage freed last iteration
    cp_async_wait<C::kStages - 1>();  // unit i landed (this lane's copies) ...
    __syncwarp();                     // ... and every lane's
    const int u = warp + i * C::kWarps;
    gemv_unit_mmas<W, kT>(ring + stage * C::kStageBytes, U::misalign(row_lo, u), U::misalign(row_hi, u), lane,
                          gemv_pairs_in_unit(p.src.K, u),
                          [&](const uint32_t (&a)[4], uint32_t b0, uint32_t b1) { mma_m16n8k16_f16_f32(acc, a, b0, b1); });
    __syncwarp();  // every lane is done with the stage before issue() refills it
    stage = stage == C::kStages - 1 ? 0 : stage + 1;
  }
  cp_async_wait<0>();  // only empty groups remain; leave none behind

  // acc = D fragment: rows g, g+8 (lane / 4 = g) × tokens 2·(lane % 4), +1. The slot of warp w is
  // the start of its own ring, idle now.
  reinterpret_cast<float4*>(ring)[lane] = make_float4(acc[0], acc[1], acc[2], acc[3]);
  __syncthreads();
  gemv_sum_and_store<kT>(p, n0, gemv_smem, C::kWarpBytes, C::kWarps);
}

// Asks L2 for one unit of one row: its kBlockBytes bytes at blk, widened to 16-byte bounds (q6_K
// blocks are 2-byte aligned) but not past the matrix's last whole 16 bytes (a hint needs no tail).
template <class D>
__device__ __forceinline__ void gemv_prefetch_unit_l2(const GemvPart& q, const uint8_t* blk) {
  const uintptr_t a = reinterpret_cast<uintptr_t>(blk), end = reinterpret_cast<uintptr_t>(q.w_end);
  const uintptr_t lo = a & ~static_cast<uintptr_t>(15);
  const uintptr_t hi = min((a + D::kBlockBytes + 15) & ~static_cast<uintptr_t>(15), end & ~static_cast<uintptr_t>(15));
  if (hi > lo) prefetch_l2_bulk(reinterpret_cast<const void*>(lo), static_cast<uint32_t>(hi - lo));
}

// ---- the direct kernel ---------------------------------------------------------------------
// A block owns 16 weight rows at a time (a tile); its blockDim / 32 warps (the launcher's choice per
// shape, at most D::kMaxWarps) split the row's units: warp w takes units w, w + warps, ... Each lane
// keeps the raw bytes of its next unit in registers, fetched right after the current unit's
// prepare(), so those loads are in flight while the lane decodes and multiplies the current one (no
// shared memory, no barrier until the tile's end); the next unit's activations are prefetched into
// L1 at the same point. Two accumulators break the MMA chain in two. The sum of every output is
// fixed: per warp acc0 + acc1 over its units in order, then the warps in warp order.
//
// A launch computes a GemvJob (kernels/gemm_fast_gemv_job.cuh): one matrix, up to three matrices
// tile after tile (Q, K, V), or a SwiGLU pair whose block takes a gate tile and then the same rows
// of up. The grid decides how many tile groups a block takes: one (direct_w<n>, Auto, and every
// grouped launch), or several (stream_w<n>: as many blocks as the GPU holds at once, the first unit
// of a block's next tile asked of L2 while the last unit of this one is decoded). Streaming was the
// hypothesis that a grid of several waves pays a DRAM latency per wave; measured slower
// (streams_tiles, below), it stays as a named kernel. Both grids give the same bits (same units per
// warp, same order): GemvFast.StreamEqualsDirectBitwise.
//
// The kernel is launched as a programmatic dependent (launch_pdl): its blocks start while the
// kernel before it still runs, fetch their first unit's weights, and wait (pdl_wait) only before
// they read X or touch Y. H200, 7B Q4_K_M tg128 (docs/perf-h200.md, session 2026-12-02): +7.7%.
// An L2 prefetch of the warp's later units at the start (cp.async.bulk.prefetch.L2) was measured
// with it and cost 12% alone, 4% with PDL: the early blocks' prefetches compete with the running
// kernel's loads for DRAM and the q6_K blocks' unaligned edges still miss.
template <class D, int kT>
__global__ void __launch_bounds__(32 * D::kMaxWarps, D::kMinBlocks) k_gemv_direct(const __grid_constant__ GemvJob job) {
  __shared__ float4 partial[D::kMaxWarps][32];
  __shared__ float gate_sum[kGemvRows * kT];  // a SwiGLU pair's gate outputs until its up tile's
  __shared__ __align__(16) GemvTileConsts<kT> consts;  // the tile's cos/sin and position, or old outputs
  pdl_launch_dependents();  // the next GEMV may start fetching its own weights
  // Loop state is the virtual tile v and the unit u: q4_K at T = 8 sits at its cap of 128 registers,
  // so the tile's part and rows and the warp's unit count are recomputed from the parameters.
  const int warps = static_cast<int>(blockDim.x) >> 5;
  const int warp = static_cast<int>(threadIdx.x) >> 5, lane = static_cast<int>(threadIdx.x) & 31;
  const int g = lane >> 2, tq = lane & 3;
  const int units = job.K / kGemvUnitK;  // K % 256 == 0 for the K-quants
  const uint16_t* const xg = job.x + static_cast<int64_t>(g < kT ? g : 0) * job.K;
  const int blocks = static_cast<int>(gridDim.x);

  int v = gemv_group(job) * static_cast<int>(blockIdx.x);  // < tiles: the grid has no idle block
  GemvTileAt at = gemv_locate(job, v);
  const uint8_t* row_lo = gemv_part_row(job.part[at.part], at.n0 + g);
  const uint8_t* row_hi = gemv_part_row(job.part[at.part], at.n0 + g + 8);
  typename D::Raw r_lo{}, r_hi{};
  if (warp < units) {  // the warp's first unit: unit `warp` of the row
    r_lo = D::fetch(row_lo + warp * D::kBlockBytes, tq);
    r_hi = D::fetch(row_hi + warp * D::kBlockBytes, tq);
  }
  pdl_wait();  // X and Y belong to the kernels before this one
  if (v < job.tiles) gemv_fetch_tile_consts<kT>(job, at, consts);
#pragma unroll 1
  while (v < job.tiles) {
    const int next_v = gemv_next_tile(job, v, blocks);
    float acc[2][4] = {{0.0f, 0.0f, 0.0f, 0.0f}, {0.0f, 0.0f, 0.0f, 0.0f}};
#pragma unroll 1
    for (int u = warp; u < units; u += warps) {
      uint4 b[kGemvPairs];
      gemv_direct_x<D, kT>(xg, u, g, tq, b);
      // The unit's decode: the one-FMA form where every row of the warp's unit allows it (a vote on
      // the raw headers, warp-uniform), else the exact two-step form; the same outputs either way
      // (kernels/gemm_fast_gemv_direct.cuh).
      const bool fast = D::kFastDecode && __all_sync(0xFFFFFFFFu, gemv_direct_fast_ok<D>(r_lo, r_hi));
      typename D::Ctx c_lo, c_hi;
      if constexpr (D::kFastDecode) {
        if (fast) {
          c_lo = D::fast_prepare(r_lo, tq), c_hi = D::fast_prepare(r_hi, tq);
        } else {
          c_lo = D::prepare(r_lo, tq), c_hi = D::prepare(r_hi, tq);
        }
      } else {
        c_lo = D::prepare(r_lo, tq), c_hi = D::prepare(r_hi, tq);
      }
      if (u + warps < units) {  // warp-uniform
        const int64_t next = static_cast<int64_t>(u + warps) * D::kBlockBytes;
        r_lo = D::fetch(row_lo + next, tq);
        r_hi = D::fetch(row_hi + next, tq);
        // The next unit's activations (x[g][256(u + warps) ..], 512 bytes = 4 lines per token) into
        // L1, so that its B loads above do not wait on L2 in front of the first MMA.
        if (g < kT) prefetch_l1(xg + kGemvUnitK * (u + warps) + 64 * tq);
      } else if (next_v < job.tiles && tq == 0) {
        // Block-uniform: the next tile's first unit into L2 (one lane per row), to be loaded into
        // registers after this tile's sums. Loading it here would hold its registers across this
        // unit's decode: q4_K at T = 8 would spill.
        const GemvTileAt nx = gemv_locate(job, next_v);
        const GemvPart& q = job.part[nx.part];
        gemv_prefetch_unit_l2<D>(q, gemv_part_row(q, nx.n0 + g) + warp * D::kBlockBytes);
        gemv_prefetch_unit_l2<D>(q, gemv_part_row(q, nx.n0 + g + 8) + warp * D::kBlockBytes);
      }
      const auto mma = [&](int j, const uint32_t (&a)[4], uint32_t b0, uint32_t b1) {
        mma_m16n8k16_f16_f32(acc[j], a, b0, b1);
      };
      if (fast) {
        gemv_direct_mmas<D, D::kFastDecode>(c_lo, c_hi, b, tq, mma);
      } else {
        gemv_direct_mmas<D>(c_lo, c_hi, b, tq, mma);
      }
    }
    // acc = D fragment: rows g, g+8 × tokens 2·tq, +1 (as in k_gemv_fast).
    partial[warp][lane] = make_float4(__fadd_rn(acc[0][0], acc[1][0]), __fadd_rn(acc[0][1], acc[1][1]),
                                      __fadd_rn(acc[0][2], acc[1][2]), __fadd_rn(acc[0][3], acc[1][3]));
    cp_async_wait<0>();  // this thread's tile constants (if it asked for any) ...
    __syncthreads();     // ... and everyone's partials and constants
    gemv_job_sum_and_store<kT>(job, v, reinterpret_cast<const uint8_t*>(partial), sizeof(partial[0]), warps, gate_sum,
                               consts);
    if (next_v < job.tiles) {
      __syncthreads();  // the next tile's partials and constants overwrite these: every thread's sums first
      at = gemv_locate(job, next_v);
      gemv_fetch_tile_consts<kT>(job, at, consts);
      row_lo = gemv_part_row(job.part[at.part], at.n0 + g);
      row_hi = gemv_part_row(job.part[at.part], at.n0 + g + 8);
      if (warp < units) {  // from L2 by now (prefetched during the last unit)
        r_lo = D::fetch(row_lo + warp * D::kBlockBytes, tq);
        r_hi = D::fetch(row_hi + warp * D::kBlockBytes, tq);
      }
    }
    v = next_v;
  }
}

template <class D>
struct DirectName;
template <>
struct DirectName<DirectQ4K> {
  static constexpr const char* kName = "DirectQ4K";
};
template <>
struct DirectName<DirectQ5K> {
  static constexpr const char* kName = "DirectQ5K";
};
template <>
struct DirectName<DirectQ6K> {
  static constexpr const char* kName = "DirectQ6K";
};

// Launch shape of k_gemv_direct<D, kT> for the registry: its largest block (the launcher picks
// fewer warps for some shapes), no dynamic shared memory.
template <class D, int kT>
bool register_gemv_direct_launch_info() {
  static const std::string name = template_id("k_gemv_direct", DirectName<D>::kName, kT);
  return register_gemm_family_launch_info(name, 32 * D::kMaxWarps, 0);
}
template <class D, int kT>
inline const bool gemv_direct_launch_info_registered = register_gemv_direct_launch_info<D, kT>();

// Blocks of k_gemv_direct<D, kT> with `warps` warps that the whole GPU holds at once (asked of the
// runtime once per block size and process).
template <class D, int kT>
int resident_direct_blocks(int warps) {
  static std::atomic<int> known[D::kMaxWarps + 1] = {};
  int n = known[warps].load(std::memory_order_relaxed);
  if (n > 0) return n;
  int device = 0, sms = 0, per_sm = 0;
  CUDA_CHECK(cudaGetDevice(&device));
  CUDA_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device));
  CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, k_gemv_direct<D, kT>, 32 * warps, 0));
  n = std::max(1, sms * per_sm);
  known[warps].store(n, std::memory_order_relaxed);
  return n;
}

// One block per tile group, or (stream) the fewest waves' worth of resident blocks, spread evenly:
// 688 tiles on 528 resident blocks become 344 blocks of 2 tiles, not 528 blocks of which 160 take 2.
template <class D, int kT>
void launch_gemv_direct_t(const GemvJob& job, int warps, bool stream_tiles, cudaStream_t stream) {
  (void)gemv_direct_launch_info_registered<D, kT>;
  const int groups = job.tiles / gemv_group(job);
  int blocks = groups;
  if (stream_tiles) {
    const int resident = resident_direct_blocks<D, kT>(warps);
    const int waves = (groups + resident - 1) / resident;
    blocks = (groups + waves - 1) / waves;
  }
  ::pfx::kernels::detail::launch_pdl(k_gemv_direct<D, kT>, dim3(static_cast<unsigned>(blocks)),
                                     dim3(static_cast<unsigned>(32 * warps)), 0, stream, job);
  CUDA_CHECK_LAUNCH();
}

template <class D>
void launch_gemv_direct(const GemvJob& job, int T, int warps, bool stream_tiles, cudaStream_t stream) {
  if (warps < 1 || warps > D::kMaxWarps) fail("gemv_fast: ", warps, " warps per block for ", DirectName<D>::kName, " (1..", D::kMaxWarps, ")");
  with_token_count(T, [&]<int kT>() { launch_gemv_direct_t<D, kT>(job, warps, stream_tiles, stream); });
}

// The direct kernel's job for parts [parts, parts + n) (tiles numbered part after part), or for a
// SwiGLU pair (gate, up).
GemvJob direct_job(const ::pfx::kernels::detail::GemvPartLaunch* parts, int n, int64_t K, const uint16_t* x, bool swiglu,
                   const ::pfx::kernels::GemvRopeTarget* heads = nullptr) {
  if (n < 1 || n > kGemvMaxParts || (swiglu && n != 2)) fail("gemv_fast: ", n, " parts in one launch");
  GemvJob job{};
  job.x = x;
  job.K = static_cast<int>(K);
  job.parts = n;
  job.swiglu = swiglu ? 1 : 0;
  int tiles = 0;
  for (int i = 0; i < n; ++i) {
    const auto& a = parts[i];
    const auto* w = static_cast<const uint8_t*>(a.w);
    job.part[i] = GemvPart{w, w + a.N * a.row_bytes, a.row_bytes, a.y, static_cast<int>(a.N), a.mode, tiles, a.heads};
    tiles += static_cast<int>((a.N + kGemvRows - 1) / kGemvRows);
  }
  job.tiles = tiles;
  if (heads)
    job.heads = GemvHeads{reinterpret_cast<const float2*>(heads->cos_sin), heads->p0_dev, heads->p0, heads->head_dim,
                          heads->max_ctx};
  return job;
}

// ---- the sequential-order kernel (gemm_fast_gemv_seq.cuh) ----------------------------------------
template <class D, int kT, int kDecoders, int kStages>
bool register_gemv_seq_launch_info() {
  using C = GemvSeqCfg<kT, kDecoders, kStages>;
  static const std::string name = template_id("k_gemv_seq", DirectName<D>::kName, kT, kDecoders, kStages);
  return register_gemm_family_launch_info(name, C::kThreads, C::kSmem);
}
template <class D, int kT, int kDecoders, int kStages>
inline const bool gemv_seq_launch_info_registered = register_gemv_seq_launch_info<D, kT, kDecoders, kStages>();

template <class D, int kT, int kDecoders, int kStages>
void launch_gemv_seq_t(const GemvParams& p, cudaStream_t stream) {
  using C = GemvSeqCfg<kT, kDecoders, kStages>;
  (void)gemv_seq_launch_info_registered<D, kT, kDecoders, kStages>;
  static const bool attributes_set = [] {
    const void* fn = reinterpret_cast<const void*>(&k_gemv_seq<D, kT, kDecoders, kStages>);
    CUDA_CHECK(cudaFuncSetAttribute(fn, cudaFuncAttributeMaxDynamicSharedMemorySize, C::kSmem));
    return true;
  }();
  (void)attributes_set;
  const unsigned blocks = static_cast<unsigned>((p.src.N + kGemvRows - 1) / kGemvRows);
  k_gemv_seq<D, kT, kDecoders, kStages><<<blocks, C::kThreads, C::kSmem, stream>>>(p);
  CUDA_CHECK_LAUNCH();
}

// Decoder warps and ring stages per block: 2 warps / 4 stages, 4 / 8 (at T = 1: 36, 72 KiB; a
// stage is 8.4 KiB of weights and 0.5 KiB per token).
template <class D, int kT>
void launch_gemv_seq_cfg(const GemvParams& p, int decoders, cudaStream_t stream) {
  if (decoders == 2) return launch_gemv_seq_t<D, kT, 2, 4>(p, stream);
  if constexpr (!std::is_same_v<D, DirectQ5K>) {  // q5_K with 4 decoders spills (gemm_fast_gemv_seq.cuh)
    if (decoders == 4) return launch_gemv_seq_t<D, kT, 4, 8>(p, stream);
  }
  fail("gemv_fast: ", decoders, " decoder warps for k_gemv_seq of ", DirectName<D>::kName,
       " (2, or 4 for q4_K and q6_K)");
}

template <class D>
void launch_gemv_seq(const GemvParams& p, int T, int decoders, cudaStream_t stream) {
  with_token_count(T, [&]<int kT>() { launch_gemv_seq_cfg<D, kT>(p, decoders, stream); });
}

template <class W, int kT>
void launch_gemv_t(const GemvParams& p, cudaStream_t stream) {
  using C = GemvCfg<W, kT>;
  // Names the registration so that it exists for exactly the kernels instantiated here.
  (void)gemv_launch_info_registered<W, kT, C::kThreads, C::kSmem>;
  // Once per instantiation (and process): the attributes are properties of the function.
  static const bool attributes_set = [] {
    const void* fn = reinterpret_cast<const void*>(&k_gemv_fast<W, kT>);
    CUDA_CHECK(cudaFuncSetAttribute(fn, cudaFuncAttributeMaxDynamicSharedMemorySize, C::kSmem));
    // All of the unified L1 as shared memory: the copies are cp.async.cg (L2 only).
    CUDA_CHECK(cudaFuncSetAttribute(fn, cudaFuncAttributePreferredSharedMemoryCarveout, cudaSharedmemCarveoutMaxShared));
    return true;
  }();
  (void)attributes_set;
  const unsigned blocks = static_cast<unsigned>((p.src.N + kGemvRows - 1) / kGemvRows);
  k_gemv_fast<W, kT><<<blocks, C::kThreads, C::kSmem, stream>>>(p);
  CUDA_CHECK_LAUNCH();
}

template <class W>
void launch_gemv(const GemvParams& p, int T, cudaStream_t stream) {
  with_token_count(T, [&]<int kT>() { launch_gemv_t<W, kT>(p, stream); });
}

}  // namespace

}  // namespace pfx::kernels::dev

namespace pfx::kernels::detail {

// Warps per 16-row block of the direct kernel when gemv_fast chooses (GemvKernel::Auto), from the
// H200 table (gemv_bench, docs/h200-evidence/s5-call1-gemv-direct-fe7929f.txt): fewer warps per
// block, i.e. more units per warp behind one prefetch, won wherever the grid still fills the GPU.
// q5_K, q6_K: 4 at every 7B shape (+10-40% over 8). q4_K: 8 at 4096 rows and at K = 11008
// (256 blocks: 4 warps leave SMs short of warps), 4 at the vocab head (2000 blocks), and at
// 11008 x 4096 4 for T <= 4, 8 above (T = 1: 1304 vs 1208 GB/s; T = 8: 845 vs 925). Never more
// warps than units.
int gemv_direct_warps(uint32_t type, int64_t T, int64_t N, int64_t K) {
  const int64_t units = K / dev::kGemvUnitK;
  int w = 4;
  if (type == dev::DirectQ4K::kGgmlType) w = (N <= 4096 || K >= 8192 || (N <= 16384 && T > 4)) ? 8 : 4;
  while (w > 1 && w > units) w /= 2;
  return w;
}

namespace {

// Decoder warps of k_gemv_seq when gemv_fast chooses (GemvKernel::Auto): 4 for q4_K and q6_K (the
// faster one at most 7B shapes on the H200 before the register cap changed; to be re-measured), 2 for
// q5_K (its only configuration).
int seq_decoders(uint32_t type) { return type == dev::DirectQ5K::kGgmlType ? 2 : 4; }

int warps_of(GemvKernel k, uint32_t type, int64_t T, int64_t N, int64_t K) {
  switch (k) {
    case GemvKernel::DirectW2: return 2;
    case GemvKernel::DirectW4:
    case GemvKernel::StreamW4: return 4;
    case GemvKernel::DirectW8:
    case GemvKernel::StreamW8: return 8;
    case GemvKernel::DirectW16:
    case GemvKernel::StreamW16: return 16;
    default: return gemv_direct_warps(type, T, N, K);
  }
}

// Resident blocks streaming tiles (stream_w<n>), or one block per tile (direct_w<n>, and Auto).
// Streaming was measured slower wherever the grid has more than one wave (H200, gemv_bench, session
// 10 call 1: q4_K 11008 x 4096 1100 vs 1477 GB/s, 32000 x 4096 1588 vs 1810; tg128 0.955x): the
// hardware already starts a new block on each SM slot a finished block frees, so blocks of one tile
// overlap each other's loads and decode, while a streaming block's warps wait at every tile's
// barrier and then all load at once.
bool streams_tiles(GemvKernel k) {
  return k == GemvKernel::StreamW4 || k == GemvKernel::StreamW8 || k == GemvKernel::StreamW16;
}

// The direct kernel of `type` on `job` (what gemv_fast and the grouped launches share); false for
// a type it does not take (q8_0, f16).
bool launch_direct(uint32_t type, const dev::GemvJob& job, int T, int warps, bool stream_tiles, cudaStream_t stream) {
  using namespace dev;
  switch (type) {
    case DirectQ4K::kGgmlType: launch_gemv_direct<DirectQ4K>(job, T, warps, stream_tiles, stream); return true;
    case DirectQ5K::kGgmlType: launch_gemv_direct<DirectQ5K>(job, T, warps, stream_tiles, stream); return true;
    case DirectQ6K::kGgmlType: launch_gemv_direct<DirectQ6K>(job, T, warps, stream_tiles, stream); return true;
    default: return false;
  }
}

}  // namespace

void gemv_launch(uint32_t ggml_type, int kernel, const GemmLaunch& a) {
  using namespace dev;
  const uint8_t* w = static_cast<const uint8_t*>(a.w0);
  const GemvParams p{GemvSrc{w, w + a.N * a.row_bytes, a.row_bytes, a.x, static_cast<int>(a.N), static_cast<int>(a.K)},
                     a.y, a.mode};
  const int T = static_cast<int>(a.T);
  const auto k = static_cast<GemvKernel>(kernel);
  // Auto: the sequential-order kernel (bitwise equal to the generic GEMM) for prompts of 2..8
  // tokens, the direct kernel for decode steps (T = 1). Measured on the H200 (7B Q4_K_M,
  // docs/gemm-fast.md): seq made T = 7 bitwise (direct: 1.7e-3, over the parity bound) but runs
  // 0.6-0.9× the direct kernel's bandwidth (tg128 211 against ~250 expected); at T = 1 the decode
  // attention keeps the logits off bitwise anyway (7.7e-4 with seq, 8.5e-4 with direct).
  const bool seq = k == GemvKernel::SeqD2 || k == GemvKernel::SeqD4 || (k == GemvKernel::Auto && T > 1);
  if (seq) {
    const int decoders = k == GemvKernel::SeqD2 ? 2 : k == GemvKernel::SeqD4 ? 4 : seq_decoders(ggml_type);
    switch (ggml_type) {
      case DirectQ4K::kGgmlType: return launch_gemv_seq<DirectQ4K>(p, T, decoders, a.stream);
      case DirectQ5K::kGgmlType: return launch_gemv_seq<DirectQ5K>(p, T, decoders, a.stream);
      case DirectQ6K::kGgmlType: return launch_gemv_seq<DirectQ6K>(p, T, decoders, a.stream);
      default: break;  // Auto for q8_0 / f16: the staged kernel
    }
  }
  if (k != GemvKernel::Staged) {
    const GemvPartLaunch part{a.w0, a.row_bytes, a.N, a.y, a.mode};
    if (launch_direct(ggml_type, direct_job(&part, 1, a.K, a.x, false), T, warps_of(k, ggml_type, a.T, a.N, a.K),
                      streams_tiles(k), a.stream))
      return;
    // Auto for q8_0 / f16: the staged kernel
  }
  switch (ggml_type) {
    case WeightQ4K::kGgmlType: return launch_gemv<WeightQ4K>(p, T, a.stream);
    case WeightQ6K::kGgmlType: return launch_gemv<WeightQ6K>(p, T, a.stream);
    case WeightQ8_0::kGgmlType: return launch_gemv<WeightQ8_0>(p, T, a.stream);
    case WeightF16::kGgmlType: return launch_gemv<WeightF16>(p, T, a.stream);
    default: fail("gemv_fast: weight type id ", ggml_type, " has no fast kernel");
  }
}

void gemv_group_launch(uint32_t ggml_type, const GemvPartLaunch* parts, int n, bool swiglu, int64_t K,
                       const uint16_t* x, int64_t T, cudaStream_t stream, const GemvRopeTarget* heads) {
  // Every part's own pick (the caller checked that they agree): the warps per block fix each
  // output's summation order, so this is what makes a part's bits those of its own launch.
  if (!launch_direct(ggml_type, dev::direct_job(parts, n, K, x, swiglu, heads), static_cast<int>(T),
                     gemv_direct_warps(ggml_type, T, parts[0].N, K), false, stream))
    fail("gemv_fast: weight type id ", ggml_type, " has no grouped kernel");
}

}  // namespace pfx::kernels::detail

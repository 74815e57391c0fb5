// k_gemv_ring: the decode mat-vec (T = 1) fed by the copy engine. The direct kernel
// (kernels/gemm_fast_gemv.cu) is latency-bound on the H200: each warp holds one unit of loads in
// flight, and at K = 4096 a warp has only two units per tile, so every tile pays about two DRAM
// round trips while the decoding warps idle (ncu, session 14: issue 43% of cycles, 1.1 eligible
// warps per scheduler). Here one producer warp streams the weights with bulk copies
// (cp.async.bulk, one per row and stage) into a ring of shared-memory stages that runs ahead across
// tiles, and kW consumer warps decode from shared memory: DRAM keeps up to the ring's size in flight
// per SM however long a tile's decode and sums take.
//
// Work and order are the direct kernel's with kW warps: a block owns one 16-row tile at a time
// (virtual tiles of a GemvJob, so grouped Q/K/V and SwiGLU launches take it as they are); stage c of
// a tile holds units [c·kW, c·kW + kW) of its 16 rows, consumer warp w decodes unit c·kW + w with
// the same lane maps, decoders (kernels/gemm_fast_gemv_direct.cuh: fetch reads shared memory here)
// and two-chain MMA order, and the warps' partial sums are added in warp order. So every output has
// the bits of direct_w<kW> (GemvFast.RingEqualsDirectBitwise). The grid is persistent: the fewest
// waves' worth of resident blocks, each walking its tiles.
//
// A row's stage is one bulk copy of [floor16(a), ceil16(a + bytes)) for its units at a (bulk copies
// need 16-byte bounds; q6_K blocks are only 2-byte aligned), placed so that every byte keeps its
// address % 16 in shared memory: the decoders' alignment logic holds unchanged. That window stays
// inside the matrix when its first and last byte bounds are 16-byte aligned, which the launcher
// requires (gemv_ring_takes); other matrices stay on the direct kernel.
#include <cuda_fp16.h>

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <string>
#include <type_traits>

#include "kernels/common.cuh"
#include "kernels/cuda_check.h"
#include "kernels/gemm_fast_gemv_direct.cuh"
#include "kernels/gemm_fast_gemv_job.cuh"
#include "kernels/gemm_fast_gemv_ring.h"
#include "kernels/gemm_fast_gemv_sum.cuh"
#include "kernels/gemm_fast_gemv_tile.cuh"
#include "kernels/gemm_fast_launch_info.cuh"
#include "kernels/pdl_launch.h"
#include "kernels/ptx.cuh"
#include "kernels/sm90.h"
#include "quant/types.h"
#include "util/error.h"

namespace pfx::kernels::dev {

namespace {

template <class D, int kW>
struct GemvRingCfg {
  static constexpr int kThreads = 32 * kW;
  // Blocks per SM the registers are capped for (__launch_bounds__): 24 warps per SM. The decode
  // is issue-latency-bound (ncu, session 15: 3.6 resident warps per scheduler, 1.3 eligible), so
  // resident warps are what a block size buys.
  static constexpr int kMinBlocks = kW >= 16 ? 1 : 24 / kW;
  // A row's units of one stage, widened to 16-byte bounds on both sides (at most 15 + 15 bytes).
  static constexpr int kRowSlot = (kW * D::kBlockBytes + 30 + 15) / 16 * 16;
  static constexpr int kStageBytes = kGemvRows * kRowSlot;
  // As many stages as kMinBlocks blocks' share of shared memory holds (at most 8): DRAM's bytes in
  // flight at full bandwidth (~25-40 KiB per SM) several times over.
  static constexpr int kRingBudget = (220 * 1024) / kMinBlocks - 8 * 1024;
  static constexpr int kStages = std::min(8, kRingBudget / kStageBytes);
  static constexpr int kSmem = kStages * kStageBytes;
  static_assert(kStages >= 2, "the ring needs two stages");
  static_assert(kSmem + 16 * 1024 <= ::pfx::kernels::sm90::kMaxSmemPerBlock, "ring exceeds shared memory");
};

// Where a row's window starts inside its stage slot: the row's address % 16 (plus its units' bytes).
__device__ __forceinline__ uint32_t ring_misalign(const uint8_t* row) {
  return static_cast<uint32_t>(reinterpret_cast<uintptr_t>(row) & 15u);
}

// The copies of a block's stages, in order: tile after tile (the block's tiles of the job), stage
// c of a tile = units [c·kW, c·kW + kW) of its 16 rows. Warp 0 drives it: issue() waits until the
// consumers freed the stage's ring slot, announces the stage's bytes, and lanes 0..15 each copy
// their row's window.
template <class D, int kW>
struct GemvRingProducer {
  using C = GemvRingCfg<D, kW>;
  int v;       // tile of the next stage (>= job.tiles: done)
  int c = 0;   // its stage in the tile
  int slot = 0;
  uint32_t phase = 0;

  __device__ __forceinline__ void issue(const GemvJob& job, uint8_t* ring, uint64_t* full, uint64_t* empty, int units,
                                        int chunks, int lane) {
    if (v >= job.tiles) return;
    const int r = lane & (kGemvRows - 1);
    const GemvTileAt at = gemv_locate(job, v);
    const uint8_t* const row = gemv_part_row(job.part[at.part], at.n0 + r);
    const int u0 = c * kW, n = min(kW, units - u0);
    const uintptr_t a = reinterpret_cast<uintptr_t>(row + static_cast<int64_t>(u0) * D::kBlockBytes);
    const uintptr_t lo = a & ~static_cast<uintptr_t>(15);
    const uint32_t bytes =
        static_cast<uint32_t>(((a + static_cast<uintptr_t>(n) * D::kBlockBytes + 15) & ~static_cast<uintptr_t>(15)) - lo);
    const uint32_t total = __reduce_add_sync(0xFFFFFFFFu, lane < kGemvRows ? bytes : 0u);
    mbar_wait(smem_addr(&empty[slot]), phase ^ 1u);
    if (lane == 0) mbar_arrive_expect_tx(smem_addr(&full[slot]), total);
    __syncwarp();
    if (lane < kGemvRows)
      bulk_copy_g2s(smem_addr(ring + slot * C::kStageBytes + r * C::kRowSlot), reinterpret_cast<const void*>(lo), bytes,
                    smem_addr(&full[slot]));
    if (++slot == C::kStages) slot = 0, phase ^= 1u;
    if (++c == chunks) c = 0, v = gemv_next_tile(job, v, static_cast<int>(gridDim.x));
  }
};

template <class D, int kT, int kW>
__global__ void __launch_bounds__(GemvRingCfg<D, kW>::kThreads, GemvRingCfg<D, kW>::kMinBlocks)
    k_gemv_ring(const __grid_constant__ GemvJob job) {
  using C = GemvRingCfg<D, kW>;
  extern __shared__ __align__(128) uint8_t gemv_ring_smem[];
  __shared__ __align__(8) uint64_t full[C::kStages], empty[C::kStages];
  __shared__ float4 partial[kW][32];
  __shared__ float gate_sum[kGemvRows * kT];
  const int warp = static_cast<int>(threadIdx.x) >> 5, lane = static_cast<int>(threadIdx.x) & 31;
  const int g = lane >> 2, tq = lane & 3;
  const int units = job.K / kGemvUnitK;
  const int chunks = (units + kW - 1) / kW;
  const int first = gemv_group(job) * static_cast<int>(blockIdx.x);
  if (threadIdx.x == 0) {
    for (int s = 0; s < C::kStages; ++s) {
      mbar_init(smem_addr(&full[s]), 1);         // warp 0's arrive.expect_tx (+ the copies' bytes)
      mbar_init(smem_addr(&empty[s]), 32 * kW);  // one arrival per thread
    }
    fence_mbarrier_init();
  }
  __syncthreads();
  pdl_launch_dependents();  // the next GEMV may start streaming its own weights
  // Warp 0 fills all but one slot before anything else (weights only: they belong to no earlier
  // kernel, so before pdl_wait), then issues stage i + kStages - 1 at stage i: it waits for the
  // slowest warp to have read stage i - 1, one stage of slack.
  GemvRingProducer<D, kW> producer{first};
  if (warp == 0) {
#pragma unroll 1
    for (int s = 0; s < C::kStages - 1; ++s) producer.issue(job, gemv_ring_smem, full, empty, units, chunks, lane);
  }
  const uint16_t* const xg = job.x + static_cast<int64_t>(g < kT ? g : 0) * job.K;
  int slot = 0;
  uint32_t phase = 0;
  pdl_wait();  // X and Y belong to the kernels before this one
#pragma unroll 1
  for (int v = first; v < job.tiles;) {
    const int next_v = gemv_next_tile(job, v, static_cast<int>(gridDim.x));
    const GemvTileAt at = gemv_locate(job, v);
    // Where the lane's two rows start mod 16: their windows' offsets in a stage slot.
    const uint32_t mis_lo = ring_misalign(gemv_part_row(job.part[at.part], at.n0 + g));
    const uint32_t mis_hi = ring_misalign(gemv_part_row(job.part[at.part], at.n0 + g + 8));
    float acc[2][4] = {{0.0f, 0.0f, 0.0f, 0.0f}, {0.0f, 0.0f, 0.0f, 0.0f}};
#pragma unroll 1
    for (int c = 0; c < chunks; ++c) {
      if (warp == 0) producer.issue(job, gemv_ring_smem, full, empty, units, chunks, lane);
      const int u = c * kW + warp;
      const bool mine = u < units;  // warp-uniform; a warp past a ragged last stage still frees it
      mbar_wait(smem_addr(&full[slot]), phase);
      typename D::Raw r_lo{}, r_hi{};
      if (mine) {
        const uint8_t* const stage = gemv_ring_smem + slot * C::kStageBytes + warp * D::kBlockBytes;
        const uint32_t skip = static_cast<uint32_t>(c * kW * D::kBlockBytes);  // the stage's first unit
        r_lo = D::template fetch<LoadGeneric>(stage + g * C::kRowSlot + ((mis_lo + skip) & 15u), tq);
        r_hi = D::template fetch<LoadGeneric>(stage + (g + 8) * C::kRowSlot + ((mis_hi + skip) & 15u), tq);
      }
      // Every thread releases its own reads (a warp-wide arrive by one lane after __syncwarp would
      // order the others' reads only through the warp barrier, which racecheck does not see).
      mbar_arrive(smem_addr(&empty[slot]));
      if (++slot == C::kStages) slot = 0, phase ^= 1u;
      if (!mine) continue;
      // The B fragments pair by pair, from L1 (x is read by every tile of the block): their 32
      // registers held across the unit would cap the warps per SM.
      const auto b = [&](int p) { return gemv_direct_x_pair<D, kT>(xg, u, g, tq, p); };
      // As the direct kernel: the one-FMA decode where every row of the warp's unit allows it.
      const bool fast = D::kFastDecode && __all_sync(0xFFFFFFFFu, gemv_direct_fast_ok<D>(r_lo, r_hi));
      const auto mma = [&](int j, const uint32_t (&a)[4], uint32_t b0, uint32_t b1) {
        mma_m16n8k16_f16_f32(acc[j], a, b0, b1);
      };
      if constexpr (D::kFastDecode) {
        if (fast) {
          gemv_direct_mmas<D, true>(D::fast_prepare(r_lo, tq), D::fast_prepare(r_hi, tq), b, tq, mma);
          continue;
        }
      }
      gemv_direct_mmas<D>(D::prepare(r_lo, tq), D::prepare(r_hi, tq), b, tq, mma);
    }
    partial[warp][lane] = make_float4(__fadd_rn(acc[0][0], acc[1][0]), __fadd_rn(acc[0][1], acc[1][1]),
                                      __fadd_rn(acc[0][2], acc[1][2]), __fadd_rn(acc[0][3], acc[1][3]));
    __syncthreads();
    gemv_job_sum_and_store<kT>(job, v, reinterpret_cast<const uint8_t*>(partial), sizeof(partial[0]), kW, gate_sum,
                               static_cast<int>(threadIdx.x), C::kThreads);
    if (next_v < job.tiles) __syncthreads();  // every sum read before the next tile's partials
    v = next_v;
  }
}

template <class D>
struct RingName;
template <>
struct RingName<DirectQ4K> {
  static constexpr const char* kName = "DirectQ4K";
};
template <>
struct RingName<DirectQ5K> {
  static constexpr const char* kName = "DirectQ5K";
};
template <>
struct RingName<DirectQ6K> {
  static constexpr const char* kName = "DirectQ6K";
};

template <class D, int kT, int kW>
bool register_gemv_ring_launch_info() {
  static const std::string name = template_id("k_gemv_ring", RingName<D>::kName, kT, kW);
  return register_gemm_family_launch_info(name, GemvRingCfg<D, kW>::kThreads,
                                           GemvRingCfg<D, kW>::kSmem);
}
template <class D, int kT, int kW>
inline const bool gemv_ring_launch_info_registered = register_gemv_ring_launch_info<D, kT, kW>();

// Blocks the whole GPU holds at once (asked of the runtime once per instantiation and process).
template <class D, int kT, int kW>
int resident_ring_blocks() {
  static std::atomic<int> known{0};
  int n = known.load(std::memory_order_relaxed);
  if (n > 0) return n;
  int device = 0, sms = 0, per_sm = 0;
  CUDA_CHECK(cudaGetDevice(&device));
  CUDA_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device));
  CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, k_gemv_ring<D, kT, kW>, GemvRingCfg<D, kW>::kThreads,
                                                           GemvRingCfg<D, kW>::kSmem));
  n = std::max(1, sms * per_sm);
  known.store(n, std::memory_order_relaxed);
  return n;
}

// The fewest waves of resident blocks, spread evenly (as the direct kernel's streaming grid).
template <class D, int kT, int kW>
void launch_gemv_ring_t(const GemvJob& job, cudaStream_t stream) {
  using C = GemvRingCfg<D, kW>;
  (void)gemv_ring_launch_info_registered<D, kT, kW>;
  static const bool attributes_set = [] {
    CUDA_CHECK(cudaFuncSetAttribute(reinterpret_cast<const void*>(&k_gemv_ring<D, kT, kW>),
                                    cudaFuncAttributeMaxDynamicSharedMemorySize, C::kSmem));
    return true;
  }();
  (void)attributes_set;
  const int groups = job.tiles / gemv_group(job);
  const int resident = resident_ring_blocks<D, kT, kW>();
  const int waves = (groups + resident - 1) / resident;
  const int blocks = (groups + waves - 1) / waves;
  ::pfx::kernels::detail::launch_pdl(k_gemv_ring<D, kT, kW>, dim3(static_cast<unsigned>(blocks)),
                                     dim3(static_cast<unsigned>(C::kThreads)), static_cast<size_t>(C::kSmem), stream, job);
  CUDA_CHECK_LAUNCH();
}

template <class D>
bool launch_gemv_ring_type(const GemvJob& job, int warps, cudaStream_t stream) {
  if constexpr (std::is_same_v<D, DirectQ4K>) {
    if (warps == 16) return launch_gemv_ring_t<D, 1, 16>(job, stream), true;
  }
  if (warps == 8) return launch_gemv_ring_t<D, 1, 8>(job, stream), true;
  if (warps == 4) return launch_gemv_ring_t<D, 1, 4>(job, stream), true;
  return false;
}

}  // namespace

bool gemv_ring_takes(const GemvJob& job) {
  if (job.K % kGemvUnitK != 0) return false;
  for (int i = 0; i < job.parts; ++i) {
    const auto lo = reinterpret_cast<uintptr_t>(job.part[i].w), hi = reinterpret_cast<uintptr_t>(job.part[i].w_end);
    if (lo % 16 != 0 || hi % 16 != 0) return false;
  }
  return true;
}

bool launch_gemv_ring(uint32_t ggml_type, const GemvJob& job, int T, int warps, cudaStream_t stream) {
  if (T != 1 || !gemv_ring_takes(job)) return false;
  switch (ggml_type) {
    case DirectQ4K::kGgmlType: return launch_gemv_ring_type<DirectQ4K>(job, warps, stream);
    case DirectQ5K::kGgmlType: return launch_gemv_ring_type<DirectQ5K>(job, warps, stream);
    case DirectQ6K::kGgmlType: return launch_gemv_ring_type<DirectQ6K>(job, warps, stream);
    default: return false;
  }
}

}  // namespace pfx::kernels::dev

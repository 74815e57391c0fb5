// The decode mat-vec in the generic GEMM's summation order (k_gemv_seq, launched from
// kernels/gemm_fast_gemv.cu): bitwise equal to SequentialGemm (kernels/cublas_gemm.h) at T <= 8.
//
// Why this order: on the H200, SequentialGemm at T = 1..8 gives, for every output, exactly the
// value of ONE mma.sync m16n8k16 accumulator chain over k in order, each MMA taking k = 16i ..
// 16i + 15 at its natural fragment positions (tests/kernels/gemm/gemm_order_probe.cu: 0 of 4.6 M
// outputs differ at five 7B shapes; two chains added at the end differ in ~99% of them). The direct
// and staged kernels split k across warps and chains, so their sums land 1-2e-3 (max|Δ|/max|ref|)
// from the generic path's on the 7B; this one keeps the fast path bitwise equal to it in decode.
//
// A chain is serial (one MMA's latency per 16 k), so the kernel splits the work that is not:
//   - decoder warps (kDecoders) each dequantize whole units (16 rows × 256 k; unit u by warp
//     u % kDecoders) with the direct kernel's exact decoders (gemm_fast_gemv_direct.cuh: each lane
//     8 consecutive weights k0(p, tq) .. +7 per pair, rows g and g + 8) into a ring of kStages
//     stages in shared memory, the next unit's raw bytes loaded into registers while they decode,
//     and copy the unit's activations (kT rows × 256 k, cp.async) into the same stage;
//   - one chain warp waits for unit u, reads its 16 A and 16 B fragments with ldmatrix (natural
//     layout; token rows >= kT read a zero row) and runs the 16 MMAs of the chain; at the end it
//     stores its 16 rows × kT tokens.
// The ring lets the decoders run up to kStages units ahead, so the latency of the weight and
// activation loads is behind the chain (a first version loaded B from global in the chain warp:
// 430-1140 GB/s on the H200, tg128 113 tok/s). Slots are guarded by mbarriers: full[s] (32 decoder
// lanes arrive after their stores, 32 more when their copies land), empty[s] (32 chain lanes).
// Stage layout: 16 weight rows then kT activation rows, row r at r·528 bytes (33 16-byte chunks,
// one of padding), chunk c of a row at position c ^ 2((c >> 3) & 3): the decoders' 16-byte stores
// (4 lanes tq at chunks 8 apart) and ldmatrix's 8-row reads then each touch 8 distinct bank groups.
#pragma once
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <cstdint>

#include "kernels/gemm_fast_gemv_direct.cuh"
#include "kernels/gemm_fast_gemv_store.cuh"
#include "kernels/ptx.cuh"
#include "kernels/sm90.h"

namespace pfx::kernels::dev {

inline constexpr int kSeqRowBytes = 528;  // 256 fp16 + one 16-byte pad chunk

// Byte offset of weight k (0..255, a multiple of 8) of tile row r.
__device__ __forceinline__ int seq_tile_offset(int r, int k) {
  const int c = k >> 3;
  return r * kSeqRowBytes + ((c ^ (((c >> 3) & 3) << 1)) << 4);
}

// Blocks per SM the launch bounds ask for (so the register cap): as many as shared memory holds,
// at most 2. With 3-4 (a 128-168 register cap) ptxas spilled 4-40 bytes in q4_K / q5_K (the H200
// call before this cap measured that variant at 716-1670 GB/s); at 2 every q4_K and q6_K
// configuration and q5_K's 2-decoder one are spill-free (q5_K with 4 decoders still spills, so it
// is not instantiated: gemm_fast_gemv.cu).
template <int kT, int kDecoders, int kStages>
struct GemvSeqCfg {
  static constexpr int kThreads = 32 * (kDecoders + 1);
  static constexpr int kStageBytes = (kGemvRows + kT) * kSeqRowBytes;  // weights, then activations
  static constexpr int kZeroBytes = kSeqRowBytes;                      // the zero row
  static constexpr int kBarBytes = 2 * kStages * 8;
  static constexpr int kSmem = kStages * kStageBytes + kZeroBytes + kBarBytes;
  static constexpr int kFit = ::pfx::kernels::sm90::kSmemPerSm / (kSmem + 1024);
  static constexpr int kMinBlocks = kFit > 2 ? 2 : kFit;
  static_assert(kMinBlocks >= 1, "one k_gemv_seq block must fit an SM");
};

template <class D, int kT, int kDecoders, int kStages>
__global__ void __launch_bounds__(GemvSeqCfg<kT, kDecoders, kStages>::kThreads, GemvSeqCfg<kT, kDecoders, kStages>::kMinBlocks)
    k_gemv_seq(const GemvParams p) {
  using C = GemvSeqCfg<kT, kDecoders, kStages>;
  extern __shared__ __align__(128) uint8_t seq_smem[];
  const int warp = static_cast<int>(threadIdx.x) >> 5, lane = static_cast<int>(threadIdx.x) & 31;
  const int g = lane >> 2, tq = lane & 3;
  const int n0 = static_cast<int>(blockIdx.x) * kGemvRows;
  const int units = p.src.K / kGemvUnitK;  // K % 256 == 0 for the K-quants
  const uint32_t ring = smem_addr(seq_smem);
  const uint32_t zero_row = ring + kStages * C::kStageBytes;
  const uint32_t full0 = zero_row + C::kZeroBytes, empty0 = full0 + 8 * kStages;
  if (threadIdx.x == 0) {
    for (int s = 0; s < kStages; ++s) {
      mbar_init(full0 + 8 * s, 64);  // 32 lanes' stores + 32 lanes' copies
      mbar_init(empty0 + 8 * s, 32);
    }
  }
  for (int i = static_cast<int>(threadIdx.x); i < C::kZeroBytes / 16; i += static_cast<int>(blockDim.x))
    reinterpret_cast<uint4*>(seq_smem + kStages * C::kStageBytes)[i] = make_uint4(0u, 0u, 0u, 0u);
  __syncthreads();

  if (warp < kDecoders) {
    // Decoder warp: units warp, warp + kDecoders, ... in order.
    // Rows as 32-bit byte offsets from the tensor (the launcher checks it is under 4 GiB): two
    // 64-bit row pointers were what spilled (ptxas, q4_K / q5_K at the 128-register cap).
    const uint32_t off_lo = static_cast<uint32_t>(gemv_row(p.src, n0 + g) - p.src.w);
    const uint32_t off_hi = static_cast<uint32_t>(gemv_row(p.src, n0 + g + 8) - p.src.w);
    if (warp >= units) return;
    typename D::Raw r_lo = D::fetch(p.src.w + off_lo + static_cast<uint32_t>(warp * D::kBlockBytes), tq);
    typename D::Raw r_hi = D::fetch(p.src.w + off_hi + static_cast<uint32_t>(warp * D::kBlockBytes), tq);
#pragma unroll 1
    for (int u = warp; u < units; u += kDecoders) {
      // Row g's unit is decoded and stored before row g + 8's is prepared (one Ctx live at a time:
      // q4_K / q5_K spilled with both), each row's next raw bytes fetched as soon as its are used.
      const bool more = u + kDecoders < units;  // warp-uniform
      const uint32_t next = static_cast<uint32_t>((u + kDecoders) * D::kBlockBytes);
      const typename D::Ctx c_lo = D::prepare(r_lo, tq);
      if (more) r_lo = D::fetch(p.src.w + (off_lo + next), tq);
      const int s = u % kStages, use = u / kStages;
      mbar_wait(empty0 + 8 * s, (use & 1) ^ 1);  // the chain is done with unit u - kStages
      const uint32_t tile = ring + s * C::kStageBytes;
      // The unit's activations: lane = chunk c (k 8c .. 8c + 7) of each token row.
#pragma unroll
      for (int t = 0; t < kT; ++t)
        cp_async_16(tile + seq_tile_offset(kGemvRows + t, 8 * lane),
                    p.src.x + static_cast<uint32_t>(t * p.src.K + kGemvUnitK * u + 8 * lane), true);
#pragma unroll
      for (int pr = 0; pr < kGemvPairs; ++pr)
        st_shared_16(tile + seq_tile_offset(g, D::k0(pr, tq)), D::pair(c_lo, tq, pr));
      const typename D::Ctx c_hi = D::prepare(r_hi, tq);
      if (more) r_hi = D::fetch(p.src.w + (off_hi + next), tq);
#pragma unroll
      for (int pr = 0; pr < kGemvPairs; ++pr)
        st_shared_16(tile + seq_tile_offset(g + 8, D::k0(pr, tq)), D::pair(c_hi, tq, pr));
      mbar_arrive(full0 + 8 * s);
      cp_async_mbar_arrive(full0 + 8 * s);
    }
    return;
  }

  // Chain warp. Lane l gives ldmatrix the address of matrix l / 8 (0: rows 0-7, k 0-7; 1: rows
  // 8-15, k 0-7; 2: rows 0-7, k 8-15; 3: rows 8-15, k 8-15), row l % 8: registers a0..a3 of the
  // A fragment, in mma's order.
  const int lm_row = (lane & 7) + 8 * ((lane >> 3) & 1), lm_k = 8 * (lane >> 4);
  // B: lane l gives the address of token row l % 8 (the zero row for rows >= kT) at k 8·(l / 8) of
  // each 32 k: registers b[2j][0], b[2j][1], b[2j + 1][0], b[2j + 1][1] of MMAs 2j and 2j + 1.
  const int b_row = lane & 7, b_k = 8 * (lane >> 3);
  float acc[4] = {0.0f, 0.0f, 0.0f, 0.0f};
#pragma unroll 1
  for (int u = 0; u < units; ++u) {
    const int s = u % kStages, use = u / kStages;
    mbar_wait(full0 + 8 * s, use & 1);
    const uint32_t tile = ring + s * C::kStageBytes;
    // Two halves of 8 MMAs: the second half's fragments load while the first half's chain runs.
#pragma unroll
    for (int half = 0; half < 2; ++half) {
      uint32_t a[8][4], b[8][2];
#pragma unroll
      for (int i = 0; i < 8; ++i) ldmatrix_x4(a[i], tile + seq_tile_offset(lm_row, 128 * half + 16 * i + lm_k));
#pragma unroll
      for (int j = 0; j < 4; ++j) {
        uint32_t r[4];
        const int k = 128 * half + 32 * j + b_k;
        ldmatrix_x4(r, b_row < kT ? tile + seq_tile_offset(kGemvRows + b_row, k) : zero_row);
        b[2 * j][0] = r[0], b[2 * j][1] = r[1], b[2 * j + 1][0] = r[2], b[2 * j + 1][1] = r[3];
      }
      if (half == 1) mbar_arrive(empty0 + 8 * s);
#pragma unroll
      for (int i = 0; i < 8; ++i) mma_m16n8k16_f16_f32(acc, a[i], b[i][0], b[i][1]);
    }
  }
  // acc: rows g, g + 8 × tokens 2tq, 2tq + 1.
#pragma unroll
  for (int i = 0; i < 4; ++i) {
    const int n = n0 + g + (i >= 2 ? 8 : 0), t = 2 * tq + (i & 1);
    if (t < kT && n < p.src.N) gemv_store(p, n, t, acc[i]);
  }
}

}  // namespace pfx::kernels::dev

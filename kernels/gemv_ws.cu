// Decode mat-vec on gemm_ws's repacked weights (kernels/gemv_ws.h): the kernel k_gemv_ws, its
// launches and the host API.
//
// A block owns one 16-row tile of one part of a GemvJob (kernels/gemm_fast_gemv_job.cuh, whose
// parts here point at repacked matrices): its warps split the row's k-groups, each lane loading
// its group's quants and scales straight from global memory into registers a group ahead of use
// (kernels/gemv_ws_lane.cuh); per group the lanes share their quads' scales and (T = 1) the
// group's activations through shared memory (GemvWsShare), at T > 1 each lane loads its B
// fragments (the activations at the fragment's natural k) from global memory, L1-resident after
// the first touch; the fused GEMM's decoder (WsDecode*) turns each k16 step into an mma.sync
// m16n8k16 A fragment. The tile's epilogue is the direct kernel's
// (kernels/gemm_fast_gemv_epilogue.cuh): partials added in warp order, then stored plain,
// accumulated, as rotated heads, or (an interleaved SwiGLU repack) as silu(gate)·up.
//
// As k_gemv_direct, the kernel is a programmatic dependent (launch_pdl): its blocks fetch their
// first group's weights before pdl_wait, and read X or touch Y only after it.
// (The split kernel runs near the issue limit, session 19's ncu: hence the wide shared-memory
// loads in place of shuffles and narrow L1 loads, and the loop without register copies; session 20:
// 1.15x tg128. docs/gemm-fast.md, "Session 20".)
#include <cuda_runtime.h>

#include <cstdint>
#include <string>

#include "kernels/cuda_check.h"
#include "kernels/gemm_fast_gemv_epilogue.cuh"
#include "kernels/gemm_fast_gemv_job.cuh"
#include "kernels/gemm_fast_internal.h"
#include "kernels/gemm_fast_launch_info.cuh"
#include "kernels/gemv_ws.h"
#include "kernels/gemv_ws_lane.cuh"
#include "kernels/launch_checks.h"
#include "kernels/pdl_launch.h"
#include "kernels/ptx.cuh"
#include "quant/types.h"
#include "util/error.h"

namespace pfx::kernels::dev {

namespace {

// What a warp's lanes share of one k-group, through shared memory, so that each lane loads a few
// wide words instead of many narrow ones: the same values as shuffles or per-lane loads.
// Each lane stores its part of group i into buffer i % 2 (publish), __syncwarp, and reads the
// warp's. Two buffers: a lane writes group i + 1's only after group i's __syncwarp, which every
// lane reaches after its writes of group i and before its reads of them; it writes group i + 2's,
// into i's buffer, only after group i + 1's __syncwarp, which every lane reaches after its last
// read of group i.
// - The quads' scale shares: each lane's (v0, v1) of the four k-tiles (Lane::lane_scales), [parity]
//   [k-tile][lane]; a quad's four pairs of a k-tile are then two 16-byte loads (a quad's lanes read
//   one address). 4 stores and 8 loads per group where shuffles took 32.
// - kStageX (T = 1): the group's 256 activations of token 0 (one 16-byte load per lane, a group
//   ahead), [parity][k-tile: 40 words][chunk: 4 words], chunk 2tq + s/2 holding lane tq's B words of
//   steps s, s + 1 (k words 8s + tq, 8s + 4 + tq: the natural B fragment); the B fragments of a
//   k-tile are then two 16-byte loads: 1 + 4 + 8 memory instructions per group where global loads
//   took 32, and their L1 traffic (with the scale shares: tg128 1.08x; with the fixed addresses
//   and the unrolled loop below, 1.15x; session 20). The k-tile's 8 words of padding make the
//   stores conflict-free; the loads are too (4 addresses, 8 words apart).
// Each lane's addresses are fixed at construction; with the parity a constant (the split kernel's
// loop is unrolled by two) every access is one instruction with an immediate offset.
template <bool kStageX>
class GemvWsShare {
 public:
  static constexpr bool kStagedX = kStageX;
  static constexpr int kTiles = 4;  // k-tiles per group (q4_K and q6_K: publish checks)
  static constexpr int kScaleBytes = kTiles * 32 * static_cast<int>(sizeof(float2));  // per buffer
  static constexpr int kXTileWords = 40;
  static constexpr int kXBytes = kStageX ? kTiles * kXTileWords * 4 : 0;
  static constexpr int kBufferBytes = kScaleBytes + kXBytes;
  static constexpr int kBytesPerWarp = 2 * kBufferBytes;

  // warp_buffers: this warp's kBytesPerWarp ([parity][scales, activations]), 16-byte aligned.
  __device__ __forceinline__ GemvWsShare(uint8_t* warp_buffers, int lane)
      : scale_out_(warp_buffers + 8 * lane),
        scale_in_(warp_buffers + 8 * (lane & ~3)),
        x_out_(warp_buffers + kScaleBytes + 4 * x_store_word(lane)),
        x_in_(warp_buffers + kScaleBytes + 32 * (lane & 3)) {}

  // x4: words 4·lane .. + 3 of the group's activations (kStageX; ignored otherwise).
  template <class Lane>
  __device__ __forceinline__ void publish(const typename Lane::Raw& raw, uint4 x4, int t, int parity) const {
    static_assert(Lane::L::kTiles == kTiles);
    const typename Lane::Scales scales = Lane::scales_of(raw);
    uint8_t* const out = scale_out_ + parity * kBufferBytes;
#pragma unroll
    for (int kt = 0; kt < kTiles; ++kt) {
      float v0, v1;
      Lane::lane_scales(raw, scales, t, kt, v0, v1);
      *reinterpret_cast<float2*>(out + 256 * kt) = make_float2(v0, v1);
    }
    if constexpr (kStageX) {
      uint32_t* const x = reinterpret_cast<uint32_t*>(x_out_ + parity * kBufferBytes);
      x[0] = x4.x, x[8] = x4.y, x[16] = x4.z, x[24] = x4.w;  // chunks 2tq + s/2, tq = 0..3
    }
    __syncwarp();
  }
  // The four lanes' pairs of the lane's quad for k-tile kt, as Decode::set_scale takes them.
  template <class Decode>
  __device__ __forceinline__ void read_scales(int parity, int kt, Decode& dec) const {
    const float4* q = reinterpret_cast<const float4*>(scale_in_ + parity * kBufferBytes + 256 * kt);
    const float4 p01 = q[0], p23 = q[1];
    dec.set_scale(0, p01.x, p01.y);
    dec.set_scale(1, p01.z, p01.w);
    dec.set_scale(2, p23.x, p23.y);
    dec.set_scale(3, p23.z, p23.w);
  }
  // kStageX: the lane's B fragments of k-tile kt.
  __device__ __forceinline__ void read_b(int parity, int kt, uint32_t (&b)[4][2]) const {
    const uint4* x = reinterpret_cast<const uint4*>(x_in_ + parity * kBufferBytes + 4 * kXTileWords * kt);
#pragma unroll
    for (int half = 0; half < 2; ++half) {
      const uint4 c = x[half];
      b[2 * half][0] = c.x, b[2 * half][1] = c.y, b[2 * half + 1][0] = c.z, b[2 * half + 1][1] = c.w;
    }
  }

 private:
  // The word of the lane's first store: its 16 loaded bytes are k-tile lane / 8, step s =
  // (lane % 8) / 2, half lane % 2 (+4 words), of tq = 0..3 (k word 8s + 4·half + tq of the tile).
  __device__ __forceinline__ static int x_store_word(int lane) {
    const int kt = lane >> 3, s = (lane & 7) >> 1, hi = lane & 1;
    return kXTileWords * kt + 4 * (s >> 1) + 2 * (s & 1) + hi;
  }
  uint8_t* scale_out_;
  const uint8_t* scale_in_;
  uint8_t* x_out_;
  const uint8_t* x_in_;
};

// The chain kernel's scale exchange (GemvWsShare's interface, no activations): each lane keeps its
// (v0, v1) of the group's k-tiles in registers and the quad's are shuffled per k-tile, as before
// session 20. A single warp per SM is latency-bound, and the shared-memory round trip on each
// group's path cost its q6_K 8-10% (gemv_bench, session 20 call 2).
template <class Lane>
class GemvWsShuffleShare {
 public:
  static constexpr bool kStagedX = false;
  __device__ __forceinline__ explicit GemvWsShuffleShare(int lane) : quad0_(lane & ~3) {}
  __device__ __forceinline__ void publish(const typename Lane::Raw& raw, int t) {
    const typename Lane::Scales scales = Lane::scales_of(raw);
#pragma unroll
    for (int kt = 0; kt < Lane::L::kTiles; ++kt) Lane::lane_scales(raw, scales, t, kt, v_[kt][0], v_[kt][1]);
  }
  template <class Decode>
  __device__ __forceinline__ void read_scales(int /*parity*/, int kt, Decode& dec) const {
#pragma unroll
    for (int c = 0; c < 4; ++c)
      dec.set_scale(c, __shfl_sync(0xFFFFFFFFu, v_[kt][0], quad0_ | c), __shfl_sync(0xFFFFFFFFu, v_[kt][1], quad0_ | c));
  }
  __device__ __forceinline__ void read_b(int, int, uint32_t (&)[4][2]) const {}

 private:
  int quad0_;
  float v_[Lane::L::kTiles][2];
};

// K-tile kt of a lane's group (raw: its loads, published to `share` at `parity`): the quad's
// scales, the four k16 steps' A fragments from the fused GEMM's decoder, and the B fragments at the
// same k: staged (kStageX) or from xk = the group's activations of the lane's token (k 16s + 2tq
// (+1) and + 8: the natural B fragment). Lanes of tokens g >= kT read token 0's (xk points there,
// and the staged ones are token 0's): their B columns only make D columns that no epilogue reads
// (an MMA keeps its columns apart), and unconditional loads save the zeroing and predication.
template <class Lane, class Share>
__device__ __forceinline__ void gemv_ws_fragments(const typename Lane::Raw& raw, const Share& share, int parity, int kt,
                                                  const uint16_t* xk, uint32_t (&a)[4][4], uint32_t (&b)[4][2]) {
  constexpr bool kStageX = Share::kStagedX;  // the activations come staged
  typename Lane::Decode dec;
  share.read_scales(parity, kt, dec);
  Lane::load(dec, raw, kt);
  if constexpr (kStageX) share.read_b(parity, kt, b);
#pragma unroll
  for (int s = 0; s < 4; ++s) {
    dec.step(s, a[s]);
    if constexpr (!kStageX) {
      const uint16_t* xs = xk + 64 * kt + 16 * s;
      b[s][0] = ldg_ro(reinterpret_cast<const uint32_t*>(xs));
      b[s][1] = ldg_ro(reinterpret_cast<const uint32_t*>(xs + 8));
    }
  }
}

// kChains: 1 = one MMA chain over the warp's k16 steps in order (with one warp: the generic
// GEMM's order); 2 = even and odd steps on two accumulators, added at the end.
template <int kType, int kT, int kChains>
__global__ void __launch_bounds__(32 * kGemvWsMaxWarps, 1) k_gemv_ws(const __grid_constant__ GemvJob job) {
  using Lane = GemvWsLane<kType>;
  using L = typename Lane::L;
  constexpr bool kStageX = kT == 1;
  using Share = GemvWsShare<kStageX>;
  extern __shared__ __align__(16) uint8_t share_buffers[];  // Share's, warp after warp
  __shared__ float4 partial[kGemvWsMaxWarps][32];
  __shared__ __align__(16) GemvTileConsts<kT> consts;  // the tile's cos/sin and position, or old outputs
  pdl_launch_dependents();
  const int warps = static_cast<int>(blockDim.x) >> 5;
  const int warp = static_cast<int>(threadIdx.x) >> 5, lane = static_cast<int>(threadIdx.x) & 31;
  const int g = lane >> 2, tq = lane & 3;
  const Share share(share_buffers + warp * Share::kBytesPerWarp, lane);
  const int groups = job.K / L::kGroupK;
  constexpr int64_t kGroupBytes = ws_group_bytes<L>();
  const int v = static_cast<int>(blockIdx.x);  // one tile per block: the grid is the job's tiles
  const GemvTileAt at = gemv_locate(job, v);
  const GemvWsTile tile = gemv_ws_tile<L>(job.part[at.part].w, groups, at.n0);
  const int t = tile.t0 + lane;  // the consumer thread of the fused GEMM whose fragments this lane takes

  // Two register sets, by the parity of the warp's group count so far: group i's loads land in set
  // i % 2 while group i - 1 is decoded from the other (so no copies between them).
  typename Lane::Raw raw[2] = {};
  uint4 x_words[2] = {};  // kStageX: the lane's 16 bytes of the group's activations (Share::publish)
  if (warp < groups) raw[0] = Lane::fetch(tile.pair_chunks + warp * kGroupBytes, tile.panel, t);
  pdl_wait();  // X and Y belong to the kernels before this one
  gemv_fetch_tile_consts<kT>(job, at, consts);
  const auto load_x = [&](int gi) { return ldg_ro(reinterpret_cast<const uint4*>(job.x + L::kGroupK * gi) + lane); };
  if constexpr (kStageX)
    if (warp < groups) x_words[0] = load_x(warp);

  // Lanes of tokens g >= kT read token 0 (gemv_ws_fragments): D columns that are never stored.
  const uint16_t* const xg = job.x + static_cast<int64_t>(g < kT ? g : 0) * job.K + 2 * tq;
  float acc[kChains][4] = {};
  // Group gi from register set and buffers kP; the warp's next group's loads into set 1 - kP.
  const auto group = [&]<int kP>(int gi) {
    if (gi + warps < groups) {  // warp-uniform: the next group's loads in flight during this one
      raw[1 - kP] = Lane::fetch(tile.pair_chunks + (gi + warps) * kGroupBytes, tile.panel, t);
      if constexpr (kStageX) x_words[1 - kP] = load_x(gi + warps);
      else if (g < kT) prefetch_l1(xg - 2 * tq + L::kGroupK * (gi + warps) + 64 * tq);  // its activations (4 lines)
    }
    const uint16_t* const xk = xg + L::kGroupK * gi;
    share.template publish<Lane>(raw[kP], x_words[kP], t, kP);
#pragma unroll
    for (int kt = 0; kt < L::kTiles; ++kt) {
      uint32_t a[4][4], b[4][2];
      gemv_ws_fragments<Lane>(raw[kP], share, kP, kt, xk, a, b);
#pragma unroll
      for (int s = 0; s < 4; ++s) mma_m16n8k16_f16_f32(acc[kChains == 1 ? 0 : (s & 1)], a[s], b[s][0], b[s][1]);
    }
  };
#pragma unroll 1
  for (int gi = warp; gi < groups; gi += 2 * warps) {
    group.template operator()<0>(gi);
    if (gi + warps < groups) group.template operator()<1>(gi + warps);
  }
  // acc = D fragment: rows g, g+8 × tokens 2·tq, +1 (as k_gemv_direct's).
  float4 sum = make_float4(acc[0][0], acc[0][1], acc[0][2], acc[0][3]);
  if constexpr (kChains == 2)
    sum = make_float4(__fadd_rn(sum.x, acc[1][0]), __fadd_rn(sum.y, acc[1][1]), __fadd_rn(sum.z, acc[1][2]),
                      __fadd_rn(sum.w, acc[1][3]));
  partial[warp][lane] = sum;
  cp_async_wait<0>();  // this thread's tile constants (if it asked for any) ...
  __syncthreads();     // ... and everyone's partials and constants
  const auto* partials = reinterpret_cast<const uint8_t*>(partial);
  if (job.interleaved) {
    gemv_interleaved_swiglu_store<kT>(job, v, partials, sizeof(partial[0]), warps);
  } else {
    gemv_job_sum_and_store<kT>(job, v, partials, sizeof(partial[0]), warps, nullptr, consts);
  }
}

// The generic order: one warp per block and tile, one MMA chain over every k16 step of the row in
// order (the generic GEMM's order), its weights streamed through a kStages-deep ring of
// shared-memory stages, one k-group each, by the lanes' own cp.async copies (GemvWsStage: a lane
// reads back only what it copied, so no barrier but cp.async.wait_group), so that the DRAM latency
// does not add to the chain. Designed for the chain's MMA latency (~33 cycles per k16 step: ~2
// TB/s at 4096 x 4096); measured 547 GB/s there (H200, session 18): ~130 cycles per step, the
// k-tile's own dependency chain (stage load, scale shuffles, decode) unhidden with one or two warps
// per SM. Where it runs (prompts of 2..8 tokens) the generic order is the requirement, not speed.
template <int kType, int kT, int kStages>
__global__ void __launch_bounds__(32) k_gemv_ws_chain(const __grid_constant__ GemvJob job) {
  using Lane = GemvWsLane<kType>;
  using Stage = GemvWsStage<kType>;
  using L = typename Lane::L;
  extern __shared__ __align__(16) uint8_t ring[];
  __shared__ float4 partial[1][32];
  __shared__ __align__(16) GemvTileConsts<kT> consts;
  pdl_launch_dependents();
  const int lane = static_cast<int>(threadIdx.x), g = lane >> 2, tq = lane & 3;
  GemvWsShuffleShare<Lane> share(lane);
  const int groups = job.K / L::kGroupK;
  constexpr int64_t kGroupBytes = ws_group_bytes<L>();
  const int v = static_cast<int>(blockIdx.x);
  const GemvTileAt at = gemv_locate(job, v);
  const GemvWsTile tile = gemv_ws_tile<L>(job.part[at.part].w, groups, at.n0);
  const int t = tile.t0 + lane;
  const uint32_t ring_u = smem_addr(ring);
  // Group i into stage i % kStages; one cp.async group per k-group (empty past the row's end, so
  // that the wait counts stay uniform).
  const auto issue = [&](int i) {
    if (i < groups) {
      const uint32_t stage_u = ring_u + static_cast<uint32_t>((i % kStages) * Stage::kBytes);
      Stage::copy(tile.pair_chunks + i * kGroupBytes, tile.panel, t, lane, [&](int off, const uint8_t* src, int bytes) {
        if (bytes == 16) cp_async_16(stage_u + off, src, 16u);
        else if (bytes == 8) cp_async_8(stage_u + off, src);
        else cp_async_4(stage_u + off, src);
      });
    }
    cp_async_commit();
  };
#pragma unroll
  for (int i = 0; i < kStages; ++i) issue(i);  // the weights: before pdl_wait, as k_gemv_ws
  pdl_wait();
  // (Its cp.async group, if any, lands among the weights' groups: the first waits below then wait
  // for one group more than they need, never for one less.)
  gemv_fetch_tile_consts<kT>(job, at, consts);

  const uint16_t* const xg = job.x + static_cast<int64_t>(g < kT ? g : 0) * job.K + 2 * tq;
  // (A form that decoded group i + 1 while group i's chained MMAs issued, in one basic block, ran
  // slower: 418-443 against 547-566 GB/s at the 4096-row shapes, H200 session 18 calls 3 and 5.)
  float acc[4] = {0.0f, 0.0f, 0.0f, 0.0f};
#pragma unroll 1
  for (int i = 0; i < groups; ++i) {
    cp_async_wait<kStages - 1>();  // this lane's copies of group i
    const typename Lane::Raw cur = Stage::read(ring + (i % kStages) * Stage::kBytes, lane, t);
    share.publish(cur, t);
#pragma unroll
    for (int kt = 0; kt < L::kTiles; ++kt) {
      uint32_t a[4][4], b[4][2];
      gemv_ws_fragments<Lane>(cur, share, i & 1, kt, xg + L::kGroupK * i, a, b);
#pragma unroll
      for (int s = 0; s < 4; ++s) mma_m16n8k16_f16_f32(acc, a[s], b[s][0], b[s][1]);
    }
    // The stage's bytes are in registers (the MMAs above consumed them): refill it.
    issue(i + kStages);
  }
  partial[0][lane] = make_float4(acc[0], acc[1], acc[2], acc[3]);
  cp_async_wait<0>();
  __syncthreads();
  const auto* partials = reinterpret_cast<const uint8_t*>(partial);
  if (job.interleaved) {
    gemv_interleaved_swiglu_store<kT>(job, v, partials, sizeof(partial[0]), 1);
  } else {
    gemv_job_sum_and_store<kT>(job, v, partials, sizeof(partial[0]), 1, nullptr, consts);
  }
}

// Named as ptxas's report demangles it: the type as its ggml id (12 = q4_K, 14 = q6_K).
template <int kType, int kT, int kChains>
bool register_gemv_ws_launch_info() {
  static const std::string name = template_id("k_gemv_ws", kType, kT, kChains);
  return register_gemm_family_launch_info(name, 32 * kGemvWsMaxWarps, kGemvWsMaxWarps * GemvWsShare<kT == 1>::kBytesPerWarp);
}
template <int kType, int kT, int kChains>
inline const bool gemv_ws_launch_info_registered = register_gemv_ws_launch_info<kType, kT, kChains>();

template <int kType, int kT, int kStages>
bool register_gemv_ws_chain_launch_info() {
  static const std::string name = template_id("k_gemv_ws_chain", kType, kT, kStages);
  return register_gemm_family_launch_info(name, 32, kStages * GemvWsStage<kType>::kBytes);
}
template <int kType, int kT, int kStages>
inline const bool gemv_ws_chain_launch_info_registered = register_gemv_ws_chain_launch_info<kType, kT, kStages>();

template <int kType, int kT, int kStages>
void launch_gemv_ws_chain(const GemvJob& job, cudaStream_t stream) {
  (void)gemv_ws_chain_launch_info_registered<kType, kT, kStages>;
  constexpr int kSmem = kStages * GemvWsStage<kType>::kBytes;
  ::pfx::kernels::detail::set_dynamic_smem(k_gemv_ws_chain<kType, kT, kStages>, kSmem);
  ::pfx::kernels::detail::launch_pdl(k_gemv_ws_chain<kType, kT, kStages>, dim3(static_cast<unsigned>(job.tiles)), dim3(32),
                                     kSmem, stream, job);
  CUDA_CHECK_LAUNCH();
}

template <int kType, int kT>
void launch_gemv_ws_t(const GemvJob& job, int warps, cudaStream_t stream) {
  // One warp: the chain kernel (kGemvWsGenericOrder); -4 at T = 1: the same with a 4-deep ring
  // (gemv_bench; at T >= 2 the 8-deep one).
  if (warps == kGemvWsGenericOrder || (warps == kGemvWsChainShallow && kT > 1))
    return launch_gemv_ws_chain<kType, kT, 8>(job, stream);
  if (warps == kGemvWsChainShallow) return launch_gemv_ws_chain<kType, 1, 4>(job, stream);
  const dim3 grid(static_cast<unsigned>(job.tiles)), block(static_cast<unsigned>(32 * warps));
  // Two chains only for decode steps (T = 1): at T >= 2 the second chain's accumulators cost q6_K
  // its register budget (ptxas: 16 bytes of spills at T = 7).
  constexpr int kChains = kT > 1 ? 1 : 2;
  (void)gemv_ws_launch_info_registered<kType, kT, kChains>;
  // The share buffers: 16 warps' at T = 1 exceed the 48 KB a launch gets without asking.
  const int smem = warps * GemvWsShare<kT == 1>::kBytesPerWarp;
  ::pfx::kernels::detail::set_dynamic_smem(k_gemv_ws<kType, kT, kChains>, smem);
  ::pfx::kernels::detail::launch_pdl(k_gemv_ws<kType, kT, kChains>, grid, block, smem, stream, job);
  CUDA_CHECK_LAUNCH();
}

template <int kType>
void launch_gemv_ws(const GemvJob& job, int T, int warps, cudaStream_t stream) {
  with_token_count(T, [&]<int kT>() { launch_gemv_ws_t<kType, kT>(job, warps, stream); });
}

}  // namespace

}  // namespace pfx::kernels::dev

namespace pfx::kernels {

namespace {

using quant::Type;

constexpr uint32_t kQ4K = static_cast<uint32_t>(Type::Q4_K), kQ6K = static_cast<uint32_t>(Type::Q6_K);

int64_t tiles_of(int64_t mma_rows) { return (mma_rows + dev::kGemvRows - 1) / dev::kGemvRows; }

// The warps a launch runs: the caller's, or the pick (T = 1) / the generic order (T >= 2).
int warps_for(int warps, uint32_t type, int64_t T, int64_t mma_rows, int64_t K) {
  if (warps != 0) return warps;
  return T == 1 ? gemv_ws_warps(type, mma_rows, K) : kGemvWsGenericOrder;
}

std::string warps_reason(int warps) {
  if (warps == kGemvWsChainShallow || warps == 0 || warps == 1 || warps == 2 || warps == 4 || warps == 8 || warps == kGemvWsMaxWarps) return {};
  return std::to_string(warps) + " warps per tile: 0 (the pick), 1, 2, 4, 8 or 16 (or -4: the chain kernel's 4-deep ring)";
}

std::string matrix_reason(const WsMatrixView& w, int64_t T) {
  if (w.ggml_type != kQ4K && w.ggml_type != kQ6K)
    return std::string(quant::describe_type_id(w.ggml_type)) + ": the decode mat-vec on the repack takes q4_K and q6_K";
  if (std::string why = gemm_ws_unsupported_reason(w.ggml_type, w.rows, w.cols); !why.empty()) return why;
  if (T < 1 || T > kGemvMaxT) return "T = " + std::to_string(T) + " is outside 1.." + std::to_string(kGemvMaxT);
  if (w.data == nullptr || reinterpret_cast<uintptr_t>(w.data) % 16 != 0) return "repacked data null or not 16-byte aligned";
  if (w.rows > (int64_t{1} << 24) || w.cols > (int64_t{1} << 24)) return "dimension above 2^24";
  return {};
}

void require(const std::string& why, const char* fn) {
  if (!why.empty()) fail(fn, ": ", why);
}


void launch(uint32_t type, const dev::GemvJob& job, int64_t T, int warps, cudaStream_t stream) {
  if (type == kQ4K) return dev::launch_gemv_ws<dev::kWsQ4K>(job, static_cast<int>(T), warps, stream);
  return dev::launch_gemv_ws<dev::kWsQ6K>(job, static_cast<int>(T), warps, stream);
}

// A job of n parts against x16 (K = w0's columns), its parts added by add_part.
dev::GemvJob new_job(const uint16_t* x16, const WsMatrixView& w0, size_t n) {
  dev::GemvJob job{};
  job.x = x16;
  job.K = static_cast<int>(w0.cols);
  job.parts = static_cast<int>(n);
  return job;
}
// Part i: the repacked matrix, its rows and output, its tiles numbered after the earlier parts'.
void add_part(dev::GemvJob& job, int i, const WsMatrixView& w, void* y, int mode, int heads) {
  job.part[i] = dev::GemvPart{static_cast<const uint8_t*>(w.data), nullptr, 0, y, static_cast<int>(w.rows), mode, job.tiles, heads};
  job.tiles += static_cast<int>(tiles_of(w.rows));
}

std::string group_reason(const std::vector<WsMatrixView>& ws, int64_t T, int warps) {
  if (ws.empty() || ws.size() > static_cast<size_t>(kGemvMaxParts))
    return std::to_string(ws.size()) + " matrices: a grouped launch takes 1.." + std::to_string(kGemvMaxParts);
  if (std::string why = warps_reason(warps); !why.empty()) return why;
  for (size_t i = 0; i < ws.size(); ++i) {
    const WsMatrixView &w = ws[i], &w0 = ws[0];
    if (w.swiglu) return "part " + std::to_string(i) + " is an interleaved SwiGLU repack (gemv_ws_swiglu)";
    if (std::string why = matrix_reason(w, T); !why.empty()) return "part " + std::to_string(i) + ": " + why;
    if (w.ggml_type != w0.ggml_type || w.cols != w0.cols) return "part " + std::to_string(i) + " differs from part 0 in type or columns";
    if (warps_for(warps, w.ggml_type, T, w.rows, w.cols) != warps_for(warps, w0.ggml_type, T, w0.rows, w0.cols))
      return "part " + std::to_string(i) + " (" + std::to_string(w.rows) + " rows) is summed by another warp count than part 0";
  }
  return {};
}

}  // namespace

int gemv_ws_warps(uint32_t /*ggml_type*/, int64_t N, int64_t K) {
  // Never more warps than k-groups; 8 at the 4096-row shapes and at K = 11008 (few tiles: more
  // warps per tile keep the SMs fed), 4 where the tiles alone fill the GPU.
  int w = (N <= 4096 || K >= 8192) ? 8 : 4;
  while (w > 1 && w > K / 256) w /= 2;
  return w;
}

std::string gemv_ws_unsupported_reason(const WsMatrixView& w, int64_t T) {
  if (w.swiglu) return "an interleaved SwiGLU repack goes through gemv_ws_swiglu";
  return matrix_reason(w, T);
}

void gemv_ws(const WsMatrixView& w, const uint16_t* x16, int64_t T, void* y, GemmEpilogue epilogue, cudaStream_t stream,
             int warps) {
  gemv_ws_group({{w, y, epilogue}}, x16, T, stream, warps);
}

std::string gemv_ws_group_unsupported_reason(const std::vector<GemvWsOutput>& parts, int64_t T, int warps) {
  std::vector<WsMatrixView> ws;
  for (const GemvWsOutput& p : parts) ws.push_back(p.w);
  return group_reason(ws, T, warps);
}

void gemv_ws_group(const std::vector<GemvWsOutput>& parts, const uint16_t* x16, int64_t T, cudaStream_t stream,
                   int warps) {
  require(gemv_ws_group_unsupported_reason(parts, T, warps), "gemv_ws_group");
  dev::GemvJob job = new_job(x16, parts[0].w, parts.size());
  for (size_t i = 0; i < parts.size(); ++i) {
    const GemvWsOutput& p = parts[i];
    detail::check_gemv_pointers("gemv_ws_group", x16, p.y, p.epilogue == GemmEpilogue::StoreF16 ? 2 : 4);
    add_part(job, static_cast<int>(i), p.w, p.y, detail::gemv_mode_of(p.epilogue), 0);
  }
  const WsMatrixView& w0 = parts[0].w;
  launch(w0.ggml_type, job, T, warps_for(warps, w0.ggml_type, T, w0.rows, w0.cols), stream);
}

std::string gemv_ws_group_heads_unsupported_reason(const std::vector<GemvWsHeadOutput>& parts, int64_t T,
                                                   const GemvRopeTarget& rope, int warps) {
  std::vector<WsMatrixView> ws;
  std::vector<int64_t> rows;
  std::vector<bool> rotates;
  for (const GemvWsHeadOutput& p : parts) ws.push_back(p.w), rows.push_back(p.w.rows), rotates.push_back(p.rotate);
  if (std::string why = group_reason(ws, T, warps); !why.empty()) return why;
  return detail::gemv_heads_reason(rows, rotates, T, rope);
}

void gemv_ws_group_heads(const std::vector<GemvWsHeadOutput>& parts, const GemvRopeTarget& rope, const uint16_t* x16,
                         int64_t T, cudaStream_t stream, int warps) {
  require(gemv_ws_group_heads_unsupported_reason(parts, T, rope, warps), "gemv_ws_group_heads");
  dev::GemvJob job = new_job(x16, parts[0].w, parts.size());
  for (size_t i = 0; i < parts.size(); ++i) {
    const GemvWsHeadOutput& p = parts[i];
    detail::check_gemv_pointers("gemv_ws_group_heads", x16, p.y, 4);  // pairs: 4-byte stores
    const int heads = (p.rotate ? dev::kGemvHeadRotate : 0) | (p.kv_cache ? dev::kGemvHeadCache : 0);
    add_part(job, static_cast<int>(i), p.w, p.y, dev::kStoreF16, heads);
  }
  job.heads = dev::GemvHeads{reinterpret_cast<const float2*>(rope.cos_sin), rope.p0_dev, rope.p0, rope.head_dim, rope.max_ctx};
  const WsMatrixView& w0 = parts[0].w;
  launch(w0.ggml_type, job, T, warps_for(warps, w0.ggml_type, T, w0.rows, w0.cols), stream);
}

void gemv_ws_swiglu(const WsMatrixView& w, const uint16_t* x16, int64_t T, uint16_t* a16, cudaStream_t stream, int warps) {
  if (!w.swiglu) fail("gemv_ws_swiglu: the matrix is not an interleaved SwiGLU repack (gemm_ws_repack_swiglu)");
  WsMatrixView plain = w;
  plain.swiglu = false;
  plain.rows = 2 * w.rows;  // the interleaved matrix's MMA rows
  require(matrix_reason(plain, T), "gemv_ws_swiglu");
  require(warps_reason(warps), "gemv_ws_swiglu");
  detail::check_gemv_pointers("gemv_ws_swiglu", x16, a16, 2);
  dev::GemvJob job = new_job(x16, w, 1);
  job.interleaved = 1;
  add_part(job, 0, plain, a16, dev::kStoreF16, 0);
  job.part[0].N = static_cast<int>(w.rows);  // gate's rows: the outputs per token (the tiles: both matrices')
  launch(w.ggml_type, job, T, warps_for(warps, w.ggml_type, T, plain.rows, w.cols), stream);
}

}  // namespace pfx::kernels

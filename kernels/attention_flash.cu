// Flash-attention-style causal GQA prefill on the tensor cores (sm_80+ mma.sync, runs on sm_90a).
// Block = 64 query rows of one head (4 warps x 16 rows); loops over 64-key tiles of the head's kv
// group up to the block's last causal position (fully masked tiles are never loaded), with K/V
// tiles staged by cp.async into a two-stage ring so tile j+1 loads while tile j computes.
// Per tile: S = Q·Kᵀ (fp16 x fp16 -> fp32, mma.m16n8k16), s *= log2(e)/sqrt(hd), causal mask,
// online softmax in fp32 with the running max m rounded up to an integer (attention_shared.h says
// why), running sum l of the fp32 exponentials, P = fp16(exp2(s - m)), O = O * exp2(m_old - m) +
// P·V (fp32 accumulate; the rescale is an exact power of two). Output fp16(O / l). The softmax
// step and the store are attention_tile.cuh's, shared with the generic tiled kernel, which feeds
// them the same fragments in the same order: the two agree bit for bit.
// Shared-memory tiles are rows of hd fp16 with the 16-byte chunks XOR-swizzled by (row & 7), so
// the 8 row addresses of every ldmatrix phase hit distinct banks (attention_flash_smem.cuh).
// This kernel is variant 0 of attention_flash_variants.h, the reference shape; the engine's default
// is variant 2 (attention_flash_wg.cu: the same per-warp arithmetic and bits on wgmma, 1.4-1.9x
// faster on the H200), after variant 1 (attention_flash_pipe.cu: a three-stage ring and S of the
// next tile computed ahead of the softmax, 1.3-1.5x).
#include <cuda_fp16.h>

#include <cmath>

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
struct FlashCfg {
  static constexpr int kWarps = 4;
  static constexpr int kThreads = kWarps * sm90::kWarpSize;
  static constexpr int kBlockM = 16 * kWarps;  // query rows per block, 16 per warp (one mma M)
  static constexpr int kBlockN = dev::kAttnKeyTile;  // keys per tile (the generic tiled kernel's too)
  static constexpr int kChunks = HD / 8;       // 16-byte chunks per row
  static constexpr int kQBytes = kBlockM * HD * 2;
  static constexpr int kTileBytes = kBlockN * HD * 2;
  static constexpr int kStages = 2;            // K/V ring depth
  static constexpr int kSmemBytes = kQBytes + kStages * 2 * kTileBytes;
  static_assert(HD == 64 || HD == 128, "flash attention: head dims 64 and 128");
  static_assert(kChunks >= 8, "swizzle needs at least 8 chunks per row");
  static_assert(kSmemBytes <= sm90::kMaxSmemPerBlock, "flash attention: shared memory over the sm_90 limit");
  static_assert((kBlockN * kChunks) % kThreads == 0 && (kBlockM * kChunks) % kThreads == 0,
                "flash attention: tile copies must split evenly over the threads");
  static_assert(kBlockN % 16 == 0 && HD % 16 == 0, "mma k-steps of 16");
};

// grid (ceil(T / 64), H); block 128; dynamic smem FlashCfg<HD>::kSmemBytes.
template <int HD>
__global__ void __launch_bounds__(FlashCfg<HD>::kThreads)
    k_attn_flash_prefill(const uint16_t* __restrict__ q16, const uint16_t* __restrict__ k_cache,
                         const uint16_t* __restrict__ v_cache, uint16_t* __restrict__ o16, int T, int H, int Hkv,
                         int p0, int max_ctx, float scale_log2) {
  using Cfg = FlashCfg<HD>;
  extern __shared__ __align__(128) uint8_t smem[];
  const uint32_t s_q = dev::smem_addr(smem);
  const uint32_t s_k0 = s_q + Cfg::kQBytes;
  const uint32_t s_v0 = s_k0 + Cfg::kStages * Cfg::kTileBytes;

  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  const int qtile = gridDim.x - 1 - blockIdx.x;  // longest (latest) query tiles start first
  const int h = blockIdx.y;
  const int g = h / (H / Hkv);
  const int t0 = qtile * Cfg::kBlockM;
  const int ctx = p0 + T;
  const int kv_end = p0 + min(t0 + Cfg::kBlockM, T);  // keys [0, kv_end) are visible to some row here
  const int n_tiles = (kv_end + Cfg::kBlockN - 1) / Cfg::kBlockN;
  const uint16_t* k_head = k_cache + static_cast<int64_t>(g) * max_ctx * HD;
  const uint16_t* v_head = v_cache + static_cast<int64_t>(g) * max_ctx * HD;

  // Q tile (rows past T zero-filled), then K/V tile 0, in the first commit group.
  for (int idx = threadIdx.x; idx < Cfg::kBlockM * Cfg::kChunks; idx += Cfg::kThreads) {
    const int r = idx / Cfg::kChunks, c = idx % Cfg::kChunks;
    const bool valid = t0 + r < T;
    const uint16_t* src = valid ? q16 + (static_cast<int64_t>(t0 + r) * H + h) * HD + c * 8 : q16;
    dev::cp_async_16(s_q + dev::flash_tile_off<HD>(r, c), src, valid);
  }
  auto load_kv = [&](int tile, int stage) {
    const int key0 = tile * Cfg::kBlockN;
    for (int idx = threadIdx.x; idx < Cfg::kBlockN * Cfg::kChunks; idx += Cfg::kThreads) {
      const int r = idx / Cfg::kChunks, c = idx % Cfg::kChunks;
      const bool valid = key0 + r < ctx;  // never read cache rows past the context (zero-fill: 0 * V stays 0)
      const int64_t off = static_cast<int64_t>(key0 + r) * HD + c * 8;
      const uint32_t dst = dev::flash_tile_off<HD>(r, c) + stage * Cfg::kTileBytes;
      dev::cp_async_16(s_k0 + dst, valid ? k_head + off : k_head, valid);
      dev::cp_async_16(s_v0 + dst, valid ? v_head + off : v_head, valid);
    }
  };
  load_kv(0, 0);
  dev::cp_async_commit();

  uint32_t qf[HD / 16][4];      // this warp's 16 query rows as mma A fragments, all k-steps
  float o[HD / 8][4];           // output accumulators: 16 rows x HD, fp32
  float m_run[2] = {-INFINITY, -INFINITY};  // rows g and g+8 of the warp (g = lane / 4)
  float l_run[2] = {0.0f, 0.0f};            // this thread's partial row sums (quad-reduced at the end)
#pragma unroll
  for (int n = 0; n < HD / 8; ++n) o[n][0] = o[n][1] = o[n][2] = o[n][3] = 0.0f;

  const int row_in_warp = lane / 4;
  const int pos0 = p0 + t0 + warp * 16 + row_in_warp;  // position of row g; row g+8 is pos0 + 8
  const int first_pos = p0 + t0;                        // smallest position in the block

  // PFX_RACE_STRESS_POINT: per-warp random stalls in race-stress builds only (kernels/race_stress.cuh),
  // between the phases of the loop — refill, wait, Q·Kᵀ, P·V — so a missing barrier shows in parity.
  for (int j = 0; j < n_tiles; ++j) {
    const int stage = j & 1;
    PFX_RACE_STRESS_POINT(1);
    if (j + 1 < n_tiles) {
      load_kv(j + 1, stage ^ 1);
      dev::cp_async_commit();
      dev::cp_async_wait<1>();  // tile j (and Q) landed; tile j+1 may still be in flight
    } else {
      dev::cp_async_wait<0>();
    }
    PFX_RACE_STRESS_POINT(2);
    __syncthreads();
    if (j == 0) dev::flash_load_q<HD>(qf, s_q, warp * 16, lane);
    const uint32_t s_k = s_k0 + stage * Cfg::kTileBytes;
    const uint32_t s_v = s_v0 + stage * Cfg::kTileBytes;

    // S = Q · Kᵀ for 16 rows x 64 keys per warp.
    float s[Cfg::kBlockN / 8][4];
    dev::flash_scores<HD>(s, qf, s_k, lane);

    // Scale, mask (only tiles crossing the diagonal or the context end need it), online softmax,
    // then O += P · V.
    const int key0 = j * Cfg::kBlockN;
    const bool need_mask = key0 + Cfg::kBlockN - 1 > first_pos || key0 + Cfg::kBlockN > ctx;
    dev::flash_softmax_pv<HD>(s, o, m_run, l_run, s_v, key0, pos0, ctx, need_mask, scale_log2, lane);
    PFX_RACE_STRESS_POINT(4);
    __syncthreads();  // every warp is done with this stage before iteration j+1 refills it
  }

  dev::store_rows<HD>(o, l_run, o16, t0 + warp * 16, T, H, h, lane);
}

template __global__ void k_attn_flash_prefill<64>(const uint16_t*, const uint16_t*, const uint16_t*, uint16_t*, int,
                                                  int, int, int, int, float);
template __global__ void k_attn_flash_prefill<128>(const uint16_t*, const uint16_t*, const uint16_t*, uint16_t*, int,
                                                   int, int, int, int, float);
PFX_KERNEL_LAUNCH_INFO("k_attn_flash_prefill<64>", FlashCfg<64>::kThreads, FlashCfg<64>::kSmemBytes);
PFX_KERNEL_LAUNCH_INFO("k_attn_flash_prefill<128>", FlashCfg<128>::kThreads, FlashCfg<128>::kSmemBytes);

namespace {
template <int HD>
void launch_flash(const AttentionArgs& a, cudaStream_t stream) {
  using Cfg = FlashCfg<HD>;
  detail::set_dynamic_smem(k_attn_flash_prefill<HD>, Cfg::kSmemBytes);
  const dim3 grid((a.T + Cfg::kBlockM - 1) / Cfg::kBlockM, a.H);
  k_attn_flash_prefill<HD><<<grid, Cfg::kThreads, Cfg::kSmemBytes, stream>>>(
      a.q16, a.k_cache, a.v_cache, a.o16, a.T, a.H, a.Hkv, a.p0, a.max_ctx, detail::attention_score_scale(HD));
  CUDA_CHECK_LAUNCH();
}
}  // namespace

const std::vector<FlashVariantInfo>& attention_flash_variants() {
  static const std::vector<FlashVariantInfo> list{
      {"w4s1", "4 warps x 16 rows, 2-stage ring + Q, 2 barriers/tile, per-head grid", FlashCfg<128>::kThreads,
       FlashCfg<64>::kSmemBytes, FlashCfg<128>::kSmemBytes},
      detail::flash_pipe_info(), detail::flash_wg_info()};
  return list;
}

void attention_flash_prefill_variant(int variant, const AttentionArgs& a, cudaStream_t stream) {
  detail::check_attention_args("attention_flash_prefill", a);
  const char* why = attention_fast_unsupported_reason(a);
  detail::require(why == nullptr, "attention_flash_prefill: ", why ? why : "", " (hd=", a.hd, ")");
  const int n = static_cast<int>(attention_flash_variants().size());
  detail::require(variant >= 0 && variant < n, "attention_flash_prefill: variant ", variant, " is not in [0, ", n, ")");
  if (variant == 1) {
    detail::launch_flash_pipe(a, stream);
  } else if (variant == 2) {
    detail::launch_flash_wg(a, stream);
  } else if (a.hd == 64) {
    launch_flash<64>(a, stream);
  } else {
    launch_flash<128>(a, stream);
  }
}

void attention_flash_prefill(const AttentionArgs& a, cudaStream_t stream) {
  attention_flash_prefill_variant(kFlashDefaultVariant, a, stream);
}

}  // namespace pfx::kernels

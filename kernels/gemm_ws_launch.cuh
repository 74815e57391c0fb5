// Host launch of the gemm_ws kernels (kernels/gemm_ws_kernel.cuh): the X tensor map, the
// persistent grid, the shared-memory attribute from the config's constant, and the repack.
// Included by the per-type instantiation files only; each registers its kernels' launch shapes
// (kernel-resources.json).
#pragma once
#include <cuda.h>
#include <cudaTypedefs.h>

#include <algorithm>
#include <deque>
#include <cstdint>
#include <string>

#include "kernels/cuda_check.h"
#include "kernels/gemm_ws_a64.cuh"
#include "kernels/gemm_ws_internal.h"
#include "kernels/gemm_ws_kernel.cuh"
#include "kernels/launch_info.h"
#include "util/error.h"

namespace pfx::kernels::dev {

// A 2-D tensor map over X16[T, K] (row-major fp16) with boxes of 64 (k) × box_rows (tokens), the
// 128-byte swizzle wgmma's descriptors expect, rows past T zero-filled. Encoded per launch (a
// host-side call of a few microseconds); the driver entry point is looked up once.
inline CUtensorMap ws_x_tensor_map(const uint16_t* x, int64_t T, int64_t K, int box_rows) {
  static const PFN_cuTensorMapEncodeTiled_v12000 encode = [] {
    void* fn = nullptr;
    cudaDriverEntryPointQueryResult q{};
    CUDA_CHECK(cudaGetDriverEntryPointByVersion("cuTensorMapEncodeTiled", &fn, 12000, cudaEnableDefault, &q));
    if (q != cudaDriverEntryPointSuccess || fn == nullptr)
      fail("gemm_ws: the driver has no cuTensorMapEncodeTiled (CUDA 12.0+ driver needed)");
    return reinterpret_cast<PFN_cuTensorMapEncodeTiled_v12000>(fn);
  }();
  CUtensorMap map;
  const cuuint64_t dims[2] = {static_cast<cuuint64_t>(K), static_cast<cuuint64_t>(T)};
  const cuuint64_t strides[1] = {static_cast<cuuint64_t>(K) * 2};
  const cuuint32_t box[2] = {64, static_cast<cuuint32_t>(box_rows)};
  const cuuint32_t elem_strides[2] = {1, 1};
  const CUresult r = encode(&map, CU_TENSOR_MAP_DATA_TYPE_FLOAT16, 2, const_cast<uint16_t*>(x), dims, strides, box,
                            elem_strides, CU_TENSOR_MAP_INTERLEAVE_NONE, CU_TENSOR_MAP_SWIZZLE_128B,
                            CU_TENSOR_MAP_L2_PROMOTION_L2_256B, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
  if (r != CUDA_SUCCESS)
    fail("gemm_ws: cuTensorMapEncodeTiled failed (", static_cast<int>(r), ") for X [", T, ", ", K, "] box ", box_rows);
  return map;
}

inline int ws_sm_count() {
  static const int n = [] {
    int dev = 0, sms = 0;
    CUDA_CHECK(cudaGetDevice(&dev));
    CUDA_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev));
    return sms;
  }();
  return n;
}

// "k_gemm_ws<12, 128, false>", "k_gemm_ws_repack<12>": the kernels as c++filt prints them
// (kernels/launch_info.h).
inline bool register_ws_launch_info(const std::string& name, int threads, int smem) {
  static std::deque<std::string> names;  // keeps the registered c-strings alive (push_back moves none)
  names.push_back(name);
  return register_launch_info(LaunchInfo{names.back().c_str(), threads, smem, __FILE__});
}
template <int kType, int kBN, bool kSplit, bool kHeads>
inline const bool ws_launch_info_registered =
    register_ws_launch_info(std::string(kHeads ? "k_gemm_ws_heads<" : "k_gemm_ws<") + std::to_string(kType) + ", " +
                                std::to_string(kBN) + ", " + (kSplit ? "true" : "false") + ">",
                            WsCfg<kBN, WsLayout<kType>>::kThreads, WsCfg<kBN, WsLayout<kType>>::kSmemBytes);
inline constexpr int kWsRepackThreads = 256;
template <int kType>
inline const bool ws_repack_launch_info_registered =
    register_ws_launch_info("k_gemm_ws_repack<" + std::to_string(kType) + ">", kWsRepackThreads, 0);

// The kernels' parameters of one launch (tiles of 128 rows × kBN tokens).
template <int kType, int kBN>
WsParams ws_params(const detail::WsLaunch& a) {
  using L = WsLayout<kType>;
  WsParams p{};
  p.w = static_cast<const uint8_t*>(a.w);
  p.n_groups = a.K / L::kGroupK;
  p.m_tiles = static_cast<int>(ws_pairs(a.out_rows));
  p.t_tiles = static_cast<int>((a.T + kBN - 1) / kBN);
  p.nk = static_cast<int>(a.K / 64);
  p.T = static_cast<int>(a.T);
  p.n_out = static_cast<int>(a.mode == kWsSwiglu ? a.out_rows / 2 : a.out_rows);
  p.y = a.y;
  p.mode = a.mode;
  static_assert(kWsMaxParts == kWsMaxGroupParts, "device and host agree on the group size");
  p.parts = a.parts > 0 ? a.parts : 1;
  if (a.parts == 0) {
    p.part_end[0] = p.m_tiles, p.part_n_out[0] = p.n_out, p.part_y[0] = p.y;
  } else {
    int64_t pairs = 0;
    for (int i = 0; i < a.parts; ++i) {
      pairs += ws_pairs(a.part_rows[i]);
      p.part_end[i] = static_cast<int>(pairs), p.part_n_out[i] = static_cast<int>(a.part_rows[i]), p.part_y[i] = a.part_y[i];
    }
  }
  p.chunk = 0;
  p.partial = static_cast<float4*>(a.partial);
  p.ready = a.ready;
  for (int i = 0; i < kWsMaxParts; ++i) p.part_store[i] = a.part_store[i];
  p.rope_cs = reinterpret_cast<const float2*>(a.rope_cos_sin);
  p.head_dim = a.head_dim, p.p0 = a.p0, p.max_ctx = a.max_ctx;
  return p;
}

// The persistent grid's CTAs: one per SM, or fewer where the caller asks (the tests).
inline int ws_slots(const detail::WsLaunch& a, int ctas_per_sm = 1) {
  const int sms = ws_sm_count() * ctas_per_sm;
  return a.max_ctas > 0 && a.max_ctas < sms ? a.max_ctas : sms;
}

// kSplit: the split-chain schedule where it balances the last round (kernels/gemm_ws_schedule.cuh;
// the workspace comes with the launch), whole tiles otherwise.
// kHeads: the kernel with the head-store epilogue (a.mode == kWsHeads).
template <int kType, int kBN, bool kSplit, bool kHeads>
void launch_ws_kernel(const detail::WsLaunch& a) {
  using L = WsLayout<kType>;
  using Cfg = WsCfg<kBN, L>;
  const auto kernel = kHeads ? &k_gemm_ws_heads<kType, kBN, kSplit> : &k_gemm_ws<kType, kBN, kSplit>;
  static const bool attr = [kernel] {
    CUDA_CHECK(cudaFuncSetAttribute(reinterpret_cast<const void*>(kernel), cudaFuncAttributeMaxDynamicSharedMemorySize,
                                    Cfg::kSmemBytes));
    return true;
  }();
  (void)attr;
  (void)ws_launch_info_registered<kType, kBN, kSplit, kHeads>;
  WsParams p = ws_params<kType, kBN>(a);
  const CUtensorMap map = ws_x_tensor_map(a.x, a.T, a.K, kBN);
  const int64_t tiles = int64_t{p.m_tiles} * p.t_tiles;
  if (tiles > 0x7FFFFFFF / p.nk) fail("gemm_ws: ", tiles, " tiles × ", p.nk, " k-tiles exceed the schedule's range");
  const int slots = ws_slots(a);
  if constexpr (kSplit) {
    p.chunk = ws_split_chunk(tiles, p.nk, slots);
    if (p.chunk > 0 && (a.partial == nullptr || a.ready == nullptr)) fail("gemm_ws: split chains without a workspace");
  }
  const WsSchedule sched{static_cast<int>(tiles), p.nk, p.chunk};
  const unsigned grid = static_cast<unsigned>(sched.ctas(slots));
  kernel<<<grid, Cfg::kThreads, Cfg::kSmemBytes, a.stream>>>(map, p);
  CUDA_CHECK_LAUNCH();
}

template <int kType, int kBN, bool kSplit>
void launch_ws(const detail::WsLaunch& a) {
  if (a.mode == kWsHeads) launch_ws_kernel<kType, kBN, kSplit, true>(a);
  else launch_ws_kernel<kType, kBN, kSplit, false>(a);
}

template <int kType>
inline const bool ws_a64_launch_info_registered =
    register_ws_launch_info("k_gemm_ws_a64<" + std::to_string(kType) + ">", WsA64Cfg<WsLayout<kType>>::kThreads,
                            WsA64Cfg<WsLayout<kType>>::kSmemBytes);

// The shared-A variant (kernels/gemm_ws_a64.cuh): tiles of one 64-row panel × 256 tokens.
template <int kType>
void launch_ws_a64(const detail::WsLaunch& a) {
  using Cfg = WsA64Cfg<WsLayout<kType>>;
  static const bool attr = [] {
    CUDA_CHECK(cudaFuncSetAttribute(reinterpret_cast<const void*>(&k_gemm_ws_a64<kType>),
                                    cudaFuncAttributeMaxDynamicSharedMemorySize, Cfg::kSmemBytes));
    return true;
  }();
  (void)attr;
  (void)ws_a64_launch_info_registered<kType>;
  WsParams p = ws_params<kType, Cfg::BN>(a);
  p.m_tiles = static_cast<int>((a.out_rows + Cfg::BM - 1) / Cfg::BM);  // 64-row panels, not 128-row pairs
  const CUtensorMap map = ws_x_tensor_map(a.x, a.T, a.K, Cfg::BN);
  const int64_t tiles = int64_t{p.m_tiles} * p.t_tiles;
  const unsigned grid = static_cast<unsigned>(std::min<int64_t>(tiles, ws_slots(a)));
  k_gemm_ws_a64<kType><<<grid, Cfg::kThreads, Cfg::kSmemBytes, a.stream>>>(map, p);
  CUDA_CHECK_LAUNCH();
}

template <int kType>
inline const bool ws_a64c2_launch_info_registered =
    register_ws_launch_info("k_gemm_ws_a64c2<" + std::to_string(kType) + ">", WsA64c2Cfg<WsLayout<kType>>::kThreads,
                            WsA64c2Cfg<WsLayout<kType>>::kSmemBytes);

// A launch of `kernel` on clusters of two CTAs along x.
struct WsClusterLaunch {
  cudaLaunchConfig_t cfg{};
  cudaLaunchAttribute attrs[1]{};
  WsClusterLaunch(unsigned ctas, int threads, int smem, cudaStream_t stream) {
    cfg.gridDim = dim3(ctas);
    cfg.blockDim = dim3(static_cast<unsigned>(threads));
    cfg.dynamicSmemBytes = static_cast<size_t>(smem);
    cfg.stream = stream;
    attrs[0].id = cudaLaunchAttributeClusterDimension;
    attrs[0].val.clusterDim.x = 2;
    attrs[0].val.clusterDim.y = 1;
    attrs[0].val.clusterDim.z = 1;
    cfg.attrs = attrs;
    cfg.numAttrs = 1;
  }
};

// Clusters of k_gemm_ws_a64c2 the current device runs at once (a GPC with an odd number of free
// SMs leaves one idle); 0 where no device answers (the host tests' pick). Sets the kernel's
// shared-memory attribute, which the occupancy query and the launch need.
template <int kType>
int ws_a64c2_resident_clusters() {
  using Cfg = WsA64c2Cfg<WsLayout<kType>>;
  static const int n = [] {
    const auto kernel = &k_gemm_ws_a64c2<kType>;
    int dev = 0, sms = 0, clusters = 0;
    if (cudaGetDevice(&dev) != cudaSuccess || cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev) != cudaSuccess ||
        cudaFuncSetAttribute(reinterpret_cast<const void*>(kernel), cudaFuncAttributeMaxDynamicSharedMemorySize,
                             Cfg::kSmemBytes) != cudaSuccess) {
      (void)cudaGetLastError();
      return 0;
    }
    WsClusterLaunch probe(static_cast<unsigned>(2 * sms), Cfg::kThreads, Cfg::kSmemBytes, nullptr);
    if (cudaOccupancyMaxActiveClusters(&clusters, kernel, &probe.cfg) != cudaSuccess) {
      (void)cudaGetLastError();
      return 0;
    }
    return clusters;
  }();
  return n;
}

// The shared-A tile on 2-CTA clusters (kernels/gemm_ws_a64.cuh, k_gemm_ws_a64c2): persistent
// clusters over panel pairs × 256 tokens, at most as many as run at once (no cluster waits for a
// first round to end).
template <int kType>
void launch_ws_a64c2(const detail::WsLaunch& a) {
  using Cfg = WsA64c2Cfg<WsLayout<kType>>;
  const auto kernel = &k_gemm_ws_a64c2<kType>;
  const int resident_clusters = ws_a64c2_resident_clusters<kType>();
  if (resident_clusters < 1) fail("gemm_ws: no 2-CTA cluster of k_gemm_ws_a64c2 fits this device");
  (void)ws_a64c2_launch_info_registered<kType>;
  const WsParams p = ws_params<kType, Cfg::BN>(a);  // m_tiles: 128-row pairs, one per cluster tile
  const CUtensorMap map = ws_x_tensor_map(a.x, a.T, a.K, Cfg::kHalfN);  // each CTA loads half the tokens
  const int64_t tiles = int64_t{p.m_tiles} * p.t_tiles;
  const int64_t clusters = std::min<int64_t>({tiles, resident_clusters, std::max(1, ws_slots(a) / 2)});
  WsClusterLaunch launch(static_cast<unsigned>(2 * clusters), Cfg::kThreads, Cfg::kSmemBytes, a.stream);
  CUDA_CHECK(cudaLaunchKernelEx(&launch.cfg, kernel, map, p));
  CUDA_CHECK_LAUNCH();
}

template <int kType, int kBN, int kCtasPerSm>
inline const bool ws_c2_launch_info_registered = register_ws_launch_info(
    "k_gemm_ws_c2<" + std::to_string(kType) + ", " + std::to_string(kBN) + ", " + std::to_string(kCtasPerSm) + ">",
    WsC2Cfg<kBN, WsLayout<kType>, kCtasPerSm>::kThreads, WsC2Cfg<kBN, WsLayout<kType>, kCtasPerSm>::kSmemBytes);

// The cluster variant: clusters of 2 CTAs (one per 64-row panel of a tile), persistent over tiles.
template <int kType, int kBN, int kCtasPerSm>
void launch_ws_c2(const detail::WsLaunch& a) {
  using L = WsLayout<kType>;
  using Cfg = WsC2Cfg<kBN, L, kCtasPerSm>;
  const auto kernel = &k_gemm_ws_c2<kType, kBN, kCtasPerSm>;
  static const bool attr = [kernel] {
    CUDA_CHECK(cudaFuncSetAttribute(reinterpret_cast<const void*>(kernel), cudaFuncAttributeMaxDynamicSharedMemorySize,
                                    Cfg::kSmemBytes));
    return true;
  }();
  (void)attr;
  (void)ws_c2_launch_info_registered<kType, kBN, kCtasPerSm>;
  const WsParams p = ws_params<kType, kBN>(a);
  const CUtensorMap map = ws_x_tensor_map(a.x, a.T, a.K, kBN / 2);  // each CTA loads half the rows
  const int64_t tiles = int64_t{p.m_tiles} * p.t_tiles;
  const int64_t clusters = std::min<int64_t>(tiles, std::max(1, ws_slots(a, kCtasPerSm) / 2));
  WsClusterLaunch launch(static_cast<unsigned>(2 * clusters), Cfg::kThreads, Cfg::kSmemBytes, a.stream);
  CUDA_CHECK(cudaLaunchKernelEx(&launch.cfg, kernel, map, p));
  CUDA_CHECK_LAUNCH();
}

template <int kType>
void launch_ws_repack(const void* a, const void* b, int64_t rows, int64_t cols, void* dst, cudaStream_t stream) {
  using L = WsLayout<kType>;
  const int64_t row_bytes = cols / L::kSrcBlockElems * L::kSrcBlockBytes;
  const WsRowSource src{static_cast<const uint8_t*>(a), static_cast<const uint8_t*>(b), rows, row_bytes};
  (void)ws_repack_launch_info_registered<kType>;
  const int64_t n_groups = cols / L::kGroupK, pairs = ws_pairs(src.out_rows());
  if (n_groups > 0x7FFFFFFF || pairs > 65535) fail("gemm_ws_repack: ", pairs, " row pairs × ", n_groups, " groups exceed the grid");
  const dim3 grid(static_cast<unsigned>(n_groups), static_cast<unsigned>(pairs));
  k_gemm_ws_repack<kType><<<grid, kWsRepackThreads, 0, stream>>>(src, n_groups, static_cast<uint32_t*>(dst));
  CUDA_CHECK_LAUNCH();
}

// gemm_ws_pick_variant's round costs (WsVariantInfo::round_cost), fitted to the H200 (q4_K, T = 512,
// K = 4096; docs/gemm-fast.md, session 11): a 128-token tile's round is 0.78 of a 256-token one
// (39.2 vs 50.1 µs: it issues more decode per MMA). The 2-CTA shared-A tile has none: measured
// slower than ws_n128 at every T = 512 shape (docs/gemm-fast.md, session 13).
inline constexpr double kWsN128RoundCost = 0.78, kWsN256RoundCost = 1.0;

template <int kType, int kBN, bool kSplit = false>
detail::WsVariantEntry ws_variant_entry(const char* name) {
  using Cfg = WsCfg<kBN, WsLayout<kType>>;
  WsVariantInfo info{name, kBN, Cfg::S, Cfg::kSmemBytes, 1, 1, Cfg::BM, kSplit};
  info.groups = true;
  info.round_cost = kBN < 256 ? kWsN128RoundCost : kWsN256RoundCost;
  return {info, &launch_ws<kType, kBN, kSplit>};
}

template <int kType>
detail::WsVariantEntry ws_a64_variant_entry(const char* name) {
  using Cfg = WsA64Cfg<WsLayout<kType>>;
  return {WsVariantInfo{name, Cfg::BN, Cfg::S, Cfg::kSmemBytes, 1, 1, Cfg::BM}, &launch_ws_a64<kType>};
}

template <int kType>
detail::WsVariantEntry ws_a64c2_variant_entry(const char* name) {
  using Cfg = WsA64c2Cfg<WsLayout<kType>>;
  WsVariantInfo info{name, Cfg::BN, Cfg::S, Cfg::kSmemBytes, 2, 1, 128};
  info.groups = true;  // round_cost 0: never picked
  return {info, &launch_ws_a64c2<kType>, &ws_a64c2_resident_clusters<kType>};
}

template <int kType, int kBN, int kCtasPerSm>
detail::WsVariantEntry ws_c2_variant_entry(const char* name) {
  using Cfg = WsC2Cfg<kBN, WsLayout<kType>, kCtasPerSm>;
  return {WsVariantInfo{name, kBN, Cfg::S, Cfg::kSmemBytes, 2, kCtasPerSm}, &launch_ws_c2<kType, kBN, kCtasPerSm>};
}

template <int kType>
detail::WsTypeEntry ws_type_entry() {
  using L = WsLayout<kType>;
  return {{ws_variant_entry<kType, 128>("ws_n128"), ws_variant_entry<kType, 256>("ws_n256"),
           ws_c2_variant_entry<kType, 256, 1>("ws_c2_n256"), ws_c2_variant_entry<kType, 256, 2>("ws_c2x2_n256"),
           ws_a64_variant_entry<kType>("ws_a64_n256"), ws_variant_entry<kType, 128, true>("ws_sk_n128"),
           ws_variant_entry<kType, 256, true>("ws_sk_n256"), ws_a64c2_variant_entry<kType>("ws_a64c2_n256")},
          &launch_ws_repack<kType>,
          L::kGroupK,
          ws_group_bytes<L>()};
}

}  // namespace pfx::kernels::dev

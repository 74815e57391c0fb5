// Host launch of one k_gemm_mma / k_gemm_wgmma instantiation: fills GemmParams, raises the dynamic
// shared-memory limit from the config's constant, launches on the caller's stream, checks it.
// Included by the per-type instantiation files only. Every instantiation registers its launch
// shape (gemm_fast_launch_info.cuh) for kernel-resources.json.
#pragma once
#include <cstdint>
#include <vector>

#include "kernels/cuda_check.h"
#include "kernels/gemm_fast_internal.h"
#include "kernels/gemm_fast_kernel.cuh"
#include "kernels/gemm_fast_launch_info.cuh"
#include "kernels/sm90.h"

namespace pfx::kernels::dev {

template <class Cfg, class W, bool kSwi>
__global__ void __launch_bounds__(Cfg::kThreads, Cfg::kMinBlocks) k_gemm_mma(const GemmParams p) {
  gemm_fast_body<Cfg, W, kSwi>(p);
}
template <class Cfg, class W, bool kSwi>
__global__ void __launch_bounds__(Cfg::kThreads, Cfg::kMinBlocks) k_gemm_wgmma(const GemmParams p) {
  gemm_fast_body<Cfg, W, kSwi>(p);
}

template <class Cfg, class W, bool kSwi>
__global__ void __launch_bounds__(Cfg::kThreads, Cfg::kMinBlocks) k_gemm_wgmma_pipe(const GemmParams p) {
  gemm_fast_body_pipe<Cfg, W, kSwi>(p);
}

template <class Cfg, class W, bool kSwi>
void launch_gemm(const detail::GemmLaunch& a) {
  constexpr int kSmem = Cfg::template smem_bytes<W>();
  static_assert(kSmem <= ::pfx::kernels::sm90::kMaxSmemPerBlock, "tile + pipeline exceed 227 KiB of shared memory");
  static_assert(Cfg::kMinBlocks * (kSmem + 1024) <= ::pfx::kernels::sm90::kSmemPerSm,
                "kMinBlocks blocks of this config cannot share one SM's shared memory");
  static_assert(Cfg::kMinBlocks * Cfg::kThreads * 32 <= ::pfx::kernels::sm90::kRegistersPerSm || Cfg::kMinBlocks == 1,
                "kMinBlocks leaves fewer than 32 registers per thread");
  void (*const kernel)(GemmParams) = [] {
    if constexpr (Cfg::kPipelined)
      return &k_gemm_wgmma_pipe<Cfg, W, kSwi>;
    else if constexpr (Cfg::kWgmma)
      return &k_gemm_wgmma<Cfg, W, kSwi>;
    else
      return &k_gemm_mma<Cfg, W, kSwi>;
  }();
  // Once per instantiation (and process): the attribute is a property of the function.
  static const bool smem_raised = [kernel] {
    CUDA_CHECK(cudaFuncSetAttribute(reinterpret_cast<const void*>(kernel),
                                    cudaFuncAttributeMaxDynamicSharedMemorySize, kSmem));
    // All of the unified L1 as shared memory, so kMinBlocks CTAs fit: the kernels stage through
    // cp.async.cg (L2 only) and barely use L1.
    CUDA_CHECK(cudaFuncSetAttribute(reinterpret_cast<const void*>(kernel),
                                    cudaFuncAttributePreferredSharedMemoryCarveout, cudaSharedmemCarveoutMaxShared));
    return true;
  }();
  (void)smem_raised;
  // Names the registration so that it exists for exactly the kernels instantiated here.
  (void)gemm_launch_info_registered<Cfg, W, kSwi>;

  GemmParams p{};
  p.w[0] = static_cast<const uint8_t*>(a.w0);
  p.w[1] = static_cast<const uint8_t*>(kSwi ? a.w1 : a.w0);
  p.w_end[0] = p.w[0] + a.N * a.row_bytes;
  p.w_end[1] = p.w[1] + a.N * a.row_bytes;
  p.row_bytes = a.row_bytes;
  p.rb16 = static_cast<int>(a.row_bytes % 16);
  p.n_rows = static_cast<int>(a.N);
  p.x = a.x;
  p.T = static_cast<int>(a.T);
  p.K = static_cast<int>(a.K);
  p.y = a.y;
  p.mode = kSwi ? kSwiglu : a.mode;
  const int64_t cols_per_tile = kSwi ? Cfg::BN / 2 : Cfg::BN;
  const dim3 grid(static_cast<unsigned>((a.T + Cfg::BT - 1) / Cfg::BT),
                  static_cast<unsigned>((a.N + cols_per_tile - 1) / cols_per_tile));
  kernel<<<grid, Cfg::kThreads, kSmem, a.stream>>>(p);
  CUDA_CHECK_LAUNCH();
}

// A variant's name, made from its configuration so that the two cannot disagree:
// mma_t<BT>_n<BN>_w<warps>_s<stages>, wgmma_t<BT>_n<BN>_s<stages>, wgp_t<BT>_n<BN>_d<lookahead>.
struct VariantName {
  char text[40] = {};
  int len = 0;
  constexpr void add(const char* s) {
    while (*s) text[len++] = *s++;
  }
  constexpr void add(int v) {
    char digits[12] = {};
    int n = 0;
    do digits[n++] = static_cast<char>('0' + v % 10);
    while ((v /= 10) > 0);
    while (n > 0) text[len++] = digits[--n];
  }
};
template <class Cfg>
constexpr VariantName variant_name() {
  VariantName v;
  v.add(Cfg::kPipelined ? "wgp_t" : Cfg::kWgmma ? "wgmma_t" : "mma_t");
  v.add(Cfg::BT);
  v.add("_n");
  v.add(Cfg::BN);
  if constexpr (Cfg::kPipelined) {
    v.add("_d");
    v.add(Cfg::D);
  } else {
    if constexpr (!Cfg::kWgmma) {
      v.add("_w");
      v.add(Cfg::kWarps);
    }
    v.add("_s");
    v.add(Cfg::S);
  }
  return v;
}
template <class Cfg>
inline constexpr VariantName kVariantName = variant_name<Cfg>();

template <class Cfg, class W>
detail::GemmVariantEntry variant_entry() {
  GemmVariantInfo info{kVariantName<Cfg>.text,
                       gemm_kernel_family<Cfg>(),
                       Cfg::BT,
                       Cfg::BN,
                       Cfg::S,
                       Cfg::kThreads,
                       Cfg::template smem_bytes<W>(),
                       Cfg::kWgmma};
  return detail::GemmVariantEntry{info, &launch_gemm<Cfg, W, false>, &launch_gemm<Cfg, W, true>};
}

// The variant table of weight type W: one entry per configuration, in the order given (the index
// the *_variant functions take). Each per-type file (gemm_fast_q4k.cu ...) instantiates one.
template <class W, class... Cfgs>
const std::vector<detail::GemmVariantEntry>& variant_table() {
  static const std::vector<detail::GemmVariantEntry> v = {variant_entry<Cfgs, W>()...};
  return v;
}

// The tile configurations (GemmCfg<BT, BN, warps along T, warps along N, stages, wgmma, min blocks/SM>).
using CfgMmaW8S4 = GemmCfg<128, 128, 2, 4, 4, false, 1>;   // 8 warps of 64×32
using CfgMmaW8S3 = GemmCfg<128, 128, 2, 4, 3, false, 1>;
using CfgMmaW4S3 = GemmCfg<128, 128, 2, 2, 3, false, 2>;   // 4 warps of 64×64, 2 CTAs/SM
using CfgWgN128S3 = GemmCfg<128, 128, 1, 1, 3, true, 2>;   // 2 warpgroups, m64n128, 2 CTAs/SM
using CfgWgN128S3x1 = GemmCfg<128, 128, 1, 1, 3, true, 1>;  // same, where 2 CTAs do not fit
using CfgWgN128S4 = GemmCfg<128, 128, 1, 1, 4, true, 1>;
using CfgWgN256S3 = GemmCfg<128, 256, 1, 1, 3, true, 1>;   // m64n256
// Pipelined wgmma (GemmPipeCfg<BT, BN, lookahead D, min blocks/SM>): D+2 X stages, D+1 raw stages.
using CfgPipeT128D2 = GemmPipeCfg<128, 128, 2, 1>;
using CfgPipeT128D3 = GemmPipeCfg<128, 128, 3, 1>;
using CfgPipeT256D2 = GemmPipeCfg<256, 128, 2, 1>;         // 4 warpgroups, 512 threads
using CfgPipeT128N256D2 = GemmPipeCfg<128, 256, 2, 1>;

}  // namespace pfx::kernels::dev

// Launch-shape registration (kernels/launch_info.h) of the fast-GEMM kernels: k_gemm_mma /
// k_gemm_wgmma / k_gemm_wgmma_pipe<Cfg, W, kSwi> and k_gemv_fast<W, kT>. The kernels are templates
// instantiated from variant lists, so the registry name is spelled from the template arguments
// here, exactly as c++filt prints it without namespaces ("k_gemm_wgmma_pipe<GemmPipeCfg<256, 128,
// 2, 1>, WeightF16, true>"), and the figures come from the very config the launcher uses. A
// launcher names gemm_launch_info_registered<...> / gemv_launch_info_registered<...>, so every
// instantiated kernel registers itself at static initialisation and nothing is listed twice; a
// misspelt name fails the build in scripts/ptxas_resources.py (no compiled kernel matches it).
#pragma once
#include <string>
#include <type_traits>

#include "kernels/gemm_fast_kernel.cuh"
#include "kernels/gemm_fast_weights.cuh"
#include "kernels/launch_info.h"

namespace pfx::kernels::dev {

// "name<a, b, ...>" with c++filt's spelling of each argument (ints in decimal, bools as words).
template <class... Args>
std::string template_id(const char* name, const Args&... args) {
  std::string s = name;
  s += '<';
  bool first = true;
  const auto append = [&](const auto& a) {
    using A = std::decay_t<decltype(a)>;
    if (!first) s += ", ";
    first = false;
    if constexpr (std::is_same_v<A, bool>)
      s += a ? "true" : "false";
    else if constexpr (std::is_integral_v<A>)
      s += std::to_string(a);
    else
      s += a;  // an already spelled type name
  };
  (append(args), ...);
  s += '>';
  return s;
}

// The type names as they appear inside the kernels' template argument lists. Left undefined for
// an unknown type, so a new config template or weight format cannot compile without its name.
template <class T>
struct GemmTypeName;
template <int kBT, int kBN, int kWarpsT, int kWarpsN, int kStages, bool kUseWgmma, int kMinBlocksPerSm>
struct GemmTypeName<GemmCfg<kBT, kBN, kWarpsT, kWarpsN, kStages, kUseWgmma, kMinBlocksPerSm>> {
  static std::string get() {
    return template_id("GemmCfg", kBT, kBN, kWarpsT, kWarpsN, kStages, kUseWgmma, kMinBlocksPerSm);
  }
};
template <int kBT, int kBN, int kLookahead, int kMinBlocksPerSm>
struct GemmTypeName<GemmPipeCfg<kBT, kBN, kLookahead, kMinBlocksPerSm>> {
  static std::string get() { return template_id("GemmPipeCfg", kBT, kBN, kLookahead, kMinBlocksPerSm); }
};
// Stringified from the type itself, so the spelling cannot drift from the identifier.
#define PFX_GEMM_WEIGHT_TYPE_NAME(W) \
  template <>                        \
  struct GemmTypeName<W> {           \
    static std::string get() { return #W; } \
  }
PFX_GEMM_WEIGHT_TYPE_NAME(WeightQ4K);
PFX_GEMM_WEIGHT_TYPE_NAME(WeightQ6K);
PFX_GEMM_WEIGHT_TYPE_NAME(WeightQ8_0);
PFX_GEMM_WEIGHT_TYPE_NAME(WeightF16);
#undef PFX_GEMM_WEIGHT_TYPE_NAME

// Which of the three GEMM kernel templates launch_gemm runs for a config.
template <class Cfg>
constexpr const char* gemm_kernel_family() {
  if constexpr (Cfg::kPipelined)
    return "k_gemm_wgmma_pipe";
  else if constexpr (Cfg::kWgmma)
    return "k_gemm_wgmma";
  else
    return "k_gemm_mma";
}

// Registers the launch shape under `name` (kept alive by the caller's function-local static).
inline bool register_gemm_family_launch_info(const std::string& name, int threads, int dynamic_smem) {
  return ::pfx::kernels::register_launch_info(
      ::pfx::kernels::LaunchInfo{name.c_str(), threads, dynamic_smem, __FILE__});
}

template <class Cfg, class W, bool kSwi>
bool register_gemm_launch_info() {
  static const std::string name =
      template_id(gemm_kernel_family<Cfg>(), GemmTypeName<Cfg>::get(), GemmTypeName<W>::get(), kSwi);
  return register_gemm_family_launch_info(name, Cfg::kThreads, Cfg::template smem_bytes<W>());
}

// kThreads / kDynamicSmem: the block size and dynamic shared memory the gemv launcher passes.
template <class W, int kT, int kThreads, int kDynamicSmem>
bool register_gemv_launch_info() {
  static const std::string name = template_id("k_gemv_fast", GemmTypeName<W>::get(), kT);
  return register_gemm_family_launch_info(name, kThreads, kDynamicSmem);
}

// Initialised once per program for each instantiation a launcher names.
template <class Cfg, class W, bool kSwi>
inline const bool gemm_launch_info_registered = register_gemm_launch_info<Cfg, W, kSwi>();
template <class W, int kT, int kThreads, int kDynamicSmem>
inline const bool gemv_launch_info_registered = register_gemv_launch_info<W, kT, kThreads, kDynamicSmem>();

}  // namespace pfx::kernels::dev

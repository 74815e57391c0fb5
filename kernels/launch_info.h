// Launch shape of every kernel (threads per block, dynamic shared memory), registered next to the
// kernel from its constexpr config struct. ptxas reports registers/spills/static smem but not
// these; the build's kernel-resources.json joins the two (scripts/ptxas_resources.py reads what
// `pfx_kernel_launch_info` prints from this registry), so the config struct stays the one source.
//
// Usage, at namespace scope in the kernel's .cu file (name = the kernel as c++filt prints it,
// without return type, parameters and any namespace/class qualifiers, template arguments
// included: "k_attn_flash_prefill<128>", "k_gemv_fast<WeightQ8_0, 8>"):
//   PFX_KERNEL_LAUNCH_INFO("k_rmsnorm_warp", RmsnormWarpCfg::kThreads, 0);
#pragma once
#include <vector>

namespace pfx::kernels {

struct LaunchInfo {
  const char* name;         // demangled kernel name without namespace/parameters
  int threads_per_block;
  int dynamic_smem_bytes;
  const char* source;       // __FILE__ of the registration
};

// Adds to the registry; returns true so it can initialise a static.
bool register_launch_info(const LaunchInfo& info);
// Everything registered by the object files linked into this program.
const std::vector<LaunchInfo>& launch_infos();

}  // namespace pfx::kernels

#define PFX_LAUNCH_INFO_CAT2(a, b) a##b
#define PFX_LAUNCH_INFO_CAT(a, b) PFX_LAUNCH_INFO_CAT2(a, b)
#define PFX_KERNEL_LAUNCH_INFO(name, threads, dyn_smem)                                   \
  [[maybe_unused]] static const bool PFX_LAUNCH_INFO_CAT(pfx_launch_info_, __COUNTER__) =     \
      ::pfx::kernels::register_launch_info(                                                \
          ::pfx::kernels::LaunchInfo{name, static_cast<int>(threads), static_cast<int>(dyn_smem), __FILE__})

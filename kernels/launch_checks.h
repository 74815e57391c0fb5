// Host-side helpers shared by the launchers: precondition checks that throw pfx::Error with the
// launcher's name, and the dynamic-shared-memory opt-in (STYLE.md habit 4).
#pragma once
#include <cstdint>

#include <cuda_runtime_api.h>

#include "kernels/cuda_check.h"
#include "kernels/sm90.h"
#include "util/error.h"

namespace pfx::kernels::detail {

// require(cond, "attention_fast: ", "head_dim ", hd, " is not 64 or 128")
template <class... Args>
inline void require(bool cond, const Args&... what) {
  if (!cond) fail(what...);
}

inline bool is_aligned(const void* p, uintptr_t bytes) {
  return (reinterpret_cast<uintptr_t>(p) % bytes) == 0;
}

// Raises a kernel's dynamic shared-memory limit to `bytes` (its config's constant) when that is
// above the 48 KiB default. Called before each such launch: cheap, not a stream operation (legal
// while a CUDA graph is being captured), and right for whichever device is current.
template <class Kernel>
inline void set_dynamic_smem(Kernel* kernel, int bytes) {
  if (bytes <= sm90::kDefaultSmemPerBlock) return;
  CUDA_CHECK(cudaFuncSetAttribute(reinterpret_cast<const void*>(kernel),
                                  cudaFuncAttributeMaxDynamicSharedMemorySize, bytes));
}

// Grid size for a grid-stride loop over n work items with `threads` per block: enough blocks to
// fill the GPU several times over, never more than the work needs.
inline unsigned grid_for(int64_t n, int threads, int64_t max_blocks = 132 * 32) {
  int64_t blocks = (n + threads - 1) / threads;
  if (blocks > max_blocks) blocks = max_blocks;
  if (blocks < 1) blocks = 1;
  return static_cast<unsigned>(blocks);
}

}  // namespace pfx::kernels::detail

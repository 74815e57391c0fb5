// Host side of programmatic dependent launch (device side: pdl_wait / pdl_launch_dependents in
// kernels/ptx.cuh). launch_pdl starts a kernel that may begin while the previous kernel of its
// stream still runs: its blocks do the work that reads nothing an earlier kernel writes (the decode
// GEMV fetches its first weights), then wait in pdl_wait() for the earlier grids' end. Only kernels
// that call pdl_wait() before touching activations may be launched this way: a kernel that skipped
// it could end, and let later kernels start, before the kernel it depends on has finished.
// Inside stream capture the dependency becomes a programmatic edge of the graph.
#pragma once
#include <cuda_runtime.h>

#include <utility>

#include "kernels/cuda_check.h"

namespace pfx::kernels::detail {

template <class... Params, class... Args>
void launch_pdl(void (*kernel)(Params...), dim3 grid, dim3 block, size_t smem, cudaStream_t stream, Args&&... args) {
  cudaLaunchAttribute attr{};
  attr.id = cudaLaunchAttributeProgrammaticStreamSerialization;
  attr.val.programmaticStreamSerializationAllowed = 1;
  cudaLaunchConfig_t cfg{};
  cfg.gridDim = grid;
  cfg.blockDim = block;
  cfg.dynamicSmemBytes = smem;
  cfg.stream = stream;
  cfg.attrs = &attr;
  cfg.numAttrs = 1;
  CUDA_CHECK(cudaLaunchKernelEx(&cfg, kernel, std::forward<Args>(args)...));
}

}  // namespace pfx::kernels::detail

// The host side of launching a GQA-packed flash prefill kernel (variants 1 and 2,
// attention_flash_pipe.cu and attention_flash_wg.cu): both take the same arguments on the same
// grid, (H / p, query tiles of 64 / p tokens), p = 1 << flash_pack_log2(4 warps, H / Hkv), the
// longest tiles first (the kernels read blockIdx.y backwards). Include only from .cu files.
#pragma once
#include <cuda_runtime_api.h>

#include "kernels/attention_shared.h"
#include "kernels/cuda_check.h"
#include "kernels/kernels.h"
#include "kernels/launch_checks.h"

namespace pfx::kernels::detail {

// log2 of the heads per block: the largest power of two dividing both G = H / Hkv and the warps.
inline int flash_pack_log2(int warps, int G) {
  int l = 0;
  while ((2 << l) <= warps && G % (2 << l) == 0) ++l;
  return l;
}

using FlashPackedKernel = void (*)(const uint16_t*, const uint16_t*, const uint16_t*, uint16_t*, int, int, int, int,
                                   int, float, int);

// Launch `kernel` (4 warps per block, `smem` bytes of dynamic shared memory) over a's rows.
inline void launch_flash_packed(FlashPackedKernel kernel, int threads, int smem, const AttentionArgs& a,
                                cudaStream_t stream) {
  const int pack_log2 = flash_pack_log2(4, a.H / a.Hkv);
  const int tokens = (4 >> pack_log2) * 16;
  const dim3 grid(static_cast<unsigned>(a.H >> pack_log2), static_cast<unsigned>((a.T + tokens - 1) / tokens));
  require(grid.y <= 65535u, "attention_flash_prefill: grid.y ", grid.y, " exceeds 65535");
  set_dynamic_smem(kernel, smem);
  // A hint that the SM's memory go to shared memory, so the kernel's minimum of blocks per SM fits
  // whatever carveout the driver would pick by itself.
  CUDA_CHECK(cudaFuncSetAttribute(reinterpret_cast<const void*>(kernel), cudaFuncAttributePreferredSharedMemoryCarveout,
                                  cudaSharedmemCarveoutMaxShared));
  kernel<<<grid, threads, smem, stream>>>(a.q16, a.k_cache, a.v_cache, a.o16, a.T, a.H, a.Hkv, a.p0, a.max_ctx,
                                          attention_score_scale(a.hd), pack_log2);
  CUDA_CHECK_LAUNCH();
}

}  // namespace pfx::kernels::detail

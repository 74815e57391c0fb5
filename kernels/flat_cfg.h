// Launch config shared by the flat kernels (elementwise.cu, embed.cu, dequant.cu): a 1-D block of
// Threads threads, each taking ElemsPerThread consecutive elements per step of its loop (one or
// two 16-byte accesses). STYLE.md habit 4: the shape lives in one constexpr struct, asserted
// against the sm_90 block limit.
#pragma once

#include "kernels/sm90.h"

namespace pfx::kernels {

template <int Threads, int ElemsPerThread>
struct FlatCfg {
  static constexpr int kThreads = Threads;
  static constexpr int kElemsPerThread = ElemsPerThread;
  static_assert(sm90::is_warp_block(kThreads), "flat kernel: whole warps, within the block limit");
  static_assert(kElemsPerThread > 0, "flat kernel: at least one element per thread");
};

}  // namespace pfx::kernels

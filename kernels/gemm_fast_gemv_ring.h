// The decode mat-vec's ring kernel (kernels/gemm_fast_gemv_ring.cu), for gemm_fast_gemv.cu's
// launchers: the same GemvJob as the direct kernel, the same bits as direct_w<warps>.
#pragma once
#include <cuda_runtime.h>

#include <cstdint>

namespace pfx::kernels::dev {

struct GemvJob;

// Whether the ring kernel can stream every part of `job`: K a multiple of 256 and each matrix's
// first and last byte bounds 16-byte aligned (its stage windows then stay inside the matrix).
bool gemv_ring_takes(const GemvJob& job);

// Launches k_gemv_ring with `warps` consumer warps (4 or 8; q4_K also 16) when it takes
// the type, T (1 only) and the job; false, launching nothing, otherwise.
bool launch_gemv_ring(uint32_t ggml_type, const GemvJob& job, int T, int warps, cudaStream_t stream);

}  // namespace pfx::kernels::dev

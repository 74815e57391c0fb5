// The compiled variants of the fast quantized GEMM (tile shape, pipeline depth, mma.sync or
// wgmma), for tests that must check every one and the benchmark that times them side by side.
// gemm_fast() itself runs gemm_fast_pick_variant()'s choice. Plain C++.
#pragma once
#include <cuda_runtime_api.h>

#include <cstdint>
#include <vector>

#include "kernels/gemm_fast.h"

namespace pfx::kernels {

struct GemmVariantInfo {
  const char* name;    // e.g. "wgmma_t128_n128_s3"
  const char* kernel;  // kernel family: k_gemm_mma or k_gemm_wgmma
  int tile_t, tile_n;  // CTA tile: tokens × weight rows (k-tile is 64)
  int stages;          // cp.async pipeline depth
  int threads;         // threads per block
  int smem_bytes;      // dynamic shared memory per block
  bool wgmma;          // sm_90a warpgroup MMA (else mma.sync m16n8k16)
};

// Every compiled variant for a weight type (q4_K, q6_K, q8_0, f16: the lists differ where a
// tile does not fit shared memory), in a fixed order; the index is what the *_variant functions take.
const std::vector<GemmVariantInfo>& gemm_fast_variants(uint32_t ggml_type);

// The variant gemm_fast / gemm_fast_swiglu would run for this call.
int gemm_fast_pick_variant(uint32_t ggml_type, int64_t T, int64_t N, int64_t K);
int gemm_fast_swiglu_pick_variant(uint32_t ggml_type, int64_t T, int64_t N, int64_t K);

// gemm_fast / gemm_fast_swiglu with the variant chosen by the caller. Same preconditions.
void gemm_fast_variant(int variant, const QuantMatrixView& w, const uint16_t* x16, int64_t T, void* y,
                       GemmEpilogue epilogue, cudaStream_t stream);
void gemm_fast_swiglu_variant(int variant, const QuantMatrixView& gate, const QuantMatrixView& up,
                              const uint16_t* x16, int64_t T, uint16_t* a16, cudaStream_t stream);

}  // namespace pfx::kernels

// Internals shared by the fast-GEMM translation units (gemm_fast.cu: host API and dispatch;
// gemm_fast_q4k.cu / _q6k.cu / _q8_0.cu / _f16.cu: kernel instantiations per weight type;
// gemm_fast_gemv.cu).
// Plain C++.
#pragma once
#include <cuda_runtime_api.h>

#include <cstdint>
#include <string>
#include <vector>

#include "kernels/gemm_fast.h"
#include "kernels/gemm_fast_variants.h"

namespace pfx::kernels::detail {

// One launch, shapes already validated by the caller.
struct GemmLaunch {
  const void* w0;      // weights (SwiGLU: gate)
  const void* w1;      // SwiGLU: up; else nullptr
  int64_t row_bytes;   // bytes per weight row
  int64_t N, K, T;
  const uint16_t* x;   // [T, K] fp16
  void* y;             // [T, N]
  int mode;            // dev::EpilogueMode
  cudaStream_t stream;
};
using GemmLaunchFn = void (*)(const GemmLaunch&);

struct GemmVariantEntry {
  GemmVariantInfo info;
  GemmLaunchFn plain;
  GemmLaunchFn swiglu;
};

const std::vector<GemmVariantEntry>& gemm_variants_q4k();
const std::vector<GemmVariantEntry>& gemm_variants_q6k();
const std::vector<GemmVariantEntry>& gemm_variants_q8_0();
const std::vector<GemmVariantEntry>& gemm_variants_f16();

// Decode mat-vec, 1 <= T <= kGemvMaxT (gemm_fast_gemv.cu); kernel: a GemvKernel (gemm_fast.h),
// already checked to take the type.
void gemv_launch(uint32_t ggml_type, int kernel, const GemmLaunch& a);

// Warps per block of the direct kernel when gemv_fast chooses (Auto) for this shape: they fix the
// order in which each output is summed, so matrices share a launch only where their picks agree.
int gemv_direct_warps(uint32_t ggml_type, int64_t T, int64_t N, int64_t K);

// One matrix of a grouped decode launch: its weights, shape and output.
struct GemvPartLaunch {
  const void* w;
  int64_t row_bytes, N;
  void* y;
  int mode;       // dev::EpilogueMode
  int heads = 0;  // dev::kGemvHeadRotate | dev::kGemvHeadCache: y holds the attention's fp16 inputs
};
// The checks gemv_fast_group_heads and gemv_ws_group_heads share: part i has rows[i] rows and
// rotates or not; empty when the rope target takes T tokens of those parts.
std::string gemv_heads_reason(const std::vector<int64_t>& rows, const std::vector<bool>& rotates, int64_t T,
                              const GemvRopeTarget& rope);
// dev::EpilogueMode of an epilogue (the decode kernels' `mode`).
int gemv_mode_of(GemmEpilogue e);
// Throws pfx::Error naming fn unless x16 (16-byte aligned) and y (y_align-byte aligned) are usable.
void check_gemv_pointers(const char* fn, const uint16_t* x16, const void* y, uint64_t y_align);

// The direct kernel on parts [parts, parts + n) of one K-quant type and one K in one launch
// (n <= 3), or a SwiGLU pair (n = 2: gate, up; y of part 0 = a16); validated by the caller.
// heads: where the parts that store heads store (validated), else nullptr.
void gemv_group_launch(uint32_t ggml_type, const GemvPartLaunch* parts, int n, bool swiglu, int64_t K,
                       const uint16_t* x, int64_t T, cudaStream_t stream, const GemvRopeTarget* heads = nullptr);

}  // namespace pfx::kernels::detail

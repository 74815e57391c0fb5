// Y[T,N] = X16[T,K] · fp16(dequant(W[N,K]))ᵀ with fp32 accumulation, on either path, inside the
// NVTX range named after the weight tensor. Generic: dequantize W to fp16 scratch + cublasGemmEx.
// Fast: the fused quantized kernels (kernels/gemm_fast.h), falling back to generic with a logged
// reason when a call is outside their preconditions.
#pragma once
#include <cuda_runtime_api.h>

#include <cstdint>
#include <set>
#include <string>
#include <vector>

#include "cuda/device_buffer.h"

struct cublasContext;

namespace pfx::cuda {

struct DeviceMatrix {
  std::string name;  // GGUF tensor name
  uint32_t ggml_type = 0;
  int64_t rows = 0, cols = 0;  // N rows of K elements
  DeviceBuffer buffer;         // raw GGUF blocks
};

enum class Epilogue { StoreF32, AccumulateF32, StoreF16 };

class GemmDispatch {
 public:
  GemmDispatch() = default;
  ~GemmDispatch();
  GemmDispatch(const GemmDispatch&) = delete;  // owns a cuBLAS handle
  GemmDispatch& operator=(const GemmDispatch&) = delete;

  void init(cudaStream_t stream, bool fast);
  void reserve_weight_scratch(int64_t elements);
  // `range` names the NVTX range (e.g. "blk.3.attn_q"); FLOPs = 2·T·N·K.
  void run(const std::string& range, const DeviceMatrix& w, const uint16_t* x16, int T, void* y, Epilogue e);
  // Fast path only: a16 = fp16(silu(X·Wgᵀ) ⊙ (X·Wuᵀ)) in one fused kernel. Returns false (nothing
  // launched) where the fused kernel does not apply; the caller then runs the unfused sequence.
  bool run_swiglu(const std::string& range, const DeviceMatrix& gate, const DeviceMatrix& up, const uint16_t* x16,
                  int T, uint16_t* a16);
  void note_fallback(const std::string& reason);
  const std::vector<std::string>& fallbacks() const { return fallbacks_; }
  cublasContext* cublas() const { return handle_; }

 private:
  void run_generic(const DeviceMatrix& w, const uint16_t* x16, int T, void* y, Epilogue e);

  cudaStream_t stream_ = nullptr;
  bool fast_ = false;
  cublasContext* handle_ = nullptr;
  DeviceBuffer weight_f16_;  // generic path: the current weight, dequantized
  DeviceBuffer cublas_workspace_;
  std::set<std::string> seen_;
  std::vector<std::string> fallbacks_;
};

}  // namespace pfx::cuda

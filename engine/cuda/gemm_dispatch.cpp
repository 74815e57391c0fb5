#include "cuda/gemm_dispatch.h"

#include <cublas_v2.h>

#include <iostream>

#include "cuda/nvtx_range.h"
#include "kernels/cuda_check.h"
#include "kernels/gemm_fast.h"
#include "kernels/kernels.h"
#include "util/error.h"

namespace pfx::cuda {

namespace {
// cuBLAS wants a workspace of its own when it runs on a user stream; 32 MiB covers Hopper's needs.
constexpr size_t kCublasWorkspaceBytes = 32u << 20;

kern::GemmEpilogue to_fast(Epilogue e) {
  switch (e) {
    case Epilogue::StoreF32: return kern::GemmEpilogue::StoreF32;
    case Epilogue::AccumulateF32: return kern::GemmEpilogue::AccumulateF32;
    case Epilogue::StoreF16: return kern::GemmEpilogue::StoreF16;
  }
  return kern::GemmEpilogue::StoreF32;
}

kern::QuantMatrixView view(const DeviceMatrix& w) { return {w.buffer.as(), w.ggml_type, w.rows, w.cols}; }
}  // namespace

GemmDispatch::~GemmDispatch() {
  if (handle_) cublasDestroy(handle_);
}

void GemmDispatch::init(cudaStream_t stream, bool fast) {
  stream_ = stream;
  fast_ = fast;
  CUBLAS_CHECK(cublasCreate(&handle_));
  CUBLAS_CHECK(cublasSetStream(handle_, stream));
  cublas_workspace_ = DeviceBuffer(kCublasWorkspaceBytes);
  CUBLAS_CHECK(cublasSetWorkspace(handle_, cublas_workspace_.as(), kCublasWorkspaceBytes));
  // Deterministic and exact fp16 products with fp32 accumulation: no reduced-precision reductions.
  CUBLAS_CHECK(cublasSetMathMode(handle_, CUBLAS_DEFAULT_MATH));
}

void GemmDispatch::reserve_weight_scratch(int64_t elements) {
  if (weight_f16_.bytes() < static_cast<size_t>(elements) * 2) weight_f16_ = DeviceBuffer(static_cast<size_t>(elements) * 2);
}

void GemmDispatch::note_fallback(const std::string& reason) {
  if (seen_.insert(reason).second) {
    fallbacks_.push_back(reason);
    std::cerr << "prefill: fast path falls back to generic: " << reason << "\n";
  }
}

void GemmDispatch::run_generic(const DeviceMatrix& w, const uint16_t* x16, int T, void* y, Epilogue e) {
  kernels::dequant_to_f16(w.ggml_type, w.buffer.as(), weight_f16_.as<uint16_t>(), w.rows, w.cols, stream_);
  // Row-major Y[T,N] = X[T,K]·W[N,K]ᵀ is column-major Yᵀ[N,T] = W·Xᵀ: W is a column-major K×N
  // matrix (ld K) used transposed, X a column-major K×T matrix (ld K).
  const float alpha = 1.0f, beta = e == Epilogue::AccumulateF32 ? 1.0f : 0.0f;
  const cudaDataType_t ctype = e == Epilogue::StoreF16 ? CUDA_R_16F : CUDA_R_32F;
  CUBLAS_CHECK(cublasGemmEx(handle_, CUBLAS_OP_T, CUBLAS_OP_N, static_cast<int>(w.rows), T, static_cast<int>(w.cols),
                            &alpha, weight_f16_.as(), CUDA_R_16F, static_cast<int>(w.cols), x16, CUDA_R_16F,
                            static_cast<int>(w.cols), &beta, y, ctype, static_cast<int>(w.rows), CUBLAS_COMPUTE_32F,
                            CUBLAS_GEMM_DEFAULT));
}

void GemmDispatch::run(const std::string& range, const DeviceMatrix& w, const uint16_t* x16, int T, void* y,
                       Epilogue e) {
  NvtxRange r(range, 2ull * static_cast<uint64_t>(T) * w.rows * w.cols);
  if (fast_) {
    const std::string why = kern::gemm_fast_unsupported_reason(view(w), T);
    if (why.empty()) {
      if (T <= kern::kGemvMaxT)
        kern::gemv_fast(view(w), x16, T, y, to_fast(e), stream_);
      else
        kern::gemm_fast(view(w), x16, T, y, to_fast(e), stream_);
      return;
    }
    note_fallback(w.name + " (T=" + std::to_string(T) + "): " + why);
  }
  run_generic(w, x16, T, y, e);
}

bool GemmDispatch::run_swiglu(const std::string& range, const DeviceMatrix& gate, const DeviceMatrix& up,
                              const uint16_t* x16, int T, uint16_t* a16) {
  if (!fast_) return false;
  const std::string why = kern::gemm_fast_swiglu_unsupported_reason(view(gate), view(up), T);
  if (!why.empty()) {
    note_fallback(range + " (T=" + std::to_string(T) + "): " + why);
    return false;
  }
  NvtxRange r(range, 4ull * static_cast<uint64_t>(T) * gate.rows * gate.cols);
  kern::gemm_fast_swiglu(view(gate), view(up), x16, T, a16, stream_);
  return true;
}

}  // namespace pfx::cuda

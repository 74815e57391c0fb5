// Error reporting behind kernels/cuda_check.h: one message format for every CUDA/cuBLAS failure.
#include "kernels/cuda_check.h"

#include <cublas_v2.h>

#include <cstdio>

#include "util/error.h"

namespace pfx::cuda_detail {

void throw_cuda_error(cudaError_t err, const char* call, const char* file, int line) {
  fail(file, ":", line, ": ", call, " failed: ", cudaGetErrorName(err), " (", cudaGetErrorString(err), ")");
}

void report_cuda_error(cudaError_t err, const char* call, const char* file, int line) noexcept {
  std::fprintf(stderr, "%s:%d: %s failed: %s (%s)\n", file, line, call, cudaGetErrorName(err),
               cudaGetErrorString(err));
}

void throw_cublas_error(int status, const char* call, const char* file, int line) {
  const auto s = static_cast<cublasStatus_t>(status);
  fail(file, ":", line, ": ", call, " failed: ", cublasGetStatusName(s), " (", cublasGetStatusString(s), ")");
}

}  // namespace pfx::cuda_detail

// The project's one way to check CUDA runtime and cuBLAS calls (STYLE.md habit 2).
//   CUDA_CHECK(call)          throws pfx::Error "file:line: call failed: cudaErrorX (string)"
//   CUDA_CHECK_NOEXCEPT(call) same message on stderr instead of a throw (for destructors)
//   CUBLAS_CHECK(call)        throws pfx::Error with the cuBLAS status name and string
//   CUDA_CHECK_LAUNCH()       after each <<<>>> launch: picks up launch-configuration errors
// Plain C++: includes only the CUDA runtime API header, so engine/ code can use it too.
#pragma once
#include <cuda_runtime_api.h>

namespace pfx::cuda_detail {
[[noreturn]] void throw_cuda_error(cudaError_t err, const char* call, const char* file, int line);
void report_cuda_error(cudaError_t err, const char* call, const char* file, int line) noexcept;
// status is a cublasStatus_t; taken as int so this header needs no cuBLAS include.
[[noreturn]] void throw_cublas_error(int status, const char* call, const char* file, int line);
}  // namespace pfx::cuda_detail

// `handler` (a cuda_detail function) gets the error, the call's text, file and line.
#define PFX_CUDA_CHECK_WITH(handler, call, call_text)                             \
  do {                                                                            \
    const cudaError_t pfx_cuda_err_ = (call);                                     \
    if (pfx_cuda_err_ != cudaSuccess)                                             \
      ::pfx::cuda_detail::handler(pfx_cuda_err_, call_text, __FILE__, __LINE__);  \
  } while (0)
#define CUDA_CHECK(call) PFX_CUDA_CHECK_WITH(throw_cuda_error, call, #call)
#define CUDA_CHECK_NOEXCEPT(call) PFX_CUDA_CHECK_WITH(report_cuda_error, call, #call)

// CUBLAS_STATUS_SUCCESS is 0 in every cuBLAS version.
#define CUBLAS_CHECK(call)                                                          \
  do {                                                                              \
    const int pfx_cublas_status_ = static_cast<int>(call);                          \
    if (pfx_cublas_status_ != 0)                                                    \
      ::pfx::cuda_detail::throw_cublas_error(pfx_cublas_status_, #call, __FILE__, __LINE__); \
  } while (0)

// cudaGetLastError (not Peek) so a launch error is reported once, where it happened.
#define CUDA_CHECK_LAUNCH() CUDA_CHECK(cudaGetLastError())

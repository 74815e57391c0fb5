// RAII owner of one cudaMalloc'd allocation.
#pragma once
#include <cuda_runtime_api.h>

#include <cstddef>
#include <string>

#include "kernels/cuda_check.h"

namespace pfx::cuda {

class DeviceBuffer {
 public:
  DeviceBuffer() = default;
  explicit DeviceBuffer(size_t bytes) : bytes_(bytes) {
    if (bytes) CUDA_CHECK(cudaMalloc(&ptr_, bytes));
  }
  ~DeviceBuffer() {
    if (ptr_) CUDA_CHECK_NOEXCEPT(cudaFree(ptr_));
  }
  DeviceBuffer(const DeviceBuffer&) = delete;  // one owner per allocation
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;
  DeviceBuffer(DeviceBuffer&& o) noexcept : ptr_(o.ptr_), bytes_(o.bytes_) { o.ptr_ = nullptr, o.bytes_ = 0; }
  DeviceBuffer& operator=(DeviceBuffer&& o) noexcept {
    if (this != &o) {
      if (ptr_) CUDA_CHECK_NOEXCEPT(cudaFree(ptr_));
      ptr_ = o.ptr_, bytes_ = o.bytes_;
      o.ptr_ = nullptr, o.bytes_ = 0;
    }
    return *this;
  }
  template <class T = void>
  T* as() const { return static_cast<T*>(ptr_); }
  size_t bytes() const { return bytes_; }

 private:
  void* ptr_ = nullptr;
  size_t bytes_ = 0;
};

}  // namespace pfx::cuda

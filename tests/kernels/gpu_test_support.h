// Shared helpers of the kernel tests: GPU availability (skip with the reason), RAII device
// buffers with NaN poisoning, seeded random data, and comparison reports that print max abs/rel
// error and the first mismatches before failing.
#pragma once
#include <cuda_runtime_api.h>
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "kernels/cuda_check.h"
#include "quant/fp16.h"

namespace pfx::kernels::test {

// Empty string when a CUDA device is usable, else why not.
inline std::string gpu_unavailable_reason() {
  int n = 0;
  const cudaError_t err = cudaGetDeviceCount(&n);
  if (err != cudaSuccess) {
    cudaGetLastError();
    return std::string("cudaGetDeviceCount failed: ") + cudaGetErrorName(err) + " (" + cudaGetErrorString(err) + ")";
  }
  if (n == 0) return "no CUDA device";
  return {};
}

#define PFX_REQUIRE_GPU()                                                                 \
  do {                                                                                    \
    const std::string pfx_gpu_why_ = ::pfx::kernels::test::gpu_unavailable_reason();     \
    if (!pfx_gpu_why_.empty()) GTEST_SKIP() << "no usable GPU: " << pfx_gpu_why_;         \
  } while (0)

// Device allocation of n elements of T. Copy deleted: two owners would free twice.
template <class T>
class DeviceBuffer {
 public:
  explicit DeviceBuffer(size_t n) : n_(n) { CUDA_CHECK(cudaMalloc(&p_, bytes() ? bytes() : 1)); }
  explicit DeviceBuffer(const std::vector<T>& host) : DeviceBuffer(host.size()) { upload(host); }
  ~DeviceBuffer() { CUDA_CHECK_NOEXCEPT(cudaFree(p_)); }
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;

  T* get() const { return static_cast<T*>(p_); }
  size_t size() const { return n_; }
  size_t bytes() const { return n_ * sizeof(T); }
  // upload/poison finish before returning: the kernels run on a non-blocking stream, which does
  // not wait for work on the legacy default stream that cudaMemcpy/cudaMemset use.
  void upload(const std::vector<T>& host) {
    ASSERT_EQ(host.size(), n_);
    CUDA_CHECK(cudaMemcpy(p_, host.data(), bytes(), cudaMemcpyHostToDevice));
    CUDA_CHECK(cudaDeviceSynchronize());
  }
  std::vector<T> download() const {
    std::vector<T> host(n_);
    CUDA_CHECK(cudaDeviceSynchronize());
    CUDA_CHECK(cudaMemcpy(host.data(), p_, bytes(), cudaMemcpyDeviceToHost));
    return host;
  }
  // All bytes 0xFF: NaN as fp32 and as fp16, -1 as int32; an element a kernel forgot stays NaN.
  void poison() { fill_bytes(0xFF); }
  void fill_bytes(int byte) {
    CUDA_CHECK(cudaMemset(p_, byte, bytes()));
    CUDA_CHECK(cudaDeviceSynchronize());
  }

 private:
  void* p_ = nullptr;
  size_t n_;
};

// A stream the tests launch on (not the legacy default stream). Copy deleted: one owner destroys it.
class Stream {
 public:
  Stream() { CUDA_CHECK(cudaStreamCreateWithFlags(&s_, cudaStreamNonBlocking)); }
  ~Stream() { CUDA_CHECK_NOEXCEPT(cudaStreamDestroy(s_)); }
  Stream(const Stream&) = delete;
  Stream& operator=(const Stream&) = delete;
  cudaStream_t get() const { return s_; }
  void sync() const { CUDA_CHECK(cudaStreamSynchronize(s_)); }

 private:
  cudaStream_t s_ = nullptr;
};

inline std::mt19937_64& rng() {
  static std::mt19937_64 g(0x5eed1234abcdULL);
  return g;
}
inline float uniform(float lo, float hi) { return std::uniform_real_distribution<float>(lo, hi)(rng()); }
// Uniform in [lo, hi) but never (close to) zero, so a kernel that writes zeros cannot pass.
inline std::vector<float> random_floats(size_t n, float lo, float hi) {
  std::vector<float> v(n);
  for (auto& x : v) {
    do x = uniform(lo, hi);
    while (std::fabs(x) < 1e-3f);
  }
  return v;
}

inline float half_to_float(uint16_t h) { return quant::fp16_to_fp32(h); }
inline uint16_t float_to_half(float f) { return quant::fp32_to_fp16(f); }

// Elementwise check of got against ref with |got - ref| <= tol(i, ref). NaN in got is always a
// failure. The message carries max abs/rel error and the first mismatches.
template <class Tol>
::testing::AssertionResult compare(const std::string& what, const std::vector<double>& got,
                                   const std::vector<double>& ref, Tol tol, int max_report = 8) {
  if (got.size() != ref.size()) {
    return ::testing::AssertionFailure() << what << ": size " << got.size() << " != reference " << ref.size();
  }
  double max_abs = 0, max_rel = 0, max_ref = 0;
  size_t bad = 0, nans = 0;
  std::ostringstream first;
  for (size_t i = 0; i < got.size(); ++i) {
    max_ref = std::max(max_ref, std::fabs(ref[i]));
    const bool nan = std::isnan(got[i]);
    const double err = std::fabs(got[i] - ref[i]);
    if (nan) ++nans;
    if (!nan) {
      max_abs = std::max(max_abs, err);
      if (ref[i] != 0) max_rel = std::max(max_rel, err / std::fabs(ref[i]));
    }
    if (nan || !(err <= tol(i, ref[i]))) {
      if (static_cast<int>(bad) < max_report)
        first << "\n    [" << i << "] got " << got[i] << " want " << ref[i] << " (|err| " << err << ", tol "
              << tol(i, ref[i]) << ")";
      ++bad;
    }
  }
  std::ostringstream summary;
  summary << what << ": " << got.size() << " elements, max abs err " << max_abs << ", max rel err " << max_rel
          << ", max |ref| " << max_ref << ", NaN " << nans << ", mismatches " << bad;
  if (bad == 0) {
    std::printf("  %s\n", summary.str().c_str());
    return ::testing::AssertionSuccess();
  }
  return ::testing::AssertionFailure() << summary.str() << "; first:" << first.str();
}

// Bit-for-bit comparison of raw words (fp16 bits, fp32 bits, int ids).
template <class T>
::testing::AssertionResult compare_bits(const std::string& what, const std::vector<T>& got, const std::vector<T>& ref,
                                        int max_report = 8) {
  if (got.size() != ref.size()) {
    return ::testing::AssertionFailure() << what << ": size " << got.size() << " != reference " << ref.size();
  }
  size_t bad = 0;
  std::ostringstream first;
  for (size_t i = 0; i < got.size(); ++i) {
    if (std::memcmp(&got[i], &ref[i], sizeof(T)) != 0) {
      if (static_cast<int>(bad) < max_report) {
        uint64_t g = 0, r = 0;
        std::memcpy(&g, &got[i], sizeof(T));
        std::memcpy(&r, &ref[i], sizeof(T));
        first << "\n    [" << i << "] got 0x" << std::hex << g << " want 0x" << r << std::dec;
      }
      ++bad;
    }
  }
  if (bad == 0) {
    std::printf("  %s: %zu elements bit-identical\n", what.c_str(), got.size());
    return ::testing::AssertionSuccess();
  }
  return ::testing::AssertionFailure() << what << ": " << bad << " of " << got.size() << " differ; first:" << first.str();
}

// One fp16 ulp at |x| (an upper bound: 2^-10 relative, 2^-24 absolute for subnormals): the error
// of a correctly rounded fp16 result whose fp32 input is itself a few fp32 ulps off.
inline double fp16_ulp(double x) { return std::max(std::fabs(x) * 0x1p-10, 0x1p-24); }

inline std::vector<double> to_double(const std::vector<float>& v) { return {v.begin(), v.end()}; }
inline std::vector<double> halves_to_double(const std::vector<uint16_t>& v) {
  std::vector<double> out(v.size());
  for (size_t i = 0; i < v.size(); ++i) out[i] = half_to_float(v[i]);
  return out;
}

}  // namespace pfx::kernels::test

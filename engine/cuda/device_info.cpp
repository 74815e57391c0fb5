// GPU presence and identity, asked of the CUDA runtime without touching any model.
#include <cuda_runtime_api.h>

#include "cuda/cuda_backend.h"

namespace pfx::cuda {

const char* path_name(Path p) { return p == Path::Fast ? "fast" : "generic"; }

std::string gpu_status() {
  int n = 0;
  const cudaError_t err = cudaGetDeviceCount(&n);
  if (err != cudaSuccess) return std::string("cudaGetDeviceCount: ") + cudaGetErrorName(err) + ": " + cudaGetErrorString(err);
  if (n == 0) return "no CUDA devices";
  cudaDeviceProp prop{};
  if (cudaGetDeviceProperties(&prop, 0) != cudaSuccess) return "cudaGetDeviceProperties failed";
  return std::string(prop.name) + ", compute capability " + std::to_string(prop.major) + "." +
         std::to_string(prop.minor) + (prop.major == 9 ? "" : " (kernels are built for sm_90a only)");
}

bool gpu_usable() {
  int n = 0;
  if (cudaGetDeviceCount(&n) != cudaSuccess || n == 0) return false;
  cudaDeviceProp prop{};
  return cudaGetDeviceProperties(&prop, 0) == cudaSuccess && prop.major == 9 && prop.minor == 0;
}

DeviceInfo device_info() {
  DeviceInfo d;
  cudaDeviceProp prop{};
  if (cudaGetDeviceProperties(&prop, 0) != cudaSuccess) return d;
  d.name = prop.name;
  d.sm_count = prop.multiProcessorCount;
  int khz = 0;
  cudaDeviceGetAttribute(&khz, cudaDevAttrClockRate, 0);
  d.sm_clock_mhz = khz / 1000;
  cudaDriverGetVersion(&d.driver_version);
  cudaRuntimeGetVersion(&d.runtime_version);
  d.memory_bytes = static_cast<int64_t>(prop.totalGlobalMem);
  return d;
}

}  // namespace pfx::cuda

// GPU presence and identity, asked of the CUDA runtime without touching any model.
#include <cuda_runtime_api.h>
#include <dlfcn.h>

#include "cuda/cuda_backend.h"

namespace pfx::cuda {

namespace {

std::string cuda_version_text(int v) { return std::to_string(v / 1000) + "." + std::to_string(v % 1000 / 10); }

// cudaErrorInsufficientDriver is also what the runtime says when there is no driver at all;
// telling the two apart needs a look for libcuda itself (dlopen, so nothing links against it).
std::string insufficient_driver_text() {
  void* lib = dlopen("libcuda.so.1", RTLD_LAZY | RTLD_LOCAL);
  if (!lib) return "no NVIDIA driver on this machine: libcuda.so.1 not found";
  int driver = 0, runtime = 0;
  using GetVersion = int (*)(int*);
  auto get = reinterpret_cast<GetVersion>(dlsym(lib, "cuDriverGetVersion"));
  const bool known = get && get(&driver) == 0;
  dlclose(lib);
  cudaRuntimeGetVersion(&runtime);
  return "the NVIDIA driver is too old: it supports CUDA " + (known ? cuda_version_text(driver) : std::string("?")) +
         ", this build needs CUDA " + cuda_version_text(runtime);
}

}  // namespace

const char* path_name(Path p) { return p == Path::Fast ? "fast" : "generic"; }

std::string gpu_status() {
  int n = 0;
  const cudaError_t err = cudaGetDeviceCount(&n);
  if (err == cudaErrorInsufficientDriver) return insufficient_driver_text();
  if (err == cudaErrorNoDevice) return "no CUDA devices (the NVIDIA driver sees none)";
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

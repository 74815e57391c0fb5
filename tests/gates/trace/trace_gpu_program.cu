// Known kernels in known NVTX ranges, for test_trace_gpu (and gpu_check.sh). Every kernel spins for
// ~20 us so its duration is clearly positive. Expected attribution (test_trace_gpu.cpp checks it):
//   k_trace_no_range              outside every range
//   k_trace_outer                 outer (payload uint64 1000)
//   k_trace_inner                 inner (payload 2000) inside outer; launched with cudaLaunchKernel
//   (none)                        empty, main_busy: ranges with no kernels
//   k_trace_worker                worker, on a second thread and stream, while main_busy is open
//                                 on the main thread (so its range has no parent)
//   k_trace_start_end             startend (a start/end range)
//   k_trace_domain                domain_range in domain pfx_test (registered string)
//   k_trace_pass<3> x3            prefill, three times (for --range prefill --skip 1)
// plus one cudaMemcpy HtoD, one DtoH and one cudaMemset of kBytes each.
#include <cuda_runtime.h>
#include <nvtx3/nvToolsExt.h>

#include <cstdio>
#include <cstring>
#include <thread>
#include <vector>

namespace {

constexpr int kBytes = 1 << 20;

#define CHECK_CUDA(call)                                                                              \
  do {                                                                                                \
    cudaError_t err_ = (call);                                                                        \
    if (err_ != cudaSuccess) {                                                                        \
      std::fprintf(stderr, "%s:%d: %s -> %s (%s)\n", __FILE__, __LINE__, #call, cudaGetErrorName(err_), \
                   cudaGetErrorString(err_));                                                         \
      std::exit(2);                                                                                   \
    }                                                                                                 \
  } while (0)

__device__ void spin(float* out, int tag) {
  const long long start = clock64();
  while (clock64() - start < 40000) {  // ~20 us at ~2 GHz
  }
  if (threadIdx.x == 0 && blockIdx.x == 0) out[tag] = static_cast<float>(tag);
}

__global__ void k_trace_no_range(float* out) { spin(out, 0); }
__global__ void k_trace_outer(float* out) { spin(out, 1); }
__global__ void k_trace_inner(float* out) { spin(out, 2); }
__global__ void k_trace_worker(float* out) { spin(out, 3); }
__global__ void k_trace_start_end(float* out) { spin(out, 4); }
__global__ void k_trace_domain(float* out) { spin(out, 5); }
template <int N>
__global__ void k_trace_pass(float* out) {
  spin(out, 5 + N);
}

void push_with_flops(const char* name, unsigned long long flops) {
  nvtxEventAttributes_t a;
  std::memset(&a, 0, sizeof a);
  a.version = NVTX_VERSION;
  a.size = NVTX_EVENT_ATTRIB_STRUCT_SIZE;
  a.messageType = NVTX_MESSAGE_TYPE_ASCII;
  a.message.ascii = name;
  a.payloadType = NVTX_PAYLOAD_TYPE_UNSIGNED_INT64;
  a.payload.ullValue = flops;
  nvtxRangePushEx(&a);
}

}  // namespace

int main() {
  float* device = nullptr;
  CHECK_CUDA(cudaMalloc(&device, kBytes));

  k_trace_no_range<<<1, 32>>>(device);
  CHECK_CUDA(cudaGetLastError());

  push_with_flops("outer", 1000);
  k_trace_outer<<<1, 32>>>(device);
  CHECK_CUDA(cudaGetLastError());
  push_with_flops("inner", 2000);
  void* args[] = {&device};
  CHECK_CUDA(cudaLaunchKernel(reinterpret_cast<const void*>(&k_trace_inner), dim3(2), dim3(64), args, 0, nullptr));
  nvtxRangePop();
  nvtxRangePop();

  nvtxRangePushA("empty");
  nvtxRangePop();

  nvtxRangePushA("main_busy");
  std::thread worker([device] {
    cudaStream_t stream;
    CHECK_CUDA(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
    nvtxRangePushA("worker");
    k_trace_worker<<<1, 32, 0, stream>>>(device);
    CHECK_CUDA(cudaGetLastError());
    nvtxRangePop();
    CHECK_CUDA(cudaStreamSynchronize(stream));
    CHECK_CUDA(cudaStreamDestroy(stream));
  });
  worker.join();
  nvtxRangePop();

  nvtxRangeId_t id = nvtxRangeStartA("startend");
  k_trace_start_end<<<1, 32>>>(device);
  CHECK_CUDA(cudaGetLastError());
  nvtxRangeEnd(id);

  nvtxDomainHandle_t domain = nvtxDomainCreateA("pfx_test");
  nvtxEventAttributes_t a;
  std::memset(&a, 0, sizeof a);
  a.version = NVTX_VERSION;
  a.size = NVTX_EVENT_ATTRIB_STRUCT_SIZE;
  a.messageType = NVTX_MESSAGE_TYPE_REGISTERED;
  a.message.registered = nvtxDomainRegisterStringA(domain, "domain_range");
  nvtxDomainRangePushEx(domain, &a);
  k_trace_domain<<<1, 32>>>(device);
  CHECK_CUDA(cudaGetLastError());
  nvtxDomainRangePop(domain);

  for (int pass = 0; pass < 3; ++pass) {
    push_with_flops("prefill", 5000);
    k_trace_pass<3><<<4, 128>>>(device);
    CHECK_CUDA(cudaGetLastError());
    nvtxRangePop();
  }

  std::vector<char> host(kBytes, 1);
  CHECK_CUDA(cudaMemcpy(device, host.data(), kBytes, cudaMemcpyHostToDevice));
  CHECK_CUDA(cudaMemset(device, 0, kBytes));
  CHECK_CUDA(cudaMemcpy(host.data(), device, kBytes, cudaMemcpyDeviceToHost));
  CHECK_CUDA(cudaDeviceSynchronize());
  CHECK_CUDA(cudaFree(device));
  std::printf("trace_gpu_program: done\n");
  return 0;
}

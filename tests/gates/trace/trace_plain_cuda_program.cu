// A CUDA program with no NVTX at all (like llama.cpp, or an old build): the tracer must still give
// per-kernel times. Launches k_plain_scale 5 times and k_plain_sum once, with copies around them.
#include <cuda_runtime.h>

#include <cstdio>
#include <vector>

#define CHECK_CUDA(call)                                                                              \
  do {                                                                                                \
    cudaError_t err_ = (call);                                                                        \
    if (err_ != cudaSuccess) {                                                                        \
      std::fprintf(stderr, "%s:%d: %s -> %s\n", __FILE__, __LINE__, #call, cudaGetErrorString(err_)); \
      return 2;                                                                                       \
    }                                                                                                 \
  } while (0)

__global__ void k_plain_scale(float* x, int n, float s) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) x[i] *= s;
}

__global__ void k_plain_sum(const float* x, int n, float* out) {
  float acc = 0;
  for (int i = threadIdx.x; i < n; i += blockDim.x) acc += x[i];
  atomicAdd(out, acc);
}

int main() {
  constexpr int n = 1 << 22;
  std::vector<float> host(n, 1.0f);
  float *x = nullptr, *sum = nullptr;
  CHECK_CUDA(cudaMalloc(&x, n * sizeof(float)));
  CHECK_CUDA(cudaMalloc(&sum, sizeof(float)));
  CHECK_CUDA(cudaMemcpy(x, host.data(), n * sizeof(float), cudaMemcpyHostToDevice));
  CHECK_CUDA(cudaMemset(sum, 0, sizeof(float)));
  for (int i = 0; i < 5; ++i) k_plain_scale<<<(n + 255) / 256, 256>>>(x, n, 1.0f);
  k_plain_sum<<<1, 1024>>>(x, n, sum);
  CHECK_CUDA(cudaGetLastError());
  float result = 0;
  CHECK_CUDA(cudaMemcpy(&result, sum, sizeof(float), cudaMemcpyDeviceToHost));
  CHECK_CUDA(cudaFree(x));
  CHECK_CUDA(cudaFree(sum));
  std::printf("trace_plain_cuda_program: sum %.0f (expected %d)\n", result, n);
  return result == static_cast<float>(n) ? 0 : 1;
}

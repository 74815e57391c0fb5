// The generic path's GEMM (and the pipelined variant's): cuBLAS (cuBLASLt) on fp16 weights with
// fp32 accumulation, restricted to algorithms that add the products of every output in one
// sequence along k, the order of the fused kernels (no split-K: no reduction scheme, no
// workspace). cuBLAS's default heuristic splits K for some shapes (seen on the H200 at T = 100,
// K = 11008), and a split sum rounds differently: with it the fused path could never be bitwise
// equal to the reference. Plain C++.
#pragma once
#include <cuda_runtime_api.h>

#include <cstdint>
#include <map>
#include <memory>
#include <tuple>

namespace pfx::kernels {

class SequentialGemm {
 public:
  SequentialGemm();
  ~SequentialGemm();
  SequentialGemm(const SequentialGemm&) = delete;  // owns a cuBLASLt handle and plans
  SequentialGemm& operator=(const SequentialGemm&) = delete;

  // Y[T,N] = X16[T,K] · W16[N,K]ᵀ (+ Y when accumulate), row-major; Y fp32, or fp16 when f16_out.
  void run(const uint16_t* w16, const uint16_t* x16, void* y, int64_t T, int64_t N, int64_t K, bool accumulate,
           bool f16_out, cudaStream_t stream);

 private:
  struct Plan;
  using Key = std::tuple<int64_t, int64_t, int64_t, bool, bool>;
  const Plan& plan(int64_t T, int64_t N, int64_t K, bool accumulate, bool f16_out);
  void* handle_ = nullptr;  // cublasLtHandle_t
  std::map<Key, std::unique_ptr<Plan>> plans_;
};

}  // namespace pfx::kernels

// gemm_order_probe: which fp32 summation order does the generic path's GEMM (SequentialGemm,
// cuBLASLt without split-K) use at decode sizes, T = 1..8? A decode kernel can be bitwise equal to
// it only by adding its products in that same order. Candidates, each computing Y[T,N] = X·Wᵀ on
// the same random fp16 data:
//   chain1 — one mma.sync m16n8k16 accumulator per 16-row tile, k in order (k0 = 0, 16, 32, ...):
//            the order the fused prefill GEMM (wgmma, k16 steps) matches cuBLAS with at T > 8;
//   chain2 — two accumulators (even / odd k16 steps) added at the end: a control that must differ,
//            so a "bitwise" answer above is not the probe failing to see a difference.
// Prints, per shape and T, how many outputs differ from SequentialGemm and max|Δ|/max|ref|.
//   gemm_order_probe [--T 1,2,...] (exit 0 after the table: it is a measurement, not a test;
//   a CUDA error ends it with its message and exit 1)
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "kernels/cublas_gemm.h"
#include "kernels/cuda_check.h"
#include "kernels/ptx.cuh"

namespace {

// One warp per 16-row tile of W (rows r0 .. r0 + 15); tokens are the MMA's n (T <= 8).
template <int kChains>
__global__ void k_chain(const uint16_t* __restrict__ w, const uint16_t* __restrict__ x, float* __restrict__ y, int T,
                        int N, int K) {
  const int lane = threadIdx.x & 31, g = lane >> 2, tq = lane & 3;
  const int r0 = (blockIdx.x * (blockDim.x / 32) + threadIdx.x / 32) * 16;
  if (r0 >= N) return;
  float acc[kChains][4] = {};
  const auto w32 = [&](int r, int k) { return *reinterpret_cast<const uint32_t*>(w + size_t(r) * K + k); };
  for (int k0 = 0, step = 0; k0 < K; k0 += 16, ++step) {
    const uint32_t a[4] = {w32(r0 + g, k0 + 2 * tq), w32(r0 + g + 8, k0 + 2 * tq), w32(r0 + g, k0 + 2 * tq + 8),
                           w32(r0 + g + 8, k0 + 2 * tq + 8)};
    uint32_t b0 = 0, b1 = 0;
    if (g < T) {
      b0 = *reinterpret_cast<const uint32_t*>(x + size_t(g) * K + k0 + 2 * tq);
      b1 = *reinterpret_cast<const uint32_t*>(x + size_t(g) * K + k0 + 2 * tq + 8);
    }
    pfx::kernels::dev::mma_m16n8k16_f16_f32(acc[step % kChains], a, b0, b1);
  }
  float c[4];
  for (int i = 0; i < 4; ++i) {
    c[i] = acc[0][i];
    for (int j = 1; j < kChains; ++j) c[i] += acc[j][i];
  }
  // c0, c1: row g, tokens 2tq, 2tq + 1; c2, c3: row g + 8.
  for (int i = 0; i < 4; ++i) {
    const int row = r0 + g + (i >= 2 ? 8 : 0), t = 2 * tq + (i & 1);
    if (t < T) y[size_t(t) * N + row] = c[i];
  }
}

std::vector<int> parse_list(const char* s) {
  std::vector<int> v;
  for (const char* p = s; *p;) {
    v.push_back(std::atoi(p));
    while (*p && *p != ',') ++p;
    if (*p == ',') ++p;
  }
  return v;
}

}  // namespace

int main(int argc, char** argv) try {
  std::vector<int> Ts = {1, 2, 3, 4, 7, 8};
  for (int i = 1; i + 1 < argc; ++i)
    if (!std::strcmp(argv[i], "--T")) Ts = parse_list(argv[i + 1]);
  struct Shape { int N, K; };
  const Shape shapes[] = {{4096, 4096}, {11008, 4096}, {4096, 11008}, {32000, 4096}, {1024, 4096}};
  std::mt19937 rng(7);
  std::normal_distribution<float> nd(0.f, 1.f);
  pfx::kernels::SequentialGemm seq;
  cudaStream_t stream;
  CUDA_CHECK(cudaStreamCreate(&stream));
  std::printf("%-12s %2s  %-24s %-24s\n", "N x K", "T", "chain1 (differ, rel)", "chain2 (differ, rel)");
  for (const Shape& s : shapes) {
    const int Tmax = 8;
    std::vector<uint16_t> hw(size_t(s.N) * s.K), hx(size_t(Tmax) * s.K);
    for (auto& v : hw) v = __half_as_ushort(__float2half(0.02f * nd(rng)));
    for (auto& v : hx) v = __half_as_ushort(__float2half(nd(rng)));
    uint16_t *dw, *dx;
    float *dref, *dc1, *dc2;
    CUDA_CHECK(cudaMalloc(&dw, hw.size() * 2));
    CUDA_CHECK(cudaMalloc(&dx, hx.size() * 2));
    CUDA_CHECK(cudaMalloc(&dref, size_t(Tmax) * s.N * 4));
    CUDA_CHECK(cudaMalloc(&dc1, size_t(Tmax) * s.N * 4));
    CUDA_CHECK(cudaMalloc(&dc2, size_t(Tmax) * s.N * 4));
    CUDA_CHECK(cudaMemcpy(dw, hw.data(), hw.size() * 2, cudaMemcpyHostToDevice));
    CUDA_CHECK(cudaMemcpy(dx, hx.data(), hx.size() * 2, cudaMemcpyHostToDevice));
    for (int T : Ts) {
      if (T < 1 || T > Tmax) continue;
      seq.run(dw, dx, dref, T, s.N, s.K, false, false, stream);
      const int warps = 4, blocks = (s.N / 16 + warps - 1) / warps;
      k_chain<1><<<blocks, 32 * warps, 0, stream>>>(dw, dx, dc1, T, s.N, s.K);
      k_chain<2><<<blocks, 32 * warps, 0, stream>>>(dw, dx, dc2, T, s.N, s.K);
      CUDA_CHECK(cudaGetLastError());
      CUDA_CHECK(cudaStreamSynchronize(stream));
      const size_t n = size_t(T) * s.N;
      std::vector<float> r(n), c1(n), c2(n);
      CUDA_CHECK(cudaMemcpy(r.data(), dref, n * 4, cudaMemcpyDeviceToHost));
      CUDA_CHECK(cudaMemcpy(c1.data(), dc1, n * 4, cudaMemcpyDeviceToHost));
      CUDA_CHECK(cudaMemcpy(c2.data(), dc2, n * 4, cudaMemcpyDeviceToHost));
      const auto cmp = [&](const std::vector<float>& c) {
        size_t differ = 0;
        double maxd = 0, maxr = 0;
        for (size_t i = 0; i < n; ++i) {
          if (std::memcmp(&c[i], &r[i], 4)) ++differ;
          maxd = std::fmax(maxd, std::fabs(double(c[i]) - r[i]));
          maxr = std::fmax(maxr, std::fabs(double(r[i])));
        }
        char buf[64];
        std::snprintf(buf, sizeof buf, "%zu/%zu, %.2e", differ, n, maxr > 0 ? maxd / maxr : maxd);
        return std::string(buf);
      };
      std::printf("%5dx%-6d %2d  %-24s %-24s\n", s.N, s.K, T, cmp(c1).c_str(), cmp(c2).c_str());
    }
    cudaFree(dw), cudaFree(dx), cudaFree(dref), cudaFree(dc1), cudaFree(dc2);
  }
  return 0;
} catch (const std::exception& e) {
  std::fprintf(stderr, "gemm_order_probe: %s\n", e.what());
  return 1;
}

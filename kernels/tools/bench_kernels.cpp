// pfx_kernel_bench: rough CUDA-event timings of this library's kernels at llama-7B shapes, to
// place them against the GEMMs (the project's timing gate is the authority; this is a quick look).
//   pfx_kernel_bench            prints one line per case: median ms of 20 runs after 3 warm-ups
// Inputs are random-ish (memset patterns), which is fine for timing and nothing else.
#include <cublas_v2.h>
#include <cuda_runtime_api.h>

#include <algorithm>
#include <cstdio>
#include <functional>
#include <string>
#include <vector>

#include "kernels/cuda_check.h"
#include "kernels/kernels.h"
#include "quant/types.h"

namespace {

// Device allocation owner. Copy deleted: two owners would free twice.
struct Buf {
  void* p = nullptr;
  explicit Buf(size_t bytes) {
    CUDA_CHECK(cudaMalloc(&p, bytes));
    CUDA_CHECK(cudaMemset(p, 0x3C, bytes));  // 0x3C3C: fp16 ~1.06, fp32 ~0.011: finite everywhere
  }
  ~Buf() { CUDA_CHECK_NOEXCEPT(cudaFree(p)); }
  Buf(const Buf&) = delete;
  Buf& operator=(const Buf&) = delete;
  template <class T>
  T* as() const { return static_cast<T*>(p); }
};

double median_ms(cudaStream_t s, const std::function<void()>& fn) {
  cudaEvent_t a, b;
  CUDA_CHECK(cudaEventCreate(&a));
  CUDA_CHECK(cudaEventCreate(&b));
  for (int i = 0; i < 3; ++i) fn();
  std::vector<float> ms;
  for (int i = 0; i < 20; ++i) {
    CUDA_CHECK(cudaEventRecord(a, s));
    fn();
    CUDA_CHECK(cudaEventRecord(b, s));
    CUDA_CHECK(cudaEventSynchronize(b));
    float t = 0;
    CUDA_CHECK(cudaEventElapsedTime(&t, a, b));
    ms.push_back(t);
  }
  CUDA_CHECK(cudaEventDestroy(a));
  CUDA_CHECK(cudaEventDestroy(b));
  std::sort(ms.begin(), ms.end());
  return ms[ms.size() / 2];
}

void report(const std::string& what, double ms, double bytes, double flops) {
  std::printf("%-52s %9.4f ms", what.c_str(), ms);
  if (bytes > 0) std::printf("  %8.1f GB/s", bytes / ms / 1e6);
  if (flops > 0) std::printf("  %8.1f TFLOP/s", flops / ms / 1e9);
  std::printf("\n");
}

}  // namespace

int main() {
  using namespace pfx::kernels;
  try {
    cudaStream_t s;
    CUDA_CHECK(cudaStreamCreate(&s));
    cublasHandle_t cublas;
    CUBLAS_CHECK(cublasCreate(&cublas));
    const int H = 32, Hkv = 32, hd = 128, D = 4096, F = 11008, max_ctx = 4096;

    // Attention, causal prefill from p0 = 0 (FLOPs: QKᵀ and PV over the causal half).
    for (int T : {512, 2048}) {
      Buf q(size_t(T) * H * hd * 2), k(size_t(Hkv) * max_ctx * hd * 2), v(size_t(Hkv) * max_ctx * hd * 2),
          o(size_t(T) * H * hd * 2);
      AttentionArgs a;
      a.q16 = q.as<uint16_t>(), a.k_cache = k.as<uint16_t>(), a.v_cache = v.as<uint16_t>(), a.o16 = o.as<uint16_t>();
      a.T = T, a.H = H, a.Hkv = Hkv, a.hd = hd, a.p0 = 0, a.max_ctx = max_ctx;
      const double flops = 4.0 * H * hd * (double(T) * (T + 1) / 2);
      report("attn flash prefill T=" + std::to_string(T) + " H32 hd128",
             median_ms(s, [&] { attention_flash_prefill(a, s); }), 0, flops);
      const size_t gb = attention_generic_scratch_bytes(T, T, H, hd);
      Buf scratch(gb);
      report("attn generic (cuBLAS+softmax) T=" + std::to_string(T),
             median_ms(s, [&] { attention_generic(a, cublas, scratch.p, gb, s); }), 0, flops);
    }
    // Decode: one token at context 2048 (bytes: K and V of every head read once).
    {
      const int ctx = 2048;
      Buf q(size_t(H) * hd * 2), k(size_t(Hkv) * max_ctx * hd * 2), v(size_t(Hkv) * max_ctx * hd * 2), o(size_t(H) * hd * 2);
      AttentionArgs a;
      a.q16 = q.as<uint16_t>(), a.k_cache = k.as<uint16_t>(), a.v_cache = v.as<uint16_t>(), a.o16 = o.as<uint16_t>();
      a.T = 1, a.H = H, a.Hkv = Hkv, a.hd = hd, a.p0 = ctx - 1, a.max_ctx = max_ctx;
      const size_t sb = attention_decode_scratch_bytes(1, H, hd);
      Buf scratch(sb);
      report("attn decode T=1 ctx=2048", median_ms(s, [&] { attention_decode(a, scratch.p, sb, s); }),
             2.0 * Hkv * ctx * hd * 2, 0);
      a.T = 1;
      report("attn flash prefill T=1 ctx=2048 (for comparison)", median_ms(s, [&] { attention_flash_prefill(a, s); }),
             2.0 * Hkv * ctx * hd * 2, 0);
    }
    // Elementwise at T = 2048.
    {
      const int T = 2048;
      Buf x(size_t(T) * D * 4), w(size_t(D) * 4), h(size_t(T) * D * 2);
      const double bytes = double(T) * D * (4 + 2);
      report("rmsnorm generic T=2048 D=4096",
             median_ms(s, [&] { rmsnorm_f32_to_f16(x.as<float>(), w.as<float>(), h.as<uint16_t>(), T, D, 1e-5f, s); }),
             bytes, 0);
      report("rmsnorm warp T=2048 D=4096",
             median_ms(s, [&] { rmsnorm_f32_to_f16_fast(x.as<float>(), w.as<float>(), h.as<uint16_t>(), T, D, 1e-5f, s); }),
             bytes, 0);
      Buf g(size_t(T) * F * 4), u(size_t(T) * F * 4), a16(size_t(T) * F * 2);
      report("silu_mul T=2048 F=11008",
             median_ms(s, [&] { silu_mul_f32_to_f16(g.as<float>(), u.as<float>(), a16.as<uint16_t>(), int64_t(T) * F, s); }),
             double(T) * F * 10, 0);
      Buf qkv(size_t(T) * 3 * D * 4), q16(size_t(T) * D * 2), kc(size_t(Hkv) * max_ctx * hd * 2), vc(size_t(Hkv) * max_ctx * hd * 2);
      QkvShape sh;
      sh.T = T, sh.H = H, sh.Hkv = Hkv, sh.hd = hd, sh.p0 = 0, sh.max_ctx = max_ctx;
      QkvInput in{qkv.as<float>(), 3 * D, qkv.as<float>() + D, 3 * D, qkv.as<float>() + 2 * D, 3 * D};
      QkvOutput out{q16.as<uint16_t>(), kc.as<uint16_t>(), vc.as<uint16_t>()};
      report("rope+kv fused T=2048", median_ms(s, [&] { rope_store_qkv_fused(in, out, sh, s); }), double(T) * 3 * D * 6, 0);
      report("rope_f32 + store_qkv (generic) T=2048", median_ms(s, [&] {
               rope_f32(qkv.as<float>(), 3 * D, qkv.as<float>() + D, 3 * D, sh, s);
               store_qkv(in, out, sh, s);
             }), 0, 0);
    }
    // Weight decoding of a 4096 x 11008 matrix (the generic GEMM's prologue).
    for (auto [type, name] : {std::pair{pfx::quant::Type::Q4_K, "q4_K"}, std::pair{pfx::quant::Type::Q6_K, "q6_K"},
                              std::pair{pfx::quant::Type::Q8_0, "q8_0"}}) {
      const int64_t rows = D, cols = F;
      const int64_t wbytes = pfx::quant::row_bytes(type, cols) * rows;
      Buf w{static_cast<size_t>(wbytes)}, out{static_cast<size_t>(rows * cols * 2)};
      // Scales 0x3C3C are finite; the values do not matter for timing.
      report(std::string("dequant_to_f16 ") + name + " 4096x11008",
             median_ms(s, [&] { dequant_to_f16(static_cast<uint32_t>(type), w.p, out.as<uint16_t>(), rows, cols, s); }),
             double(wbytes) + double(rows * cols * 2), 0);
    }
    cublasDestroy(cublas);
    CUDA_CHECK(cudaStreamDestroy(s));
  } catch (const std::exception& e) {
    std::fprintf(stderr, "pfx_kernel_bench: %s\n", e.what());
    return 1;
  }
  return 0;
}

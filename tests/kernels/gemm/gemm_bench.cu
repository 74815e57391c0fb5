// gemm_bench: times every fast-GEMM variant (gemm_fast's staged kernels and gemm_ws, the
// warp-specialized one on repacked weights) at the llama-2-7B prefill shapes beside cuBLAS on
// fp16 weights (the ceiling) and the generic path (dequant_to_f16 + cuBLAS), and the decode
// mat-vec. Not a test: it checks nothing but CUDA errors. CUDA events around each launch, 3
// warm-up launches, then the median of --reps launches, each on the next of several input sets
// (weights + activations) whose total exceeds the 50 MB L2, so no launch reads another's data
// from L2. Prints TFLOP/s per kernel, a per-shape summary against cuBLAS and the generic path, and
// GEMM-only tokens/s estimates for a Q4_K_M and a Q5_K_M 7B prefill (q5_K has gemm_ws kernels
// only, no staged gemm_fast ones). It measures no llama.cpp: a comparison with
// it is made only in the same run (scripts/gpu/release_check.sh, side_by_side.sh).
//   gemm_bench [--reps N] [--csv FILE] [--quick] [--types q5_K,q6_K,...]
// --types: only these weight types (names as ggml writes them; default every type).
#include <cublas_v2.h>
#include <cuda_runtime_api.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <iterator>
#include <map>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "gemm_reference.h"
#include "kernels/cuda_check.h"
#include "kernels/gemm_fast.h"
#include "kernels/gemm_fast_variants.h"
#include "kernels/gemm_ws.h"
#include "kernels/kernels.h"

namespace pfx::kernels::bench {
namespace {

using test::kQ4K;
using test::kQ5K;
using test::kQ6K;
using test::kQ8_0;

struct DevMem {
  explicit DevMem(size_t bytes) { CUDA_CHECK(cudaMalloc(&p, bytes ? bytes : 1)); }
  ~DevMem() { CUDA_CHECK_NOEXCEPT(cudaFree(p)); }
  DevMem(const DevMem&) = delete;  // owns the allocation
  DevMem& operator=(const DevMem&) = delete;
  template <class T>
  T* as() const {
    return static_cast<T*>(p);
  }
  void* p = nullptr;
};

struct Event {
  Event() { CUDA_CHECK(cudaEventCreate(&e)); }
  ~Event() { CUDA_CHECK_NOEXCEPT(cudaEventDestroy(e)); }
  Event(const Event&) = delete;  // owns the event
  Event& operator=(const Event&) = delete;
  cudaEvent_t e = nullptr;
};

struct Options {
  int reps = 20;
  bool quick = false;
  std::vector<uint32_t> types;  // empty: every type
  bool wants(uint32_t type) const { return types.empty() || std::find(types.begin(), types.end(), type) != types.end(); }
  std::string csv;
};

constexpr size_t kL2Bytes = 50u << 20;

// Whether the staged gemm_fast kernels take this type (gemm_ws takes test::kWsTypes).
bool has_staged(uint32_t type) {
  return std::find(std::begin(test::kFastTypes), std::end(test::kFastTypes), type) != std::end(test::kFastTypes);
}
const std::vector<GemmVariantInfo>& staged_variants(uint32_t type) {
  static const std::vector<GemmVariantInfo> none;
  return has_staged(type) ? gemm_fast_variants(type) : none;
}

// Median time (µs) of fn(set) over reps launches after 3 warm-ups, rotating over nsets sets.
template <class Fn>
double time_median_us(cudaStream_t s, int nsets, int reps, Fn&& fn) {
  for (int i = 0; i < 3; ++i) fn(i % nsets);
  std::vector<std::unique_ptr<Event>> ev;
  for (int i = 0; i < 2 * reps; ++i) ev.push_back(std::make_unique<Event>());
  for (int i = 0; i < reps; ++i) {
    CUDA_CHECK(cudaEventRecord(ev[2 * i]->e, s));
    fn((i + 3) % nsets);
    CUDA_CHECK(cudaEventRecord(ev[2 * i + 1]->e, s));
  }
  CUDA_CHECK(cudaStreamSynchronize(s));
  CUDA_CHECK(cudaGetLastError());
  std::vector<double> us(static_cast<size_t>(reps));
  for (int i = 0; i < reps; ++i) {
    float ms = 0;
    CUDA_CHECK(cudaEventElapsedTime(&ms, ev[2 * i]->e, ev[2 * i + 1]->e));
    us[static_cast<size_t>(i)] = 1000.0 * ms;
  }
  std::sort(us.begin(), us.end());
  return us[us.size() / 2];
}

struct Row {
  std::string type, kernel;
  int64_t T, N, K;
  double us, tflops;
};

class Bench {
 public:
  explicit Bench(Options o) : opt_(std::move(o)) {
    CUDA_CHECK(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking));
    CUBLAS_CHECK(cublasCreate(&cublas_));
    CUBLAS_CHECK(cublasSetStream(cublas_, stream_));
  }
  ~Bench() {
    cublasDestroy(cublas_);
    CUDA_CHECK_NOEXCEPT(cudaStreamDestroy(stream_));
  }
  Bench(const Bench&) = delete;  // owns the stream and handle
  Bench& operator=(const Bench&) = delete;

  void record(const std::string& type, const std::string& kernel, int64_t T, int64_t N, int64_t K, double us) {
    const double tf = 2.0 * T * N * K / (us * 1e-6) / 1e12;
    rows_.push_back({type, kernel, T, N, K, us, tf});
    std::printf("%-5s T=%-5lld N=%-6lld K=%-6lld %-26s %9.1f us %7.1f TFLOP/s\n", type.c_str(),
                static_cast<long long>(T), static_cast<long long>(N), static_cast<long long>(K), kernel.c_str(), us, tf);
    std::fflush(stdout);
  }

  // Every variant, cuBLAS fp16 and the generic path at one shape; returns the best variant's µs.
  void gemm_shape(uint32_t type, int64_t N, int64_t K, const std::vector<int64_t>& Ts) {
    std::mt19937_64 rng(N * 31 + K + type);
    const int64_t T_max = *std::max_element(Ts.begin(), Ts.end());
    const std::vector<uint8_t> raw = test::random_weights(type, N, K, rng);
    const std::vector<uint16_t> xh = test::random_activations(T_max * K, rng);
    const size_t wbytes = raw.size(), xbytes = xh.size() * 2, w16bytes = static_cast<size_t>(N * K * 2);
    const int nsets = static_cast<int>(std::clamp<size_t>(3 * kL2Bytes / (wbytes + xbytes) + 1, 2, 16));
    const int nsets16 = static_cast<int>(std::clamp<size_t>(3 * kL2Bytes / (w16bytes + xbytes) + 1, 2, 8));
    std::vector<std::unique_ptr<DevMem>> w, x, w16;
    for (int i = 0; i < std::max(nsets, nsets16); ++i) {
      if (i < nsets) {
        w.push_back(std::make_unique<DevMem>(wbytes));
        CUDA_CHECK(cudaMemcpy(w.back()->p, raw.data(), wbytes, cudaMemcpyHostToDevice));
      }
      x.push_back(std::make_unique<DevMem>(xbytes));
      CUDA_CHECK(cudaMemcpy(x.back()->p, xh.data(), xbytes, cudaMemcpyHostToDevice));
      if (i < nsets16) {
        w16.push_back(std::make_unique<DevMem>(w16bytes));
        kernels::dequant_to_f16(type, w[static_cast<size_t>(i % nsets)]->p, w16.back()->as<uint16_t>(), N, K, stream_);
      }
    }
    DevMem y(static_cast<size_t>(T_max * N * 4));
    DevMem scratch16(w16bytes);  // the generic path's dequantized weight
    std::vector<std::unique_ptr<DevMem>> packed;  // gemm_ws's repacked weight sets, made on first use
    const std::string tn = test::type_name(type);
    const auto& variants = staged_variants(type);
    for (int64_t T : Ts) {
      double best = 1e30;
      std::string best_name;
      for (size_t v = 0; v < variants.size(); ++v) {
        if (!test::variant_selected(variants[v].name)) continue;
        const double us = time_median_us(stream_, nsets, opt_.reps, [&](int s) {
          gemm_fast_variant(static_cast<int>(v), {w[static_cast<size_t>(s)]->p, type, N, K},
                            x[static_cast<size_t>(s)]->as<uint16_t>(), T, y.p, GemmEpilogue::StoreF32, stream_);
        });
        record(tn, variants[v].name, T, N, K, us);
        if (us < best) best = us, best_name = variants[v].name;
      }
      // gemm_ws on repacked copies of the same weight sets.
      double best_ws = 1e30;
      std::string best_ws_name;
      const auto& ws_variants = gemm_ws_variants(type);
      for (size_t v = 0; v < ws_variants.size(); ++v) {
        if (!test::variant_selected(ws_variants[v].name)) continue;
        if (packed.empty())
          for (int i = 0; i < nsets; ++i) {
            packed.push_back(std::make_unique<DevMem>(static_cast<size_t>(gemm_ws_repacked_bytes(type, N, K))));
            gemm_ws_repack({w[static_cast<size_t>(i)]->p, type, N, K}, packed.back()->p, stream_);
          }
        const double us = time_median_us(stream_, nsets, opt_.reps, [&](int s) {
          gemm_ws_variant(static_cast<int>(v), {packed[static_cast<size_t>(s)]->p, type, N, K, false},
                          x[static_cast<size_t>(s)]->as<uint16_t>(), T, y.p, GemmEpilogue::StoreF32, stream_);
        });
        record(tn, ws_variants[v].name, T, N, K, us);
        if (us < best_ws) best_ws = us, best_ws_name = ws_variants[v].name;
      }
      if (!packed.empty()) {
        // The residual-add epilogue (attn_output, ffn_down: y += X·Wᵀ) of the picked variant and of
        // the 64-row shared-A one (a candidate for the pick).
        std::vector<int> acc_variants{gemm_ws_pick_variant(type, T, N, K)};
        for (size_t v = 0; v < ws_variants.size(); ++v)
          if (ws_variants[v].tile_m == 64 && static_cast<int>(v) != acc_variants[0] &&
              test::variant_selected(ws_variants[v].name))
            acc_variants.push_back(static_cast<int>(v));
        for (const int pv : acc_variants) {
          const double us = time_median_us(stream_, nsets, opt_.reps, [&](int s) {
            gemm_ws_variant(pv, {packed[static_cast<size_t>(s)]->p, type, N, K, false},
                            x[static_cast<size_t>(s)]->as<uint16_t>(), T, y.p, GemmEpilogue::AccumulateF32, stream_);
          });
          record(tn, std::string(ws_variants[static_cast<size_t>(pv)].name) + " accumulate", T, N, K, us);
        }
      }
      if (!best_ws_name.empty() &&
          best_ws_name != ws_variants[static_cast<size_t>(gemm_ws_pick_variant(type, T, N, K))].name)
        best_ws_name += " (pick " + std::string(ws_variants[static_cast<size_t>(gemm_ws_pick_variant(type, T, N, K))].name) + ")";
      const int pick = has_staged(type) ? gemm_fast_pick_variant(type, T, N, K) : -1;
      if (pick >= 0 && !best_name.empty() && best_name != variants[static_cast<size_t>(pick)].name)
        best_name += " (pick " + std::string(variants[static_cast<size_t>(pick)].name) + ")";
      const double us_cublas = time_median_us(stream_, nsets16, opt_.reps, [&](int s) {
        cublas_gemm(w16[static_cast<size_t>(s)]->as<uint16_t>(), x[static_cast<size_t>(s)]->as<uint16_t>(), y.as<float>(), T, N, K);
      });
      record(tn, "cublas_f16", T, N, K, us_cublas);
      const double us_generic = time_median_us(stream_, nsets, opt_.reps, [&](int s) {
        kernels::dequant_to_f16(type, w[static_cast<size_t>(s)]->p, scratch16.as<uint16_t>(), N, K, stream_);
        cublas_gemm(scratch16.as<uint16_t>(), x[static_cast<size_t>(s)]->as<uint16_t>(), y.as<float>(), T, N, K);
      });
      record(tn, "generic(dequant+cublas)", T, N, K, us_generic);
      summary_.push_back({tn, best_name, T, N, K, best, us_cublas, us_generic, best_ws_name, best_ws});
      best_us_[key(type, T, N, K)] = std::min(best, best_ws);
    }
  }

  void swiglu_shape(uint32_t type, int64_t N, int64_t K, const std::vector<int64_t>& Ts) {
    std::mt19937_64 rng(4242 + type - kQ4K);
    const std::vector<uint8_t> g = test::random_weights(type, N, K, rng), u = test::random_weights(type, N, K, rng);
    const int64_t T_max = *std::max_element(Ts.begin(), Ts.end());
    const std::vector<uint16_t> xh = test::random_activations(T_max * K, rng);
    const int nsets = static_cast<int>(std::clamp<size_t>(3 * kL2Bytes / (2 * g.size() + xh.size() * 2) + 1, 2, 8));
    std::vector<std::unique_ptr<DevMem>> gd, ud, xd;
    for (int i = 0; i < nsets; ++i) {
      gd.push_back(std::make_unique<DevMem>(g.size()));
      ud.push_back(std::make_unique<DevMem>(u.size()));
      xd.push_back(std::make_unique<DevMem>(xh.size() * 2));
      CUDA_CHECK(cudaMemcpy(gd.back()->p, g.data(), g.size(), cudaMemcpyHostToDevice));
      CUDA_CHECK(cudaMemcpy(ud.back()->p, u.data(), u.size(), cudaMemcpyHostToDevice));
      CUDA_CHECK(cudaMemcpy(xd.back()->p, xh.data(), xh.size() * 2, cudaMemcpyHostToDevice));
    }
    DevMem a(static_cast<size_t>(T_max * N * 2));
    std::vector<std::unique_ptr<DevMem>> packed;  // gemm_ws's interleaved repacks, made on first use
    const auto& variants = staged_variants(type);
    const std::string tn = test::type_name(type);
    for (int64_t T : Ts) {
      double best = 1e30;
      for (size_t v = 0; v < variants.size(); ++v) {
        if (!test::variant_selected(variants[v].name)) continue;
        const double us = time_median_us(stream_, nsets, opt_.reps, [&](int s) {
          gemm_fast_swiglu_variant(static_cast<int>(v), {gd[static_cast<size_t>(s)]->p, type, N, K},
                                   {ud[static_cast<size_t>(s)]->p, type, N, K}, xd[static_cast<size_t>(s)]->as<uint16_t>(),
                                   T, a.as<uint16_t>(), stream_);
        });
        // FLOPs of both GEMMs.
        record(tn, std::string("swiglu ") + variants[v].name, T, 2 * N, K, us);
        best = std::min(best, us);
      }
      // gemm_ws on an interleaved gate/up repack of each set.
      const auto& ws_variants = gemm_ws_variants(type);
      for (size_t v = 0; v < ws_variants.size(); ++v) {
        if (!test::variant_selected(ws_variants[v].name)) continue;
        if (packed.empty())
          for (int i = 0; i < nsets; ++i) {
            packed.push_back(std::make_unique<DevMem>(static_cast<size_t>(gemm_ws_repacked_bytes(type, N, K, true))));
            gemm_ws_repack_swiglu({gd[static_cast<size_t>(i)]->p, type, N, K}, {ud[static_cast<size_t>(i)]->p, type, N, K},
                                  packed.back()->p, stream_);
          }
        const double us = time_median_us(stream_, nsets, opt_.reps, [&](int s) {
          gemm_ws_swiglu_variant(static_cast<int>(v), {packed[static_cast<size_t>(s)]->p, type, N, K, true},
                                 xd[static_cast<size_t>(s)]->as<uint16_t>(), T, a.as<uint16_t>(), stream_);
        });
        record(tn, std::string("swiglu ") + ws_variants[v].name, T, 2 * N, K, us);
        best = std::min(best, us);
      }
      best_swiglu_us_[key(type, T, N, K)] = best;
    }
  }

  void gemv_shapes() {
    // 12288 and 8192 rows: a 7B layer's Q + K + V and Q + K in one launch (the engine's group of
  // matrices repacked one after another walks the same tiles as one matrix of their rows).
  const int64_t shapes[][2] = {{4096, 4096}, {11008, 4096}, {4096, 11008}, {32000, 4096}, {12288, 4096}, {8192, 4096}};
    for (uint32_t type : test::kFastTypes) {
      if (!opt_.wants(type)) continue;
      for (const auto& s : shapes) {
        const int64_t N = s[0], K = s[1];
        std::mt19937_64 rng(N + K);
        const std::vector<uint8_t> raw = test::random_weights(type, N, K, rng);
        const std::vector<uint16_t> xh = test::random_activations(8 * K, rng);
        const int nsets = static_cast<int>(std::clamp<size_t>(3 * kL2Bytes / raw.size() + 1, 2, 16));
        std::vector<std::unique_ptr<DevMem>> w;
        for (int i = 0; i < nsets; ++i) {
          w.push_back(std::make_unique<DevMem>(raw.size()));
          CUDA_CHECK(cudaMemcpy(w.back()->p, raw.data(), raw.size(), cudaMemcpyHostToDevice));
        }
        DevMem x(xh.size() * 2), y(static_cast<size_t>(8 * N * 4));
        CUDA_CHECK(cudaMemcpy(x.p, xh.data(), xh.size() * 2, cudaMemcpyHostToDevice));
        for (int64_t T : {1, 2, 4, 8}) {
          const double us = time_median_us(stream_, nsets, opt_.reps, [&](int i) {
            gemv_fast({w[static_cast<size_t>(i)]->p, type, N, K}, x.as<uint16_t>(), T, y.p, GemmEpilogue::StoreF32, stream_);
          });
          // Back to back, as in a decode step (one event pair around kBatch launches on rotating
          // weight sets): the launch gap of a lone timed kernel is excluded.
          constexpr int kBatch = 20;
          const double us_batch = time_median_us(stream_, nsets, std::max(3, opt_.reps / 4), [&](int i) {
                                    for (int b = 0; b < kBatch; ++b)
                                      gemv_fast({w[static_cast<size_t>((i + b) % nsets)]->p, type, N, K}, x.as<uint16_t>(), T,
                                                y.p, GemmEpilogue::StoreF32, stream_);
                                  }) / kBatch;
          std::printf("%-5s T=%-5lld N=%-6lld K=%-6lld %-26s %9.1f us %7.0f GB/s (weights); back to back %7.1f us %7.0f GB/s\n",
                      test::type_name(type), static_cast<long long>(T), static_cast<long long>(N),
                      static_cast<long long>(K), "gemv_fast", us, raw.size() / (us * 1e-6) / 1e9, us_batch,
                      raw.size() / (us_batch * 1e-6) / 1e9);
          rows_.push_back({test::type_name(type), "gemv_fast", T, N, K, us, 2.0 * T * N * K / (us * 1e-6) / 1e12});
        }
      }
    }
  }

  void print_summary() const {
    std::printf("\n== summary (TFLOP/s): gemm_ws (warp-specialized, repacked weights) and the best staged gemm_fast "
                "variant vs cuBLAS fp16 and the generic path\n");
    std::printf("%-5s %-5s %-6s %-6s %-22s %8s %7s %-36s %8s %8s %8s\n", "type", "T", "N", "K", "gemm_ws", "ws",
                "ws/cb", "best staged", "staged", "cublas", "generic");
    for (const auto& s : summary_) {
      const double f = 2.0 * s.T * s.N * s.K / 1e6;  // MFLOP; MFLOP / us = TFLOP/s
      const bool ws = !s.ws_name.empty(), staged = !s.name.empty() && s.us < 1e29;
      std::printf("%-5s %-5lld %-6lld %-6lld %-22s %8.1f %6.2fx %-36s %8.1f %8.1f %8.1f\n", s.type.c_str(),
                  static_cast<long long>(s.T), static_cast<long long>(s.N), static_cast<long long>(s.K),
                  ws ? s.ws_name.c_str() : "-", ws ? f / s.us_ws : 0.0, ws ? s.us_cublas / s.us_ws : 0.0,
                  staged ? s.name.c_str() : "-", staged ? f / s.us : 0.0, f / s.us_cublas, f / s.us_generic);
    }
    // GEMM-only prefill estimates: Q4_K_M and Q5_K_M put q6_K in attn_v and ffn_down of 16 of the
    // 32 layers (profiles/models/llama-7b-q4km.yaml, llama-7b-q5km.yaml), the base type elsewhere.
    for (const auto& [mix, base] : {std::pair{"Q4_K_M", kQ4K}, std::pair{"Q5_K_M", kQ5K}})
      for (int64_t T : {512, 2048}) {
        auto t = [&](uint32_t type, int64_t N, int64_t K) {
          auto it = best_us_.find(key(type, T, N, K));
          return it == best_us_.end() ? -1.0 : it->second;
        };
        const double qkvo = t(base, 4096, 4096), v6 = t(kQ6K, 4096, 4096), gu = t(base, 11008, 4096),
                     d4 = t(base, 4096, 11008), d6 = t(kQ6K, 4096, 11008);
        if (qkvo < 0 || v6 < 0 || gu < 0 || d4 < 0 || d6 < 0) continue;
        const auto sw = best_swiglu_us_.find(key(base, T, 11008, 4096));
        const double gate_up = sw != best_swiglu_us_.end() ? std::min(sw->second, 2 * gu) : 2 * gu;
        const double layer4 = 4 * qkvo + gate_up + d4, layer6 = 3 * qkvo + v6 + gate_up + d6;
        const double total_us = 16 * (layer4 + layer6);
        std::printf("GEMM-only 7B %s prefill at T=%lld: %.0f us of layer GEMMs = %.0f tokens/s (gate+up %s)\n", mix,
                    static_cast<long long>(T), total_us, T / (total_us * 1e-6),
                    sw != best_swiglu_us_.end() && sw->second < 2 * gu ? "fused" : "unfused");
      }
  }

  void write_csv() const {
    if (opt_.csv.empty()) return;
    FILE* f = std::fopen(opt_.csv.c_str(), "w");
    if (f == nullptr) {
      std::fprintf(stderr, "gemm_bench: cannot write %s\n", opt_.csv.c_str());
      return;
    }
    std::fprintf(f, "type,kernel,T,N,K,median_us,tflops\n");
    for (const auto& r : rows_)
      std::fprintf(f, "%s,%s,%lld,%lld,%lld,%.2f,%.2f\n", r.type.c_str(), r.kernel.c_str(), static_cast<long long>(r.T),
                   static_cast<long long>(r.N), static_cast<long long>(r.K), r.us, r.tflops);
    std::fclose(f);
  }

 private:
  struct Summary {
    std::string type, name;
    int64_t T, N, K;
    double us, us_cublas, us_generic;
    std::string ws_name;  // empty: no gemm_ws variant timed
    double us_ws;
  };
  static std::string key(uint32_t type, int64_t T, int64_t N, int64_t K) {
    return std::to_string(type) + "/" + std::to_string(T) + "/" + std::to_string(N) + "/" + std::to_string(K);
  }
  void cublas_gemm(const uint16_t* w16, const uint16_t* x16, float* y, int64_t T, int64_t N, int64_t K) {
    const float alpha = 1.0f, beta = 0.0f;
    CUBLAS_CHECK(cublasGemmEx(cublas_, CUBLAS_OP_T, CUBLAS_OP_N, static_cast<int>(N), static_cast<int>(T),
                              static_cast<int>(K), &alpha, w16, CUDA_R_16F, static_cast<int>(K), x16, CUDA_R_16F,
                              static_cast<int>(K), &beta, y, CUDA_R_32F, static_cast<int>(N), CUBLAS_COMPUTE_32F,
                              CUBLAS_GEMM_DEFAULT));
  }

  Options opt_;
  cudaStream_t stream_ = nullptr;
  cublasHandle_t cublas_ = nullptr;
  std::vector<Row> rows_;
  std::vector<Summary> summary_;
  std::map<std::string, double> best_us_;
  std::map<std::string, double> best_swiglu_us_;  // by key(type, T, N, K)
};

void print_device() {
  int dev = 0;
  CUDA_CHECK(cudaGetDevice(&dev));
  cudaDeviceProp p{};
  CUDA_CHECK(cudaGetDeviceProperties(&p, dev));
  int clock_khz = 0, mem_khz = 0;
  cudaDeviceGetAttribute(&clock_khz, cudaDevAttrClockRate, dev);
  cudaDeviceGetAttribute(&mem_khz, cudaDevAttrMemoryClockRate, dev);
  std::printf("device: %s, %d SMs, sm_%d%d, L2 %d MB, max SM clock %d MHz, smem/block opt-in %zu KB\n", p.name,
              p.multiProcessorCount, p.major, p.minor, p.l2CacheSize >> 20, clock_khz / 1000,
              p.sharedMemPerBlockOptin >> 10);
}

int run(int argc, char** argv) {
  Options o;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--reps" && i + 1 < argc)
      o.reps = std::max(5, std::atoi(argv[++i]));
    else if (a == "--csv" && i + 1 < argc)
      o.csv = argv[++i];
    else if (a == "--quick")
      o.quick = true;
    else if (a == "--types" && i + 1 < argc) {
      const std::string list = argv[++i];
      for (size_t start = 0; start <= list.size();) {
        const size_t comma = std::min(list.find(',', start), list.size());
        const std::string name = list.substr(start, comma - start);
        const auto it = std::find_if(std::begin(test::kWsTypes), std::end(test::kWsTypes),
                                     [&](uint32_t t) { return name == test::type_name(t); });
        if (it == std::end(test::kWsTypes)) {
          std::fprintf(stderr, "gemm_bench: --types: unknown weight type '%s' (q4_K, q5_K, q6_K, q8_0, f16)\n", name.c_str());
          return 2;
        }
        o.types.push_back(*it);
        start = comma + 1;
      }
    } else {
      std::fprintf(stderr, "usage: gemm_bench [--reps N] [--csv FILE] [--quick] [--types q5_K,q6_K,...]\n");
      return 2;
    }
  }
  print_device();
  Bench b(o);
  const std::vector<int64_t> Ts = o.quick ? std::vector<int64_t>{512} : std::vector<int64_t>{512, 2048};
  // 12288 and 8192 rows: a 7B layer's Q + K + V and Q + K in one launch (the engine's group of
  // matrices repacked one after another walks the same tiles as one matrix of their rows).
  const int64_t shapes[][2] = {{4096, 4096}, {11008, 4096}, {4096, 11008}, {32000, 4096}, {12288, 4096}, {8192, 4096}};
  // f16: the same pipeline without decode arithmetic, the baseline that prices the dequantization.
  for (uint32_t type : {kQ4K, kQ5K, kQ6K, kQ8_0, test::kF16})
    for (const auto& s : shapes) {
      if ((o.quick && (type == kQ8_0 || type == test::kF16)) || !o.wants(type)) continue;
      if (type == kQ5K && s[0] == 32000) continue;  // Q5_K_M's output head is q6_K
      if (type != kQ4K && (s[0] == 12288 || s[0] == 8192)) continue;  // Q, K (and V) of the Q4_K_M mix
      b.gemm_shape(type, s[0], s[1], Ts);
    }
  for (uint32_t type : {kQ4K, kQ5K})
    if (o.wants(type)) b.swiglu_shape(type, 11008, 4096, Ts);
  b.gemv_shapes();
  b.write_csv();
  b.print_summary();
  return 0;
}

}  // namespace
}  // namespace pfx::kernels::bench

int main(int argc, char** argv) {
  try {
    return pfx::kernels::bench::run(argc, argv);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "gemm_bench: %s\n", e.what());
    return 1;
  }
}

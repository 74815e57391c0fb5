// gemv_bench: the decode mat-vec's kernels side by side (gemv_fast_kernel: staged, direct_w2/w4/w8/
// w16, seq_d2/d4 and auto, the engine's pick) at the llama-2-7B decode shapes, in effective weight
// bandwidth.
// q4_K and q6_K also on gemm_ws's repack (kernels/gemv_ws.h: ws_w<n> = n warps per tile splitting
// k, ws_chain8 / ws_chain4 the generic order's one-chain kernel with an 8- / 4-deep ring, ws_auto
// the pick); their GB/s count the GGUF bytes too, so that every column of a
// row is the same matrix's work per time.
// Not a test: it checks nothing but CUDA errors (the kernels' correctness is test_gemm_fast's).
// Per (type, shape, T, kernel): launches back to back as in a decode step, each on the next of
// several weight sets whose total exceeds 3x the 50 MB L2 (no launch finds its weights in L2), one
// event pair around kBatch launches; the median of --reps such batches. GB/s = the weight bytes
// one launch reads / its time.
//   gemv_bench [--reps N] [--T 1,8] [--types q4_K,q5_K,q6_K,q8_0] [--ws-only] [--csv FILE]
// --ws-only: only the kernels on the repack (ws_*), for A/B runs of those.
#include <cuda_runtime_api.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <map>
#include <memory>
#include <random>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "gemm_reference.h"
#include "kernels/cuda_check.h"
#include "kernels/gemm_fast.h"
#include "kernels/gemm_ws.h"
#include "kernels/gemv_ws.h"

namespace pfx::kernels::bench {
namespace {

constexpr size_t kL2Bytes = 50u << 20;
constexpr int kBatch = 20;  // launches per timed batch

struct Options {
  int reps = 25;
  std::vector<int64_t> Ts{1, 8};
  std::vector<uint32_t> types{test::kQ4K, test::kQ5K, test::kQ6K, test::kQ8_0};
  std::string csv;
  bool ws_only = false;
};

// Weight sets of one shape on the device (rotated through so that no launch hits L2).
class WeightSets {
 public:
  WeightSets(const std::vector<uint8_t>& raw, size_t count) : bytes_(raw.size()) {
    for (size_t i = 0; i < count; ++i) {
      void* p = nullptr;
      CUDA_CHECK(cudaMalloc(&p, bytes_));
      CUDA_CHECK(cudaMemcpy(p, raw.data(), bytes_, cudaMemcpyHostToDevice));
      sets_.push_back(p);
    }
  }
  ~WeightSets() {
    for (void* p : sets_) CUDA_CHECK_NOEXCEPT(cudaFree(p));
  }
  WeightSets(const WeightSets&) = delete;  // owns the allocations
  WeightSets& operator=(const WeightSets&) = delete;
  const void* operator[](size_t i) const { return sets_[i % sets_.size()]; }
  size_t bytes() const { return bytes_; }
  size_t count() const { return sets_.size(); }

 private:
  size_t bytes_;
  std::vector<void*> sets_;
};

// Median µs per launch of `launch(i)` run kBatch times back to back (i = 0, 1, ... across the
// whole run, so consecutive launches read different weight sets), over `reps` timed batches after
// one warm-up batch.
template <class Launch>
double median_us_per_launch(cudaStream_t s, int reps, Launch&& launch) {
  cudaEvent_t start = nullptr, stop = nullptr;
  CUDA_CHECK(cudaEventCreate(&start));
  CUDA_CHECK(cudaEventCreate(&stop));
  size_t i = 0;
  for (int b = 0; b < kBatch; ++b) launch(i++);
  std::vector<double> us;
  for (int r = 0; r < reps; ++r) {
    CUDA_CHECK(cudaEventRecord(start, s));
    for (int b = 0; b < kBatch; ++b) launch(i++);
    CUDA_CHECK(cudaEventRecord(stop, s));
    CUDA_CHECK(cudaEventSynchronize(stop));
    float ms = 0;
    CUDA_CHECK(cudaEventElapsedTime(&ms, start, stop));
    us.push_back(1000.0 * ms / kBatch);
  }
  CUDA_CHECK(cudaEventDestroy(start));
  CUDA_CHECK(cudaEventDestroy(stop));
  std::sort(us.begin(), us.end());
  return us[us.size() / 2];
}

struct Result {  // one timed (type, kernel, T, shape)
  std::string type;
  int64_t T, N, K;
  std::string kernel;
  double us, gbs;  // median µs per launch; weight bytes / that time
};

std::vector<std::string> split(const std::string& s) {
  std::vector<std::string> out;
  std::stringstream ss(s);
  for (std::string item; std::getline(ss, item, ',');)
    if (!item.empty()) out.push_back(item);
  return out;
}

uint32_t type_of(const std::string& name) {
  for (uint32_t t : {test::kQ4K, test::kQ5K, test::kQ6K, test::kQ8_0, test::kF16})
    if (name == test::type_name(t)) return t;
  std::fprintf(stderr, "gemv_bench: unknown type %s (q4_K, q5_K, q6_K, q8_0, f16)\n", name.c_str());
  std::exit(2);
}

// One row per timed (type, kernel, T, shape).
void write_csv(const std::string& path, const std::vector<Result>& results) {
  std::ofstream f(path);
  if (!f) throw std::runtime_error("cannot write " + path);
  f << "type,kernel,T,N,K,median_us,gbs\n";
  for (const auto& r : results)
    f << r.type << ',' << r.kernel << ',' << r.T << ',' << r.N << ',' << r.K << ',' << r.us << ',' << r.gbs << '\n';
}

int run(int argc, char** argv) {
  Options o;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--reps" && i + 1 < argc) {
      o.reps = std::max(5, std::atoi(argv[++i]));
    } else if (a == "--T" && i + 1 < argc) {
      o.Ts.clear();
      for (const auto& t : split(argv[++i])) o.Ts.push_back(std::clamp<int64_t>(std::atoll(t.c_str()), 1, kGemvMaxT));
    } else if (a == "--types" && i + 1 < argc) {
      o.types.clear();
      for (const auto& t : split(argv[++i])) o.types.push_back(type_of(t));
    } else if (a == "--csv" && i + 1 < argc) {
      o.csv = argv[++i];
    } else if (a == "--ws-only") {
      o.ws_only = true;
    } else {
      std::fprintf(stderr, "usage: gemv_bench [--reps N] [--T 1,8] [--types q4_K,q5_K,q6_K,q8_0] [--ws-only] [--csv FILE]\n");
      return 2;
    }
  }
  cudaStream_t stream = nullptr;
  CUDA_CHECK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
  const int64_t shapes[][2] = {{4096, 4096}, {11008, 4096}, {4096, 11008}, {32000, 4096}};
  std::vector<Result> results;
  for (uint32_t type : o.types) {
    for (const auto& sh : shapes) {
      const int64_t N = sh[0], K = sh[1];
      std::mt19937_64 rng(static_cast<uint64_t>(N * 7 + K + type));
      const std::vector<uint8_t> raw = test::random_weights(type, N, K, rng);
      const WeightSets w(raw, std::clamp<size_t>(3 * kL2Bytes / raw.size() + 1, 2, 32));
      const std::vector<uint16_t> xh = test::random_activations(kGemvMaxT * K, rng);
      void *x = nullptr, *y = nullptr;
      CUDA_CHECK(cudaMalloc(&x, xh.size() * 2));
      CUDA_CHECK(cudaMemcpy(x, xh.data(), xh.size() * 2, cudaMemcpyHostToDevice));
      CUDA_CHECK(cudaMalloc(&y, static_cast<size_t>(kGemvMaxT * N) * 4));
      std::vector<GemvKernel> kernels;
      if (!o.ws_only) {
        kernels = gemv_fast_kernels(type);
        kernels.push_back(GemvKernel::Auto);
      }
      const auto time = [&](int64_t T, const std::string& name, const auto& launch) {
        const double us = median_us_per_launch(stream, o.reps, launch);
        const Result r{test::type_name(type), T, N, K, name, us, w.bytes() / (us * 1e-6) / 1e9};
        std::printf("%-5s T=%lld N=%-6lld K=%-6lld %-11s %8.2f us %7.0f GB/s\n", r.type.c_str(), static_cast<long long>(T),
                    static_cast<long long>(N), static_cast<long long>(K), r.kernel.c_str(), us, r.gbs);
        std::fflush(stdout);
        results.push_back(r);
      };
      // The same weight sets repacked for gemv_ws (as many, so that no launch hits L2 either).
      std::unique_ptr<WeightSets> packed;
      if (gemv_ws_unsupported_reason({reinterpret_cast<void*>(uintptr_t{256}), type, N, K, false}, 1).empty()) {
        std::vector<uint8_t> host(static_cast<size_t>(gemm_ws_repacked_bytes(type, N, K)));
        const WeightSets one(host, 1);
        gemm_ws_repack({w[0], type, N, K}, const_cast<void*>(one[0]), stream);
        CUDA_CHECK(cudaStreamSynchronize(stream));
        CUDA_CHECK(cudaMemcpy(host.data(), one[0], host.size(), cudaMemcpyDeviceToHost));
        packed = std::make_unique<WeightSets>(host, w.count());
      }
      for (int64_t T : o.Ts) {
        for (GemvKernel k : kernels)
          time(T, gemv_kernel_name(k), [&](size_t i) {
            gemv_fast_kernel(k, {w[i], type, N, K}, static_cast<const uint16_t*>(x), T, y, GemmEpilogue::StoreF32, stream);
          });
        if (!packed) continue;
        for (const int warps : {kGemvWsGenericOrder, kGemvWsChainShallow, 2, 4, 8, 16, 0})
          time(T, warps == 0 ? std::string("ws_auto") : warps == kGemvWsGenericOrder ? std::string("ws_chain8")
                                                       : warps == kGemvWsChainShallow ? std::string("ws_chain4")
                                                                                       : "ws_w" + std::to_string(warps),
               [&](size_t i) {
            gemv_ws({(*packed)[i], type, N, K, false}, static_cast<const uint16_t*>(x), T, y,
                    GemmEpilogue::StoreF32, stream, warps);
          });
      }
      CUDA_CHECK(cudaFree(x));
      CUDA_CHECK(cudaFree(y));
    }
  }
  CUDA_CHECK(cudaStreamDestroy(stream));

  // Summary: per (type, shape, T) every kernel's GB/s (columns in the order they ran), and the
  // ratios auto/staged and ws_auto/auto where both exist.
  std::printf("\n== gemv summary (GB/s effective, GGUF weight bytes; median of %d batches of %d launches)\n", o.reps,
              kBatch);
  std::vector<std::string> columns, order;
  std::map<std::string, std::map<std::string, double>> table;
  for (const auto& r : results) {
    const std::string key = r.type + " " + std::to_string(r.T) + " " + std::to_string(r.N) + "x" + std::to_string(r.K);
    if (!table.count(key)) order.push_back(key);
    if (std::find(columns.begin(), columns.end(), r.kernel) == columns.end()) columns.push_back(r.kernel);
    table[key][r.kernel] = r.gbs;
  }
  std::printf("%-5s %-2s %-12s", "type", "T", "N x K");
  for (const auto& c : columns) std::printf(" %10s", c.c_str());
  std::printf(" %8s %8s\n", "auto/st", "ws/auto");
  for (const auto& key : order) {
    const auto& m = table[key];
    std::istringstream ks(key);
    std::string type, T, shape;
    ks >> type >> T >> shape;
    std::printf("%-5s %-2s %-12s", type.c_str(), T.c_str(), shape.c_str());
    for (const auto& c : columns) {
      const auto it = m.find(c);
      if (it == m.end()) std::printf(" %10s", "-");
      else std::printf(" %10.0f", it->second);
    }
    const auto ratio = [&](const char* num, const char* den) {
      const auto a = m.find(num), b = m.find(den);
      if (a == m.end() || b == m.end()) return std::string("       -");
      char buf[16];
      std::snprintf(buf, sizeof buf, "%7.2fx", a->second / b->second);
      return std::string(buf);
    };
    std::printf(" %s %s\n", ratio("auto", "staged").c_str(), ratio("ws_auto", "auto").c_str());
  }
  if (!o.csv.empty()) write_csv(o.csv, results);
  return 0;
}

}  // namespace
}  // namespace pfx::kernels::bench

// A CUDA error or an unwritable --csv ends the run: the message, exit code 1.
int main(int argc, char** argv) try {
  return pfx::kernels::bench::run(argc, argv);
} catch (const std::exception& e) {
  std::fprintf(stderr, "gemv_bench: %s\n", e.what());
  return 1;
}

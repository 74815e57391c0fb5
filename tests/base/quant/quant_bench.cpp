// Single-thread quantizer speed (ns per weight) for each supported type on N(0, 0.02) data.
// Not a test (timing never lives in a test): run build-*/tests/base/quant/quant_bench.
#include <chrono>
#include <cstdio>
#include <random>
#include <vector>

#include "quant/quantize.h"
#include "quant/types.h"

int main() {
  using pfx::quant::Type;
  const int64_t cols = 4096, rows = 256;
  std::mt19937 rng(1);
  std::normal_distribution<float> dist(0.f, 0.02f);
  std::vector<float> x(static_cast<size_t>(cols * rows));
  for (float& v : x) v = dist(rng);
  for (Type t : {Type::F16, Type::BF16, Type::Q8_0, Type::Q6_K, Type::Q4_K}) {
    const int64_t rb = pfx::quant::row_bytes(t, cols);
    std::vector<uint8_t> q(static_cast<size_t>(rb * rows));
    double best = 1e30;
    for (int rep = 0; rep < 3; ++rep) {
      const auto t0 = std::chrono::steady_clock::now();
      for (int64_t r = 0; r < rows; ++r) pfx::quant::quantize_row(t, x.data() + r * cols, q.data() + r * rb, cols);
      const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
      best = std::min(best, s);
    }
    const double ns = best * 1e9 / static_cast<double>(cols * rows);
    std::printf("%-5s %7.2f ns/weight  (6.5e9 weights: %6.1f s on 1 core, %5.1f s on 16)\n",
                std::string(pfx::quant::type_name(t)).c_str(), ns, ns * 6.5, ns * 6.5 / 16);
  }
}

// Deterministic quantizer test input, identical on every platform: std::mt19937 is fully
// specified by the C++ standard, and the mapping to floats below uses only exact operations
// (no <random> distributions, whose algorithms are implementation-defined).
// tests/base/quant/data/ggml_ref_*.bin hold ggml's reference quantization of this input.
#pragma once
#include <cmath>
#include <cstdint>
#include <random>
#include <vector>

namespace pfx::test {

constexpr int kGoldenRows = 64;
constexpr int kGoldenCols = 512;  // two k-quant super-blocks per row

inline std::vector<float> golden_input() {
  std::mt19937 rng(20240601u);
  std::vector<float> x(static_cast<size_t>(kGoldenRows) * kGoldenCols);
  for (int r = 0; r < kGoldenRows; ++r) {
    for (int i = 0; i < kGoldenCols; ++i) {
      // t uniform in [-1, 1) on a 2^-23 grid: exact in float.
      const float t = static_cast<float>(static_cast<int32_t>(rng() >> 8) - (1 << 23)) * 0x1p-23f;
      float v = 0.f;
      switch (r % 6) {
        case 0: v = t; break;                                   // uniform
        case 1: v = t * t * t * 3.f; break;                     // heavier tails
        case 2: v = std::fabs(t) * 0.02f; break;                // non-negative, small
        case 3: v = -std::fabs(t) - 0.25f; break;               // all negative
        case 4: v = (i % 7 == 0) ? 0.f : t * 0.001f; break;     // exact zeros mixed in
        case 5: v = (i / 32) % 3 == 0 ? 0.5f : t * 40.f; break; // constant sub-blocks, large values
      }
      x[static_cast<size_t>(r) * kGoldenCols + static_cast<size_t>(i)] = v;
    }
  }
  // Whole rows that are degenerate: all zeros, and a constant.
  for (int i = 0; i < kGoldenCols; ++i) {
    x[static_cast<size_t>(kGoldenRows - 2) * kGoldenCols + static_cast<size_t>(i)] = 0.f;
    x[static_cast<size_t>(kGoldenRows - 1) * kGoldenCols + static_cast<size_t>(i)] = 1.25f;
  }
  return x;
}

}  // namespace pfx::test

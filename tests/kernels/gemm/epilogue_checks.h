// The checks the GEMM tests of tests/kernels/gemm (gemm_fast, gemv, gemm_ws) share: the three
// epilogues of one launch on random data (StoreF32 into a poisoned buffer, AccumulateF32 onto
// random fp32 values, StoreF16) against the float64 reference with a tolerance per element, the
// X = identity product that must give the fp16 weights bit for bit, and the random fp32 values and
// fp16-range helpers they use. Header-only; GPU tests (gpu_test_support.h).
#pragma once
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <random>
#include <string>
#include <vector>

#include "gemm_reference.h"
#include "kernels/gemm_fast.h"
#include "kernels/gpu_test_support.h"
#include "quant/fp16.h"

namespace pfx::kernels::test {

// fp32 values uniform in [-4, 4], none within 1e-3 of 0.
inline std::vector<float> random_floats(size_t n, std::mt19937_64& rng) {
  std::uniform_real_distribution<float> u(-4.0f, 4.0f);
  std::vector<float> v(n);
  for (auto& x : v) do x = u(rng); while (std::fabs(x) < 1e-3f);
  return v;
}

// fp16 has no finite value above 65504: a value that rounds to ±inf (|v| >= 65520) compares at that
// boundary, so an fp16 output of ±inf matches a reference beyond it (the generic path's fp32 -> fp16
// conversion overflows the same way).
inline constexpr double kFp16Overflow = 65520.0;
inline std::vector<double> fp16_range(std::vector<double> v) {
  for (auto& x : v) x = std::clamp(x, -kFp16Overflow, kFp16Overflow);  // NaN stays NaN
  return v;
}
inline std::vector<double> halves_in_range(const std::vector<uint16_t>& h) { return fp16_range(halves_to_double(h)); }

// How the StoreF16 output is compared: as is, or with both sides clamped at fp16's overflow.
enum class F16Compare { kExact, kClampOverflow };

// One case of T tokens × N outputs with reference `ref`: the output buffers and the accumulate
// start y0 (drawn from rng on construction, once for all the launches checked against it).
struct EpilogueCase {
  const Reference& ref;
  int64_t T, N;
  std::vector<float> y0;
  std::vector<double> acc_ref;  // y0 + ref.y
  DeviceBuffer<float> y;
  DeviceBuffer<uint16_t> y16;

  EpilogueCase(const Reference& r, int64_t tokens, int64_t outputs, std::mt19937_64& rng)
      : ref(r), T(tokens), N(outputs), y0(random_floats(static_cast<size_t>(tokens * outputs), rng)),
        acc_ref(r.y.size()), y(static_cast<size_t>(tokens * outputs)), y16(static_cast<size_t>(tokens * outputs)) {
    for (size_t i = 0; i < acc_ref.size(); ++i) acc_ref[i] = static_cast<double>(y0[i]) + ref.y[i];
  }

  // launch(out, epilogue) runs the kernel under test into `out` (float* or uint16_t*). Labels are
  // `label` + " StoreF32" etc.; tol(i, r) bounds the fp32 product's error at element i, the
  // accumulate adds one fp32 ulp of the sum, fp16 one fp16 ulp.
  template <class Launch, class Tol>
  void check(const std::string& label, Launch launch, Tol tol, F16Compare f16) {
    y.poison();
    launch(static_cast<void*>(y.get()), GemmEpilogue::StoreF32);
    EXPECT_TRUE(compare(label + " StoreF32", to_double(y.download()), ref.y, tol));
    y.upload(y0);
    launch(static_cast<void*>(y.get()), GemmEpilogue::AccumulateF32);
    EXPECT_TRUE(compare(label + " AccumulateF32", to_double(y.download()), acc_ref,
                        [&](size_t i, double r) { return tol(i, r) + std::fabs(r) * 0x1p-23; }));
    y16.poison();
    launch(static_cast<void*>(y16.get()), GemmEpilogue::StoreF16);
    const auto f16_tol = [&](size_t i, double r) { return tol(i, r) + fp16_ulp(r); };
    if (f16 == F16Compare::kClampOverflow)
      EXPECT_TRUE(compare(label + " StoreF16", halves_in_range(y16.download()), fp16_range(ref.y), f16_tol));
    else
      EXPECT_TRUE(compare(label + " StoreF16", halves_to_double(y16.download()), ref.y, f16_tol));
  }
};

// X = identity [T, K], T = K: y[t][n] must be w16[n][t] exactly, as fp16 output g16 (either zero
// for a zero) and as fp32 output g32 (its fp32 value) of N rows. Reports the first 8 mismatches
// under `label`, then whether any.
inline void expect_identity_product(const std::string& label, const std::vector<uint16_t>& w16, int64_t K,
                                    const std::vector<uint16_t>& g16, const std::vector<float>& g32, int64_t T,
                                    int64_t N) {
  int64_t bad = 0;
  for (int64_t t = 0; t < T; ++t) {
    for (int64_t n = 0; n < N; ++n) {
      const uint16_t want = w16[static_cast<size_t>(n * K + t)];
      const uint16_t got = g16[static_cast<size_t>(t * N + n)];
      const float got32 = g32[static_cast<size_t>(t * N + n)];
      const bool both_zero = (want & 0x7FFF) == 0 && (got & 0x7FFF) == 0;
      const bool ok16 = got == want || both_zero;
      const bool ok32 = got32 == quant::fp16_to_fp32(want);  // -0 == +0
      if (!ok16 || !ok32) {
        if (++bad <= 8)
          ADD_FAILURE() << label << ": w[" << n << "][" << t << "] want 0x" << std::hex << want << " got fp16 0x" << got
                        << std::dec << " / fp32 " << got32;
      }
    }
  }
  EXPECT_EQ(bad, 0) << label;
  if (bad == 0) std::printf("  %s: all %lld weights bit-identical\n", label.c_str(), static_cast<long long>(T * N));
}

}  // namespace pfx::kernels::test

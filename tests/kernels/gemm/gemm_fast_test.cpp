// GPU tests of the fast quantized GEMM / GEMV (label gpu; each skips with the reason where no GPU
// is usable). Every variant of every weight type is checked, on random data (never zeros),
// with outputs poisoned (NaN) before each run:
//  - bit-exact fp16 weights: X = identity makes Y = W16ᵀ exactly, so every dequantized weight is
//    compared bit for bit with fp16_rn(quant::dequantize_row);
//  - vs a float64 CPU reference at ragged token counts, every epilogue, and the fused SwiGLU;
//  - vs cuBLAS on the same fp16 weights (the generic path's arithmetic) at 7B shapes: near-bitwise;
//  - run-to-run bit-identical output.
// Tolerances: fp32 accumulation of exact products differs from float64 by a few fp32 ulps of
// Σ|x·w| (abssum); 1e-5·abssum leaves room for the tensor cores' accumulation order while one
// wrong weight (≈ abssum/K ≥ 1e-4·abssum at these K) or a wrong scale still fails.
#include <cublas_v2.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "epilogue_checks.h"
#include "gemm_reference.h"
#include "kernels/cuda_check.h"
#include "kernels/gemm_fast.h"
#include "kernels/gemm_fast_variants.h"
#include "kernels/kernels.h"
#include "kernels/gpu_test_support.h"
#include "quant/fp16.h"

namespace pfx::kernels::test {
namespace {

constexpr int64_t kSmallN = 264;  // two full 128-row tiles and a ragged 8 (one and a ragged half of 256)
constexpr double kRelTol = 1e-5;  // × Σ|x·w|, vs the float64 reference
constexpr double kCublasTol = 2e-6;  // × Σ|x·w|, vs cuBLAS on identical fp16 operands

// K of the small problems: q6_K (1050-byte rows) and q8_0 (1156-byte rows) start rows at every
// even offset mod 16, so every misalignment of the staging is exercised.
int64_t small_k(uint32_t t) { return t == kQ6K ? 1280 : t == kQ8_0 ? 1088 : 1024; }  // f16: 1024

struct Weights {
  uint32_t type;
  int64_t N, K;
  std::vector<uint8_t> raw;
  std::vector<uint16_t> w16;  // reference fp16 weights [N, K]
  std::unique_ptr<DeviceBuffer<uint8_t>> dev;
  QuantMatrixView view() const { return {dev->get(), type, N, K}; }
};

Weights make_weights(uint32_t type, int64_t N, int64_t K, uint64_t seed) {
  std::mt19937_64 rng(seed);
  Weights w{type, N, K, random_weights(type, N, K, rng), {}, nullptr};
  w.w16 = reference_weights_f16(type, w.raw, N, K);
  w.dev = std::make_unique<DeviceBuffer<uint8_t>>(w.raw);
  return w;
}

std::string case_label(uint32_t type, const GemmVariantInfo& v, int64_t T) {
  return std::string(type_name(type)) + " " + v.name + " T=" + std::to_string(T);
}
std::string label(uint32_t type, const GemmVariantInfo& v, int64_t T, const char* what) {
  return case_label(type, v, T) + " " + what;
}

// Random activations against the float64 reference on the small shape: for each type, weights
// seeded weight_seed + type; for each T, the activations drawn from rng (then `check` may draw
// more from it, in its own order), uploaded, and check(type, weights, T, x, reference).
template <class Types, class Check>
void for_each_random_case(const Types& types, std::initializer_list<int64_t> Ts, uint64_t weight_seed, std::mt19937_64& rng,
                          Check&& check) {
  for (uint32_t type : types) {
    const int64_t K = small_k(type);
    const Weights w = make_weights(type, kSmallN, K, weight_seed + type);
    for (int64_t T : Ts) {
      const std::vector<uint16_t> xh = random_activations(T * K, rng);
      const Reference ref = reference_gemm(xh, w.w16, T, kSmallN, K);
      DeviceBuffer<uint16_t> x(xh);
      check(type, w, T, x, ref);
    }
  }
}

// ---- X = identity: Y[t][n] = w16[n][t] exactly (one product with 1.0, the rest exact zeros) ----
TEST(GemmFast, WeightsBitExactThroughIdentity) {
  PFX_REQUIRE_GPU();
  Stream stream;
  for (uint32_t type : kFastTypes) {
    const int64_t K = type == kQ6K ? 768 : type == kQ8_0 ? 576 : 512, T = K;
    const Weights w = make_weights(type, kSmallN, K, 100 + type);
    std::vector<uint16_t> eye(static_cast<size_t>(T * K), 0);
    for (int64_t t = 0; t < T; ++t) eye[static_cast<size_t>(t * K + t)] = 0x3C00;  // 1.0
    DeviceBuffer<uint16_t> x(eye);
    DeviceBuffer<uint16_t> y16(static_cast<size_t>(T * kSmallN));
    DeviceBuffer<float> y32(static_cast<size_t>(T * kSmallN));
    const auto& variants = gemm_fast_variants(type);
    for (size_t v = 0; v < variants.size(); ++v) {
      if (!variant_selected(variants[v].name)) continue;
      y16.poison();
      y32.poison();
      gemm_fast_variant(static_cast<int>(v), w.view(), x.get(), T, y16.get(), GemmEpilogue::StoreF16, stream.get());
      gemm_fast_variant(static_cast<int>(v), w.view(), x.get(), T, y32.get(), GemmEpilogue::StoreF32, stream.get());
      stream.sync();
      expect_identity_product(label(type, variants[v], T, "identity"), w.w16, K, y16.download(), y32.download(), T,
                              kSmallN);
    }
  }
}

// ---- random data vs float64, ragged T, every epilogue, every variant ----
TEST(GemmFast, RandomMatchesCpuReference) {
  PFX_REQUIRE_GPU();
  Stream stream;
  std::mt19937_64 rng(7);
  for_each_random_case(kFastTypes, {1, 7, 33, 128, 511, 513}, 200, rng,
                       [&](uint32_t type, const Weights& w, int64_t T, const DeviceBuffer<uint16_t>& x, const Reference& ref) {
    EpilogueCase c(ref, T, kSmallN, rng);
    const auto tol = [&](size_t i, double) { return kRelTol * ref.abssum[i] + 1e-30; };
    const auto& variants = gemm_fast_variants(type);
    for (size_t v = 0; v < variants.size(); ++v) {
      if (!variant_selected(variants[v].name)) continue;
      const int vi = static_cast<int>(v);
      c.check(
          case_label(type, variants[v], T),
          [&](void* y, GemmEpilogue e) { gemm_fast_variant(vi, w.view(), x.get(), T, y, e, stream.get()); }, tol,
          F16Compare::kClampOverflow);
    }
  });
}

// Bound on |a − silu(g)·u| when g, u carry errors eg, eu (|d silu/dg| ≤ 1.1), plus the fp16
// rounding of a and a few fp32 ulps of the epilogue's exp / reciprocal.
double swiglu_tol(double g, double u, double eg, double eu) {
  const double a = silu_mul_ref(g, u);
  return 1.1 * std::fabs(u) * eg + std::fabs(silu_mul_ref(g, 1.0)) * eu + fp16_ulp(a) + std::fabs(a) * 1e-6 + 1e-30;
}

TEST(GemmFast, SwigluMatchesCpuReference) {
  PFX_REQUIRE_GPU();
  Stream stream;
  std::mt19937_64 rng(8);
  for (uint32_t type : kFastTypes) {
    const int64_t N = kSmallN, K = small_k(type);
    const Weights gate = make_weights(type, N, K, 300 + type), up = make_weights(type, N, K, 400 + type);
    for (int64_t T : {7, 300}) {
      const std::vector<uint16_t> xh = random_activations(T * K, rng);
      const Reference g = reference_gemm(xh, gate.w16, T, N, K), u = reference_gemm(xh, up.w16, T, N, K);
      std::vector<double> a_ref(g.y.size());
      for (size_t i = 0; i < a_ref.size(); ++i) a_ref[i] = silu_mul_ref(g.y[i], u.y[i]);
      DeviceBuffer<uint16_t> x(xh);
      DeviceBuffer<uint16_t> a(static_cast<size_t>(T * N));
      const auto& variants = gemm_fast_variants(type);
      for (size_t v = 0; v < variants.size(); ++v) {
      if (!variant_selected(variants[v].name)) continue;
        a.poison();
        gemm_fast_swiglu_variant(static_cast<int>(v), gate.view(), up.view(), x.get(), T, a.get(), stream.get());
        EXPECT_TRUE(compare(label(type, variants[v], T, "SwiGLU"), halves_in_range(a.download()), fp16_range(a_ref),
                            [&](size_t i, double) {
                              return swiglu_tol(g.y[i], u.y[i], kRelTol * g.abssum[i], kRelTol * u.abssum[i]);
                            }));
      }
    }
  }
}

// ---- cuBLAS on the same fp16 weights: the generic path's arithmetic, at 7B shapes ----
class Cublas {
 public:
  Cublas() { CUBLAS_CHECK(cublasCreate(&h_)); }
  ~Cublas() { cublasDestroy(h_); }
  Cublas(const Cublas&) = delete;  // owns the handle
  Cublas& operator=(const Cublas&) = delete;
  // Y[T,N] (fp32) = X[T,K] · W[N,K]ᵀ, fp16 operands, fp32 compute: the generic path's call.
  void gemm(const uint16_t* w16, const uint16_t* x16, float* y, int64_t T, int64_t N, int64_t K, cudaStream_t s) {
    CUBLAS_CHECK(cublasSetStream(h_, s));
    const float alpha = 1.0f, beta = 0.0f;
    CUBLAS_CHECK(cublasGemmEx(h_, CUBLAS_OP_T, CUBLAS_OP_N, static_cast<int>(N), static_cast<int>(T),
                              static_cast<int>(K), &alpha, w16, CUDA_R_16F, static_cast<int>(K), x16, CUDA_R_16F,
                              static_cast<int>(K), &beta, y, CUDA_R_32F, static_cast<int>(N), CUBLAS_COMPUTE_32F,
                              CUBLAS_GEMM_DEFAULT));
  }

 private:
  cublasHandle_t h_ = nullptr;
};

std::vector<uint16_t> abs_halves(std::vector<uint16_t> v) {
  for (auto& h : v) h &= 0x7FFF;
  return v;
}

struct CublasCase {
  uint32_t type;
  int64_t N, K, T;
};

TEST(GemmFast, MatchesCublasAt7BShapes) {
  PFX_REQUIRE_GPU();
  Stream stream;
  Cublas cublas;
  std::mt19937_64 rng(9);
  const CublasCase cases[] = {{kQ4K, 4096, 4096, 512}, {kQ6K, 4096, 11008, 512}, {kQ8_0, 4096, 4096, 512},
                              {kQ4K, 11008, 4096, 2048}};
  for (const CublasCase& c : cases) {
    const Weights w = make_weights(c.type, c.N, c.K, 500 + c.type + static_cast<uint64_t>(c.N));
    const std::vector<uint16_t> xh = random_activations(c.T * c.K, rng);
    DeviceBuffer<uint16_t> x(xh), w16(w.w16), xa(abs_halves(xh)), wa(abs_halves(w.w16));
    DeviceBuffer<float> yc(static_cast<size_t>(c.T * c.N)), abssum(static_cast<size_t>(c.T * c.N)),
        y(static_cast<size_t>(c.T * c.N));
    cublas.gemm(w16.get(), x.get(), yc.get(), c.T, c.N, c.K, stream.get());
    cublas.gemm(wa.get(), xa.get(), abssum.get(), c.T, c.N, c.K, stream.get());
    const std::vector<double> ref = to_double(yc.download()), abs_ref = to_double(abssum.download());
    const auto tol = [&](size_t i, double) { return kCublasTol * abs_ref[i] + 1e-30; };
    auto check = [&](const std::string& what) {
      const std::vector<double> got = to_double(y.download());
      double worst = 0;
      for (size_t i = 0; i < got.size(); ++i) worst = std::max(worst, std::fabs(got[i] - ref[i]) / abs_ref[i]);
      std::printf("  %s: max |y - cuBLAS| / sum|x*w| = %.3g\n", what.c_str(), worst);
      EXPECT_TRUE(compare(what + " vs cuBLAS", got, ref, tol));
      return got;
    };
    const auto& variants = gemm_fast_variants(c.type);
    for (size_t v = 0; v < variants.size(); ++v) {
      if (!variant_selected(variants[v].name)) continue;
      y.poison();
      gemm_fast_variant(static_cast<int>(v), w.view(), x.get(), c.T, y.get(), GemmEpilogue::StoreF32, stream.get());
      const std::vector<double> first = check(label(c.type, variants[v], c.T, ("N=" + std::to_string(c.N) + " K=" + std::to_string(c.K)).c_str()));
      // Same input twice: bit-identical (no atomics, fixed reduction order).
      y.poison();
      gemm_fast_variant(static_cast<int>(v), w.view(), x.get(), c.T, y.get(), GemmEpilogue::StoreF32, stream.get());
      const std::vector<float> second = y.download();
      int64_t differ = 0;
      for (size_t i = 0; i < second.size(); ++i) differ += static_cast<double>(second[i]) != first[i];
      EXPECT_EQ(differ, 0) << label(c.type, variants[v], c.T, "run-to-run") << ": " << differ << " elements differ";
    }
    // The public entry point (the dispatcher's choice) with the residual epilogue.
    const std::vector<float> y0 = random_floats(static_cast<size_t>(c.T * c.N), rng);
    y.upload(y0);
    gemm_fast(w.view(), x.get(), c.T, y.get(), GemmEpilogue::AccumulateF32, stream.get());
    std::vector<double> acc_ref(ref.size());
    for (size_t i = 0; i < ref.size(); ++i) acc_ref[i] = static_cast<double>(y0[i]) + ref[i];
    EXPECT_TRUE(compare(std::string(type_name(c.type)) + " gemm_fast AccumulateF32 vs cuBLAS", to_double(y.download()),
                        acc_ref, [&](size_t i, double r) { return tol(i, r) + std::fabs(r) * 0x1p-23; }));
  }
}

TEST(GemmFast, SwigluMatchesCublasAt7BShape) {
  PFX_REQUIRE_GPU();
  Stream stream;
  Cublas cublas;
  std::mt19937_64 rng(10);
  const int64_t N = 11008, K = 4096, T = 512;
  const Weights gate = make_weights(kQ4K, N, K, 601), up = make_weights(kQ4K, N, K, 602);
  const std::vector<uint16_t> xh = random_activations(T * K, rng);
  DeviceBuffer<uint16_t> x(xh), xa(abs_halves(xh));
  std::vector<double> g, u, ga, ua;
  for (const Weights* w : {&gate, &up}) {
    DeviceBuffer<uint16_t> w16(w->w16), wa(abs_halves(w->w16));
    DeviceBuffer<float> out(static_cast<size_t>(T * N)), outa(static_cast<size_t>(T * N));
    cublas.gemm(w16.get(), x.get(), out.get(), T, N, K, stream.get());
    cublas.gemm(wa.get(), xa.get(), outa.get(), T, N, K, stream.get());
    (w == &gate ? g : u) = to_double(out.download());
    (w == &gate ? ga : ua) = to_double(outa.download());
  }
  std::vector<double> a_ref(g.size());
  for (size_t i = 0; i < a_ref.size(); ++i) a_ref[i] = silu_mul_ref(g[i], u[i]);
  DeviceBuffer<uint16_t> a(static_cast<size_t>(T * N));
  const auto& variants = gemm_fast_variants(kQ4K);
  for (size_t v = 0; v <= variants.size(); ++v) {
    if (v < variants.size() && !variant_selected(variants[v].name)) continue;
    a.poison();
    std::string what;
    if (v < variants.size()) {
      gemm_fast_swiglu_variant(static_cast<int>(v), gate.view(), up.view(), x.get(), T, a.get(), stream.get());
      what = label(kQ4K, variants[v], T, "SwiGLU 11008x4096 vs cuBLAS");
    } else {
      gemm_fast_swiglu(gate.view(), up.view(), x.get(), T, a.get(), stream.get());
      what = "q4_K gemm_fast_swiglu T=512 SwiGLU 11008x4096 vs cuBLAS";
    }
    // With these random weights 12 of the 5.6M products exceed fp16's range (checked on the CPU
    // with float64): the kernel must give ±inf there, as fp16_rn does.
    EXPECT_TRUE(compare(what, halves_in_range(a.download()), fp16_range(a_ref), [&](size_t i, double) {
      return swiglu_tol(g[i], u[i], kCublasTol * ga[i], kCublasTol * ua[i]);
    }));
  }
}

// ---- decode mat-vec ----
// gemv_fast's weight types (q5_K: the direct kernel only) and its kernels: Auto (what the engine
// runs) and each one of gemv_fast_kernels.
constexpr uint32_t kGemvTypes[] = {kQ4K, kQ5K, kQ6K, kQ8_0, kF16};
struct GemvShape {  // a weight matrix of the decode tests: type, N rows of K
  uint32_t type;
  int64_t N, K;
};
std::vector<GemvKernel> gemv_kernels_with_auto(uint32_t type) {
  std::vector<GemvKernel> ks{GemvKernel::Auto};
  for (GemvKernel k : gemv_fast_kernels(type)) ks.push_back(k);
  return ks;
}

TEST(GemvFast, RandomMatchesCpuReference) {
  PFX_REQUIRE_GPU();
  Stream stream;
  std::mt19937_64 rng(11);
  for_each_random_case(kGemvTypes, {1, 2, 5, 8}, 700, rng,
                       [&](uint32_t type, const Weights& w, int64_t T, const DeviceBuffer<uint16_t>& x, const Reference& ref) {
    for (GemvKernel k : gemv_kernels_with_auto(type)) {
      EpilogueCase c(ref, T, kSmallN, rng);
      const auto tol = [&](size_t i, double) { return kRelTol * ref.abssum[i] + 1e-30; };
      c.check(
          std::string(type_name(type)) + " gemv " + gemv_kernel_name(k) + " T=" + std::to_string(T),
          [&](void* y, GemmEpilogue e) { gemv_fast_kernel(k, w.view(), x.get(), T, y, e, stream.get()); }, tol,
          F16Compare::kClampOverflow);
    }
  });
}

// 7B shapes (many units per warp, K = 11008: 43 units over 8 warps; q8_0 with a partial last unit),
// T = 1, 3, 8: vs float64, then the same launch again must give the same bits (fixed reduction order).
TEST(GemvFast, SevenBShapesMatchReferenceAndRepeatBitwise) {
  PFX_REQUIRE_GPU();
  Stream stream;
  std::mt19937_64 rng(12);
  const GemvShape shapes[] = {{kQ4K, 4096, 11008}, {kQ4K, 4104, 4096}, {kQ5K, 4096, 11008}, {kQ6K, 11008, 4096},
                {kQ6K, 1000, 11008}, {kQ8_0, 1000, 4160}, {kF16, 520, 4096}};
  for (const auto& sh : shapes) {
    const Weights w = make_weights(sh.type, sh.N, sh.K, 900 + sh.type);
    for (int64_t T : {1, 3, 8}) {
      const std::vector<uint16_t> xh = random_activations(T * sh.K, rng);
      const Reference ref = reference_gemm(xh, w.w16, T, sh.N, sh.K);
      DeviceBuffer<uint16_t> x(xh);
      DeviceBuffer<float> y(static_cast<size_t>(T * sh.N));
      for (GemvKernel k : gemv_kernels_with_auto(sh.type)) {
        y.poison();
        gemv_fast_kernel(k, w.view(), x.get(), T, y.get(), GemmEpilogue::StoreF32, stream.get());
        const std::vector<float> first = y.download();
        const std::string what = std::string(type_name(sh.type)) + " gemv " + gemv_kernel_name(k) + " " +
                                 std::to_string(sh.N) + "x" + std::to_string(sh.K) + " T=" + std::to_string(T);
        EXPECT_TRUE(compare(what, to_double(first), ref.y, [&](size_t i, double) { return kRelTol * ref.abssum[i] + 1e-30; }));
        y.poison();
        gemv_fast_kernel(k, w.view(), x.get(), T, y.get(), GemmEpilogue::StoreF32, stream.get());
        const std::vector<float> second = y.download();
        EXPECT_EQ(std::memcmp(first.data(), second.data(), first.size() * sizeof(float)), 0) << what << ": run-to-run";
      }
    }
  }
}

// stream_w<n> runs direct_w<n>'s kernel on fewer blocks, each taking several 16-row tiles: the same
// units per warp in the same order, so the same bits. Shapes with several tiles per block (the
// vocabulary head's 2000 tiles), a ragged last tile, one tile (N = 16), T = 1, 3, 8, and the
// accumulate epilogue (its read-modify-write of Y per tile).
TEST(GemvFast, StreamEqualsDirectBitwise) {
  PFX_REQUIRE_GPU();
  Stream stream;
  std::mt19937_64 rng(14);
  const GemvShape shapes[] = {{kQ4K, 32000, 4096}, {kQ4K, 11008, 4096}, {kQ4K, 4104, 4096}, {kQ4K, 16, 4096},
                {kQ5K, 11008, 4096}, {kQ6K, 32000, 4096}, {kQ6K, 4096, 11008}, {kQ6K, 11000, 4096}};
  const std::pair<GemvKernel, GemvKernel> pairs[] = {{GemvKernel::StreamW4, GemvKernel::DirectW4},
                                                     {GemvKernel::StreamW8, GemvKernel::DirectW8},
                                                     {GemvKernel::StreamW16, GemvKernel::DirectW16}};
  for (const auto& sh : shapes) {
    const Weights w = make_weights(sh.type, sh.N, sh.K, 950 + sh.type);
    const auto offered = gemv_fast_kernels(sh.type);
    for (int64_t T : {1, 3, 8}) {
      const std::vector<uint16_t> xh = random_activations(T * sh.K, rng);
      DeviceBuffer<uint16_t> x(xh);
      const std::vector<float> y0 = random_floats(static_cast<size_t>(T * sh.N), rng);
      DeviceBuffer<float> y(y0);
      for (const auto& [streamed, direct] : pairs) {
        if (std::find(offered.begin(), offered.end(), streamed) == offered.end()) continue;
        for (GemmEpilogue e : {GemmEpilogue::StoreF32, GemmEpilogue::AccumulateF32}) {
          std::vector<float> out[2];
          for (int which = 0; which < 2; ++which) {
            y.upload(y0);
            gemv_fast_kernel(which == 0 ? streamed : direct, w.view(), x.get(), T, y.get(), e, stream.get());
            out[which] = y.download();
          }
          EXPECT_EQ(std::memcmp(out[0].data(), out[1].data(), out[0].size() * sizeof(float)), 0)
              << type_name(sh.type) << " " << sh.N << "x" << sh.K << " T=" << T << " " << gemv_kernel_name(streamed)
              << " vs " << gemv_kernel_name(direct) << (e == GemmEpilogue::AccumulateF32 ? " accumulate" : " store");
        }
      }
    }
  }
}

// Q, K, V of one decode step in one launch: each part's output bit for bit what gemv_fast gives it
// alone, under each part's own epilogue (one accumulates). GQA widths (1024-row K and V), a ragged
// part, and the 7B's mix (V in q6_K runs as a group of its own in the engine; here a q6_K group).
// (Parts whose own launches would use another block size are not grouped: see the test below.)
TEST(GemvFast, GroupEqualsOneLaunchPerMatrixBitwise) {
  PFX_REQUIRE_GPU();
  Stream stream;
  std::mt19937_64 rng(15);
  const struct {
    uint32_t type;
    std::vector<int64_t> Ns;
    int64_t K;
  } cases[] = {{kQ4K, {4096, 1024, 1024}, 4096}, {kQ4K, {4096, 4096}, 4096}, {kQ4K, {520, 264, 4000}, 4096},
               {kQ5K, {2048, 512, 512}, 4096}, {kQ6K, {4096, 4096, 4096}, 4096}, {kQ6K, {1000, 4096}, 11008}};
  for (const auto& c : cases) {
    std::vector<Weights> ws;
    for (size_t i = 0; i < c.Ns.size(); ++i) ws.push_back(make_weights(c.type, c.Ns[i], c.K, 960 + 7 * i + c.type));
    DeviceBuffer<uint16_t> x(random_activations(c.K, rng));
    std::vector<std::vector<float>> y0;
    std::vector<std::unique_ptr<DeviceBuffer<float>>> ys;
    std::vector<GemvOutput> parts;
    for (size_t i = 0; i < ws.size(); ++i) {
      y0.push_back(random_floats(static_cast<size_t>(c.Ns[i]), rng));
      ys.push_back(std::make_unique<DeviceBuffer<float>>(y0.back()));
      parts.push_back({ws[i].view(), ys[i]->get(), i == 1 ? GemmEpilogue::AccumulateF32 : GemmEpilogue::StoreF32});
    }
    ASSERT_EQ(gemv_fast_group_unsupported_reason(parts, 1), "");
    gemv_fast_group(parts, x.get(), 1, stream.get());
    for (size_t i = 0; i < ws.size(); ++i) {
      const std::vector<float> grouped = ys[i]->download();
      ys[i]->upload(y0[i]);
      gemv_fast(ws[i].view(), x.get(), 1, ys[i]->get(), parts[i].epilogue, stream.get());
      const std::vector<float> alone = ys[i]->download();
      EXPECT_EQ(std::memcmp(grouped.data(), alone.data(), grouped.size() * sizeof(float)), 0)
          << type_name(c.type) << " part " << i << " of " << ws.size() << " (" << c.Ns[i] << "x" << c.K << ")";
    }
  }
}

// A decode step's SwiGLU in one launch: a16 bit for bit gemv_fast(gate), gemv_fast(up) and
// silu_mul_f32_to_f16, at the 7B FFN shape (each type) and a ragged one.
TEST(GemvFast, SwigluEqualsGateUpThenSiluMulBitwise) {
  PFX_REQUIRE_GPU();
  Stream stream;
  std::mt19937_64 rng(16);
  const GemvShape cases[] = {{kQ4K, 11008, 4096}, {kQ5K, 11008, 4096}, {kQ6K, 11008, 4096}, {kQ4K, 1000, 2048}};
  for (const auto& c : cases) {
    const Weights gate = make_weights(c.type, c.N, c.K, 970 + c.type), up = make_weights(c.type, c.N, c.K, 980 + c.type);
    DeviceBuffer<uint16_t> x(random_activations(c.K, rng));
    DeviceBuffer<float> g(static_cast<size_t>(c.N)), u(static_cast<size_t>(c.N));
    DeviceBuffer<uint16_t> fused(static_cast<size_t>(c.N)), apart(static_cast<size_t>(c.N));
    fused.poison();
    ASSERT_EQ(gemv_fast_swiglu_unsupported_reason(gate.view(), up.view(), 1), "");
    gemv_fast_swiglu(gate.view(), up.view(), x.get(), 1, fused.get(), stream.get());
    gemv_fast(gate.view(), x.get(), 1, g.get(), GemmEpilogue::StoreF32, stream.get());
    gemv_fast(up.view(), x.get(), 1, u.get(), GemmEpilogue::StoreF32, stream.get());
    silu_mul_f32_to_f16(g.get(), u.get(), apart.get(), c.N, stream.get());
    const std::vector<uint16_t> a = fused.download(), b = apart.download();
    EXPECT_EQ(std::memcmp(a.data(), b.data(), a.size() * sizeof(uint16_t)), 0)
        << type_name(c.type) << " " << c.N << "x" << c.K;
  }
}

// What the grouped launches do not take, each with its reason (no GPU needed: nothing launches).
TEST(GemvFast, GroupedLaunchesNameWhatTheyDoNotTake) {
  const QuantMatrixView q4{reinterpret_cast<const void*>(uintptr_t{256}), kQ4K, 4096, 4096};
  const QuantMatrixView q6{reinterpret_cast<const void*>(uintptr_t{256}), kQ6K, 4096, 4096};
  const QuantMatrixView q8{reinterpret_cast<const void*>(uintptr_t{256}), kQ8_0, 4096, 4096};
  const QuantMatrixView q4_wide{reinterpret_cast<const void*>(uintptr_t{256}), kQ4K, 4096, 11008};
  void* y = reinterpret_cast<void*>(uintptr_t{512});
  const auto out = [&](QuantMatrixView w) { return GemvOutput{w, y, GemmEpilogue::StoreF32}; };
  EXPECT_EQ(gemv_fast_group_unsupported_reason({out(q4), out(q4), out(q4)}, 1), "");
  EXPECT_NE(gemv_fast_group_unsupported_reason({out(q4), out(q4)}, 2).find("one token"), std::string::npos);
  EXPECT_NE(gemv_fast_group_unsupported_reason({out(q4), out(q6)}, 1).find("part 1 differs"), std::string::npos);
  EXPECT_NE(gemv_fast_group_unsupported_reason({out(q4), out(q4_wide)}, 1).find("part 1 differs"), std::string::npos);
  // gemv_fast sums 4096 q4_K rows with 8 warps per block and 11008 with 4 (at T = 1): another order.
  const QuantMatrixView q4_tall{reinterpret_cast<const void*>(uintptr_t{256}), kQ4K, 11008, 4096};
  EXPECT_NE(gemv_fast_group_unsupported_reason({out(q4), out(q4_tall)}, 1).find("another block size"), std::string::npos);
  EXPECT_NE(gemv_fast_group_unsupported_reason({out(q8)}, 1).find("q4_K, q5_K, q6_K"), std::string::npos);
  EXPECT_NE(gemv_fast_group_unsupported_reason({out(q4), out(q4), out(q4), out(q4)}, 1).find("4 matrices"),
            std::string::npos);
  EXPECT_NE(gemv_fast_group_unsupported_reason({}, 1).find("0 matrices"), std::string::npos);
  EXPECT_EQ(gemv_fast_swiglu_unsupported_reason(q4, q4, 1), "");
  EXPECT_NE(gemv_fast_swiglu_unsupported_reason(q4, q6, 1).find("differ"), std::string::npos);
  EXPECT_NE(gemv_fast_swiglu_unsupported_reason(q4, q4, 3).find("gate: T = 3"), std::string::npos);
  // Heads stores: whole heads, a table where a part rotates, the position inside the cache.
  uint16_t* h = reinterpret_cast<uint16_t*>(uintptr_t{512});
  const float* table = reinterpret_cast<const float*>(uintptr_t{1024});
  const GemvRopeTarget rope{table, 128, 5, nullptr, 64};
  EXPECT_EQ(gemv_fast_group_heads_unsupported_reason({{q4, h, true, false}, {q4, h, true, true}}, 1, rope), "");
  EXPECT_NE(gemv_fast_group_heads_unsupported_reason({{q4, h, true, false}}, 1, {table, 96, 5, nullptr, 64}).find("whole heads"),
            std::string::npos);
  EXPECT_NE(gemv_fast_group_heads_unsupported_reason({{q4, h, true, false}}, 1, {table, 8, 5, nullptr, 64}).find("multiple of 16"),
            std::string::npos);
  EXPECT_NE(gemv_fast_group_heads_unsupported_reason({{q4, h, true, false}}, 1, {table + 2, 128, 5, nullptr, 64}).find("aligned"),
            std::string::npos);
  EXPECT_NE(gemv_fast_group_heads_unsupported_reason({{q4, h, true, false}}, 1, {nullptr, 128, 5, nullptr, 64}).find("cos/sin"),
            std::string::npos);
  EXPECT_EQ(gemv_fast_group_heads_unsupported_reason({{q4, h, false, true}}, 1, {nullptr, 128, 5, nullptr, 64}), "");
  EXPECT_NE(gemv_fast_group_heads_unsupported_reason({{q4, h, true, true}}, 1, {table, 128, 64, nullptr, 64}).find("do not fit"),
            std::string::npos);
  EXPECT_NE(gemv_fast_group_heads_unsupported_reason({{q4, h, true, true}}, 2, rope).find("one token"), std::string::npos);
}

// Q, K, V of a decode step stored as the attention's inputs by the GEMV itself (RoPE on Q and K,
// fp16, K and V into their cache rows): bit for bit gemv_fast_group's fp32 outputs followed by
// rope_store_qkv_fused, over caches holding random bytes (rows other than the position's must keep
// them). The position by value and from device memory; MHA (the 7B's 32 heads of 128) with V in
// q4_K and in q6_K (its own group, as in the 7B), and GQA with head dim 64.
TEST(GemvFast, GroupHeadsEqualsGroupThenRopeBitwise) {
  PFX_REQUIRE_GPU();
  Stream stream;
  std::mt19937_64 rng(17);
  constexpr int kMaxCtx = 48;
  struct Case {
    int H, Hkv, hd;
    uint32_t qk_type, v_type;
  };
  for (const Case c : {Case{32, 32, 128, kQ4K, kQ4K}, Case{32, 32, 128, kQ4K, kQ6K}, Case{16, 4, 64, kQ6K, kQ6K}}) {
    const int64_t K = 4096, qrows = int64_t{c.H} * c.hd, kvrows = int64_t{c.Hkv} * c.hd;
    const Weights wq = make_weights(c.qk_type, qrows, K, 1100), wk = make_weights(c.qk_type, kvrows, K, 1101),
                  wv = make_weights(c.v_type, kvrows, K, 1102);
    DeviceBuffer<uint16_t> x(random_activations(K, rng));
    const size_t cache = static_cast<size_t>(kvrows) * kMaxCtx;
    const std::vector<uint16_t> old_k = random_activations(static_cast<int64_t>(cache), rng),
                                old_v = random_activations(static_cast<int64_t>(cache), rng);
    for (const bool from_device : {false, true})
      for (const int p0 : {0, 29}) {
        const std::string at = std::string(type_name(c.qk_type)) + "/" + type_name(c.v_type) + " H" + std::to_string(c.H) +
                               " Hkv" + std::to_string(c.Hkv) + " hd" + std::to_string(c.hd) + " p0=" + std::to_string(p0) +
                               (from_device ? " (device position)" : "");
        DeviceBuffer<int> p0_dev(std::vector<int>{p0});
        QkvShape s;
        s.T = 1, s.H = c.H, s.Hkv = c.Hkv, s.hd = c.hd, s.p0 = p0, s.max_ctx = kMaxCtx;
        s.p0_dev = from_device ? p0_dev.get() : nullptr;
        // Reference: the grouped GEMV's fp32 outputs (groups of one type, as the engine forms them),
        // then the fused RoPE + cache store.
        DeviceBuffer<float> q32(static_cast<size_t>(qrows)), k32(static_cast<size_t>(kvrows)), v32(static_cast<size_t>(kvrows));
        const bool one_group = c.qk_type == c.v_type;
        std::vector<GemvOutput> g0{{wq.view(), q32.get(), GemmEpilogue::StoreF32}, {wk.view(), k32.get(), GemmEpilogue::StoreF32}};
        if (one_group) g0.push_back({wv.view(), v32.get(), GemmEpilogue::StoreF32});
        gemv_fast_group(g0, x.get(), 1, stream.get());
        if (!one_group) gemv_fast_group({{wv.view(), v32.get(), GemmEpilogue::StoreF32}}, x.get(), 1, stream.get());
        DeviceBuffer<uint16_t> want_q(static_cast<size_t>(qrows)), want_k(old_k), want_v(old_v);
        want_q.poison();
        rope_store_qkv_fused({q32.get(), qrows, k32.get(), kvrows, v32.get(), kvrows},
                             {want_q.get(), want_k.get(), want_v.get()}, s, stream.get());

        DeviceBuffer<float> table(static_cast<size_t>(c.hd));
        rope_table(s, table.get(), stream.get());
        DeviceBuffer<uint16_t> q16(static_cast<size_t>(qrows)), kc(old_k), vc(old_v);
        q16.poison();
        const GemvRopeTarget rope{table.get(), c.hd, from_device ? -1 : p0, s.p0_dev, kMaxCtx};
        std::vector<GemvHeadOutput> h0{{wq.view(), q16.get(), true, false}, {wk.view(), kc.get(), true, true}};
        const GemvHeadOutput hv{wv.view(), vc.get(), false, true};
        if (one_group) h0.push_back(hv);
        ASSERT_EQ(gemv_fast_group_heads_unsupported_reason(h0, 1, rope), "") << at;
        gemv_fast_group_heads(h0, rope, x.get(), 1, stream.get());
        if (!one_group) gemv_fast_group_heads({hv}, rope, x.get(), 1, stream.get());
        const auto same = [&](const char* what, const std::vector<uint16_t>& got, const std::vector<uint16_t>& want) {
          ASSERT_EQ(got.size(), want.size());
          size_t bad = 0;
          for (size_t i = 0; i < got.size(); ++i) bad += got[i] != want[i];
          EXPECT_EQ(bad, 0u) << at << " " << what << ": " << bad << " of " << got.size() << " fp16 values differ";
        };
        same("q16", q16.download(), want_q.download());
        same("k cache", kc.download(), want_k.download());
        same("v cache", vc.download(), want_v.download());
      }
  }
}

// A small case for compute-sanitizer (memcheck, racecheck): every gemv kernel of every type once,
// T = 1 and 8, the last row group ragged (N = 264) so the clamped rows and the tensor's last block
// are read.
TEST(GemvFast, SmallCaseForSanitizers) {
  PFX_REQUIRE_GPU();
  Stream stream;
  std::mt19937_64 rng(13);
  for_each_random_case(kGemvTypes, {1, 8}, 1000, rng,
                       [&](uint32_t type, const Weights& w, int64_t T, const DeviceBuffer<uint16_t>& x, const Reference& ref) {
    DeviceBuffer<float> y(static_cast<size_t>(T * kSmallN));
    for (GemvKernel k : gemv_fast_kernels(type)) {
      y.poison();
      gemv_fast_kernel(k, w.view(), x.get(), T, y.get(), GemmEpilogue::StoreF32, stream.get());
      EXPECT_TRUE(compare(std::string(type_name(type)) + " gemv " + gemv_kernel_name(k) + " T=" + std::to_string(T),
                          to_double(y.download()), ref.y, [&](size_t i, double) { return kRelTol * ref.abssum[i] + 1e-30; }));
    }
  });
}

// One-hot activation rows: y[t][n] = w16[n][k_t] exactly, for T spread-out k_t per launch; T = 1
// runs the direct kernel, whose q4_K / q6_K units take the one-FMA decode where the scales allow
// (random_weights': all) and the exact one where not (scales 16 times larger: most units).
TEST(GemvFast, OneHotRowsGiveExactWeights) {
  PFX_REQUIRE_GPU();
  Stream stream;
  struct Case {
    uint32_t type;
    int64_t T;
    float scale;  // on every block's d (scale_block_scales)
  };
  std::vector<Case> cases;
  for (uint32_t type : kGemvTypes) {
    cases.push_back({type, 8, 1.0f});
    cases.push_back({type, 1, 1.0f});
    if (type == kQ4K || type == kQ6K) cases.push_back({type, 1, 16.0f});
  }
  for (const Case& c : cases) {
    const uint32_t type = c.type;
    const int64_t T = c.T;
    const float scale = c.scale;
    const int64_t N = kSmallN, K = small_k(type);
    Weights w = make_weights(type, N, K, 800 + type);
    if (scale != 1.0f) {
      scale_block_scales(type, w.raw, scale);
      w.w16 = reference_weights_f16(type, w.raw, N, K);
      w.dev = std::make_unique<DeviceBuffer<uint8_t>>(w.raw);
    }
    int64_t bad = 0;
    for (int64_t round = 0; round < 16; ++round) {
      std::vector<uint16_t> xh(static_cast<size_t>(T * K), 0);
      std::vector<int64_t> kt(T);
      for (int64_t t = 0; t < T; ++t) {
        kt[static_cast<size_t>(t)] = (round * 8 + t) * 37 % K;
        xh[static_cast<size_t>(t * K + kt[static_cast<size_t>(t)])] = 0x3C00;
      }
      DeviceBuffer<uint16_t> x(xh);
      DeviceBuffer<float> y(static_cast<size_t>(T * N));
      y.poison();
      gemv_fast(w.view(), x.get(), T, y.get(), GemmEpilogue::StoreF32, stream.get());
      const std::vector<float> got = y.download();
      for (int64_t t = 0; t < T; ++t)
        for (int64_t n = 0; n < N; ++n) {
          const uint16_t want = w.w16[static_cast<size_t>(n * K + kt[static_cast<size_t>(t)])];
          if (got[static_cast<size_t>(t * N + n)] != quant::fp16_to_fp32(want) && ++bad <= 8)
            ADD_FAILURE() << type_name(type) << " gemv one-hot: w[" << n << "][" << kt[static_cast<size_t>(t)]
                          << "] want " << quant::fp16_to_fp32(want) << " got " << got[static_cast<size_t>(t * N + n)];
        }
    }
    EXPECT_EQ(bad, 0);
    if (bad == 0)
      std::printf("  %s gemv one-hot T=%lld, scales x%g: 16 x %lld x %lld weights exact\n", type_name(type),
                  static_cast<long long>(T), static_cast<double>(scale), static_cast<long long>(T), static_cast<long long>(N));
  }
}

}  // namespace
}  // namespace pfx::kernels::test

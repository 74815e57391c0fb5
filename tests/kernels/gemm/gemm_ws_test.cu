// GPU tests of the warp-specialized fused GEMM (kernels/gemm_ws.h; label gpu, each skips with the
// reason where no GPU is usable). Every variant of every weight type, random data (never zeros),
// outputs poisoned (NaN) before each run:
//  - the device repack is byte-identical to the host repack (kernels/gemm_ws_layout.cuh, whose
//    decoders test_gemm_fast_host checks fragment by fragment);
//  - X = identity: Y = W16ᵀ, every weight bit-identical to fp16_rn(quant::dequantize_row) through
//    the real TMA / wgmma path (zeros compare by value: the MMA sums +0 and -0 to +0);
//  - vs float64 at ragged token counts and rows that end inside a 128-row tile, every epilogue;
//  - vs the generic path's GEMM on the same fp16 weights (kernels/cublas_gemm.h: cuBLAS without
//    split-K) at 7B shapes: BITWISE, StoreF32 and AccumulateF32; SwiGLU bitwise against that GEMM
//    + the generic silu·up kernel;
//  - run-to-run bitwise.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <memory>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "epilogue_checks.h"
#include "gemm_reference.h"
#include "kernels/cublas_gemm.h"
#include "kernels/cuda_check.h"
#include "kernels/gemm_fast.h"
#include "kernels/gemm_ws.h"
#include "kernels/gemm_ws_layout.cuh"
#include "kernels/gemv_ws.h"
#include "kernels/gpu_test_support.h"
#include "kernels/kernels.h"
#include "quant/fp16.h"
#include "util/error.h"

namespace pfx::kernels::test {
namespace {

constexpr int64_t kRows = 192;    // one full 128-row tile and one half-filled
constexpr double kRelTol = 1e-5;  // × Σ|x·w|, vs float64 (as test_gemm_fast)

bool k_quant(uint32_t t) { return t == kQ4K || t == kQ5K || t == kQ6K; }
int64_t small_k(uint32_t t) { return k_quant(t) ? 768 : 320; }

// Host repack (the layout's reference), for the byte comparison with the device repack.
template <int kType>
std::vector<uint8_t> host_repack(const std::vector<uint8_t>& a, const std::vector<uint8_t>* b, int64_t rows,
                                 int64_t cols) {
  const dev::WsRowSource src{a.data(), b ? b->data() : nullptr, rows, row_bytes(kType, cols)};
  std::vector<uint8_t> out(static_cast<size_t>(dev::ws_repacked_bytes<dev::WsLayout<kType>>(src.out_rows(), cols)));
  for (size_t off = 0; off < out.size(); off += 4) {
    const uint32_t w = dev::ws_repacked_word<kType>(src, cols, static_cast<int64_t>(off));
    std::memcpy(out.data() + off, &w, 4);
  }
  return out;
}
std::vector<uint8_t> host_repack_any(uint32_t t, const std::vector<uint8_t>& a, const std::vector<uint8_t>* b,
                                     int64_t rows, int64_t cols) {
  switch (t) {
    case kQ4K: return host_repack<dev::kWsQ4K>(a, b, rows, cols);
    case kQ5K: return host_repack<dev::kWsQ5K>(a, b, rows, cols);
    case kQ6K: return host_repack<dev::kWsQ6K>(a, b, rows, cols);
    case kQ8_0: return host_repack<dev::kWsQ8_0>(a, b, rows, cols);
    default: return host_repack<dev::kWsF16>(a, b, rows, cols);
  }
}

// A weight matrix (and optionally an up matrix for SwiGLU), its fp16 reference and its repack.
struct Weights {
  uint32_t type;
  int64_t N, K;
  std::vector<uint8_t> raw, raw_up;
  std::vector<uint16_t> w16, w16_up;
  std::unique_ptr<DeviceBuffer<uint8_t>> gguf, gguf_up, packed;
  WsMatrixView view() const { return {packed->get(), type, N, K, !raw_up.empty()}; }
};

Weights make_weights(uint32_t type, int64_t N, int64_t K, uint64_t seed, bool swiglu, Stream& stream,
                     bool check_bytes = false) {
  std::mt19937_64 rng(seed);
  Weights w{type, N, K, random_weights(type, N, K, rng), {}, {}, {}, nullptr, nullptr, nullptr};
  w.w16 = reference_weights_f16(type, w.raw, N, K);
  w.gguf = std::make_unique<DeviceBuffer<uint8_t>>(w.raw);
  w.packed = std::make_unique<DeviceBuffer<uint8_t>>(static_cast<size_t>(gemm_ws_repacked_bytes(type, N, K, swiglu)));
  if (swiglu) {
    w.raw_up = random_weights(type, N, K, rng);
    w.w16_up = reference_weights_f16(type, w.raw_up, N, K);
    w.gguf_up = std::make_unique<DeviceBuffer<uint8_t>>(w.raw_up);
    gemm_ws_repack_swiglu({w.gguf->get(), type, N, K}, {w.gguf_up->get(), type, N, K}, w.packed->get(), stream.get());
  } else {
    gemm_ws_repack({w.gguf->get(), type, N, K}, w.packed->get(), stream.get());
  }
  stream.sync();
  if (check_bytes) {
    const std::vector<uint8_t> want = host_repack_any(type, w.raw, swiglu ? &w.raw_up : nullptr, N, K);
    EXPECT_TRUE(compare_bits(std::string(type_name(type)) + (swiglu ? " swiglu" : "") + " device repack vs host",
                             w.packed->download(), want));
  }
  return w;
}

// The SwiGLU cases' activations. q5_K's 32 levels make random_weights' q5_K values about twice
// q4_K's, so silu(g)·u is about four times larger: with activations in [-1, 1] the float64
// reference reached 9.9e4 at T = 300, past fp16's 65504 (the kernel rightly wrote inf). Halved
// (exactly: a power of two; a subnormal that would round to zero is kept), they keep q5_K's
// outputs in q4_K's range.
std::vector<uint16_t> swiglu_activations(uint32_t type, int64_t n, std::mt19937_64& rng) {
  std::vector<uint16_t> x = random_activations(n, rng);
  if (type != kQ5K) return x;
  for (uint16_t& h : x)
    if (const uint16_t half = quant::fp32_to_fp16(0.5f * quant::fp16_to_fp32(h)); (half & 0x7FFF) != 0) h = half;
  return x;
}

std::string case_label(uint32_t type, const WsVariantInfo& v, int64_t T) {
  return std::string(type_name(type)) + " " + v.name + " T=" + std::to_string(T);
}
std::string label(uint32_t type, const WsVariantInfo& v, int64_t T, const std::string& what) {
  return case_label(type, v, T) + " " + what;
}

TEST(GemmWs, RepackIsByteIdenticalToTheHostLayout) {
  PFX_REQUIRE_GPU();
  Stream stream;
  for (uint32_t type : kWsTypes)
    for (bool swiglu : {false, true}) make_weights(type, kRows, small_k(type), 50 + type, swiglu, stream, true);
}

// Scales outside the one-FMA decode's range (d 16 times random_weights') are refused with the
// count of such blocks, by the check and by both repacks; in-range ones pass the check.
TEST(GemmWs, RepackRefusesScalesOutOfRange) {
  PFX_REQUIRE_GPU();
  Stream stream;
  for (uint32_t type : {kQ4K, kQ6K}) {
    const int64_t N = 128, K = 512;
    std::mt19937_64 rng(70 + type);
    std::vector<uint8_t> raw = random_weights(type, N, K, rng);
    const DeviceBuffer<uint8_t> in_range(raw);
    EXPECT_EQ(gemm_ws_scales_out_of_range({in_range.get(), type, N, K}, stream.get()), "") << type_name(type);
    scale_block_scales(type, raw, 16.0f);
    const DeviceBuffer<uint8_t> big(raw);
    const QuantMatrixView v{big.get(), type, N, K};
    const std::string why = gemm_ws_scales_out_of_range(v, stream.get());
    EXPECT_NE(why.find("blocks have a scale d outside the fused decode's range"), std::string::npos) << why;
    DeviceBuffer<uint8_t> packed(static_cast<size_t>(gemm_ws_repacked_bytes(type, N, K, true)));
    EXPECT_THROW(gemm_ws_repack(v, packed.get(), stream.get()), pfx::Error) << type_name(type);
    EXPECT_THROW(gemm_ws_repack_swiglu({in_range.get(), type, N, K}, v, packed.get(), stream.get()), pfx::Error)
        << type_name(type);
    std::printf("  %s: %s\n", type_name(type), why.c_str());
  }
}

// Small enough for compute-sanitizer (memcheck, racecheck): every type and variant, a ragged T
// spanning two token tiles of the narrow variant, StoreF32 and AccumulateF32 (whose epilogue loads
// the old values of several column groups before it stores: the ragged edge is where a load could
// stray), checked against float64.
TEST(GemmWs, SmallCaseForSanitizers) {
  PFX_REQUIRE_GPU();
  Stream stream;
  std::mt19937_64 rng(5);
  for (uint32_t type : kWsTypes) {
    const int64_t N = 128, K = k_quant(type) ? 512 : 128, T = 130;
    const Weights w = make_weights(type, N, K, 60 + type, false, stream);
    const std::vector<uint16_t> xh = random_activations(T * K, rng);
    const Reference ref = reference_gemm(xh, w.w16, T, N, K);
    const std::vector<float> y0 = random_floats(static_cast<size_t>(T * N), rng);
    std::vector<double> ref_acc = ref.y;
    for (size_t i = 0; i < ref_acc.size(); ++i) ref_acc[i] += y0[i];
    DeviceBuffer<uint16_t> x(xh);
    DeviceBuffer<float> y(static_cast<size_t>(T * N));
    const auto& vs = gemm_ws_variants(type);
    for (size_t v = 0; v < vs.size(); ++v) {
      if (!variant_selected(vs[v].name)) continue;
      y.poison();
      gemm_ws_variant(static_cast<int>(v), w.view(), x.get(), T, y.get(), GemmEpilogue::StoreF32, stream.get());
      EXPECT_TRUE(compare(label(type, vs[v], T, "sanitizer case"), to_double(y.download()), ref.y,
                          [&](size_t i, double) { return kRelTol * ref.abssum[i] + 1e-30; }));
      y.upload(y0);
      gemm_ws_variant(static_cast<int>(v), w.view(), x.get(), T, y.get(), GemmEpilogue::AccumulateF32, stream.get());
      EXPECT_TRUE(compare(label(type, vs[v], T, "sanitizer case, AccumulateF32"), to_double(y.download()), ref_acc,
                          [&](size_t i, double) { return kRelTol * (ref.abssum[i] + std::fabs(y0[i])) + 1e-30; }));
    }
  }
}

TEST(GemmWs, WeightsBitExactThroughIdentity) {
  PFX_REQUIRE_GPU();
  Stream stream;
  for (uint32_t type : kWsTypes) {
    const int64_t K = small_k(type), T = K;
    const Weights w = make_weights(type, kRows, K, 100 + type, false, stream);
    std::vector<uint16_t> eye(static_cast<size_t>(T * K), 0);
    for (int64_t t = 0; t < T; ++t) eye[static_cast<size_t>(t * K + t)] = 0x3C00;  // 1.0
    DeviceBuffer<uint16_t> x(eye), y16(static_cast<size_t>(T * kRows));
    DeviceBuffer<float> y32(static_cast<size_t>(T * kRows));
    const auto& vs = gemm_ws_variants(type);
    for (size_t v = 0; v < vs.size(); ++v) {
      if (!variant_selected(vs[v].name)) continue;
      y16.poison();
      y32.poison();
      gemm_ws_variant(static_cast<int>(v), w.view(), x.get(), T, y16.get(), GemmEpilogue::StoreF16, stream.get());
      gemm_ws_variant(static_cast<int>(v), w.view(), x.get(), T, y32.get(), GemmEpilogue::StoreF32, stream.get());
      stream.sync();
      expect_identity_product(label(type, vs[v], T, "identity"), w.w16, K, y16.download(), y32.download(), T, kRows);
    }
  }
}

TEST(GemmWs, RandomMatchesCpuReference) {
  PFX_REQUIRE_GPU();
  Stream stream;
  std::mt19937_64 rng(7);
  for (uint32_t type : kWsTypes) {
    const int64_t N = kRows, K = small_k(type);
    const Weights w = make_weights(type, N, K, 200 + type, false, stream);
    for (int64_t T : {1, 7, 65, 128, 129, 300, 513}) {
      const std::vector<uint16_t> xh = random_activations(T * K, rng);
      const Reference ref = reference_gemm(xh, w.w16, T, N, K);
      DeviceBuffer<uint16_t> x(xh);
      EpilogueCase c(ref, T, N, rng);
      const auto tol = [&](size_t i, double) { return kRelTol * ref.abssum[i] + 1e-30; };
      const auto& vs = gemm_ws_variants(type);
      for (size_t v = 0; v < vs.size(); ++v) {
        if (!variant_selected(vs[v].name)) continue;
        const int vi = static_cast<int>(v);
        c.check(
            case_label(type, vs[v], T),
            [&](void* y, GemmEpilogue e) { gemm_ws_variant(vi, w.view(), x.get(), T, y, e, stream.get()); }, tol,
            F16Compare::kExact);
      }
    }
  }
}

// ---- the generic path's GEMM on the same fp16 weights (kernels/cublas_gemm.h: cuBLASLt without
// split-K), the exact arithmetic the fused kernels must reproduce ----
class Generic {
 public:
  // Y[T,N] (fp32) = beta·Y + X[T,K] · W[N,K]ᵀ.
  void gemm(const uint16_t* w16, const uint16_t* x16, float* y, int64_t T, int64_t N, int64_t K, float beta,
            cudaStream_t s) {
    seq_.run(w16, x16, y, T, N, K, beta != 0.0f, false, s);
  }
  // What a kernel's StoreF32 and AccumulateF32 must reproduce bit for bit: y = X·Wᵀ, and y_acc =
  // y0 + X·Wᵀ (beta 1) from y0, random floats drawn from rng after the first GEMM.
  struct Refs {
    std::vector<float> y, y0, y_acc;
  };
  Refs refs(const uint16_t* w16, const uint16_t* x16, int64_t T, int64_t N, int64_t K, std::mt19937_64& rng,
            cudaStream_t s) {
    DeviceBuffer<float> yc(static_cast<size_t>(T * N));
    Refs r;
    gemm(w16, x16, yc.get(), T, N, K, 0.0f, s);
    r.y = yc.download();
    r.y0 = random_floats(r.y.size(), rng);
    yc.upload(r.y0);
    gemm(w16, x16, yc.get(), T, N, K, 1.0f, s);
    r.y_acc = yc.download();
    return r;
  }

 private:
  SequentialGemm seq_;
};

struct Shape {
  uint32_t type;
  int64_t N, K, T;
};

TEST(GemmWs, BitwiseEqualToTheGenericGemmAt7BShapes) {
  PFX_REQUIRE_GPU();
  Stream stream;
  Generic generic;
  std::mt19937_64 rng(9);
  // The 7B shapes at the token counts a prefill runs (a prompt of 100-130 tokens: the parity
  // gate's 7B case; 512; 2048), where plain cuBLAS would split K for some. q5_K: the Q5_K_M
  // mix's attention and FFN shapes.
  const Shape shapes[] = {{kQ4K, 4096, 4096, 512},  {kQ6K, 4096, 11008, 512}, {kQ8_0, 4096, 4096, 512},
                          {kF16, 4096, 4096, 512},  {kQ4K, 11008, 4096, 2048}, {kQ4K, 4096, 11008, 100},
                          {kQ6K, 4096, 11008, 128}, {kQ4K, 4096, 4096, 128},  {kQ4K, 11008, 4096, 33},
                          {kQ5K, 4096, 4096, 512},  {kQ5K, 11008, 4096, 2048}, {kQ5K, 4096, 11008, 100}};
  for (const Shape& c : shapes) {
    const Weights w = make_weights(c.type, c.N, c.K, 500 + c.type + static_cast<uint64_t>(c.N), false, stream);
    const std::vector<uint16_t> xh = random_activations(c.T * c.K, rng);
    DeviceBuffer<uint16_t> x(xh), w16(w.w16);
    DeviceBuffer<float> y(static_cast<size_t>(c.T * c.N));
    const Generic::Refs r = generic.refs(w16.get(), x.get(), c.T, c.N, c.K, rng, stream.get());
    const std::vector<float>&ref = r.y, &y0 = r.y0, &ref_acc = r.y_acc;
    const std::string shape = "N=" + std::to_string(c.N) + " K=" + std::to_string(c.K);
    const auto& vs = gemm_ws_variants(c.type);
    for (size_t v = 0; v < vs.size(); ++v) {
      if (!variant_selected(vs[v].name)) continue;
      const int vi = static_cast<int>(v);
      y.poison();
      gemm_ws_variant(vi, w.view(), x.get(), c.T, y.get(), GemmEpilogue::StoreF32, stream.get());
      const std::vector<float> first = y.download();
      double worst = 0;
      for (size_t i = 0; i < first.size(); ++i) worst = std::max(worst, std::fabs(double(first[i]) - double(ref[i])));
      std::printf("  %s: max |y - generic| = %.3g\n", label(c.type, vs[v], c.T, shape).c_str(), worst);
      EXPECT_TRUE(compare_bits(label(c.type, vs[v], c.T, shape + " StoreF32 vs generic"), first, ref));
      y.poison();
      gemm_ws_variant(vi, w.view(), x.get(), c.T, y.get(), GemmEpilogue::StoreF32, stream.get());
      EXPECT_TRUE(compare_bits(label(c.type, vs[v], c.T, shape + " run-to-run"), y.download(), first));
      y.upload(y0);
      gemm_ws_variant(vi, w.view(), x.get(), c.T, y.get(), GemmEpilogue::AccumulateF32, stream.get());
      EXPECT_TRUE(compare_bits(label(c.type, vs[v], c.T, shape + " AccumulateF32 vs generic (beta 1)"), y.download(), ref_acc));
    }
    // The public entry point (the dispatcher's pick), where that variant is selected.
    if (variant_selected(vs[static_cast<size_t>(gemm_ws_pick_variant(c.type, c.T, c.N, c.K))].name)) {
      y.poison();
      gemm_ws(w.view(), x.get(), c.T, y.get(), GemmEpilogue::StoreF32, stream.get());
      EXPECT_TRUE(compare_bits(std::string(type_name(c.type)) + " gemm_ws " + shape + " vs generic", y.download(), ref));
    }
  }
}

// The decode mat-vec's sequential-order kernel (kernels/gemm_fast_gemv_seq.cuh) at T = 1..8: every
// output bitwise equal to the generic GEMM's (SequentialGemm), as the fast path's decode needs for
// parity; each seq configuration, and the dispatcher's pick (Auto) where it is seq (T >= 2),
// StoreF32 and AccumulateF32.
TEST(GemvSeq, BitwiseEqualToTheGenericGemmAtDecodeSizes) {
  PFX_REQUIRE_GPU();
  Stream stream;
  Generic generic;
  std::mt19937_64 rng(10);
  // The 7B decode shapes (N multiple of 64: make_weights also repacks for gemm_ws; ragged N is
  // GemvFast's, against float64), the q6_K head included.
  const Shape shapes[] = {{kQ4K, 4096, 4096, 0},  {kQ4K, 11008, 4096, 0}, {kQ4K, 4096, 11008, 0},
                          {kQ6K, 4096, 11008, 0}, {kQ6K, 4096, 4096, 0},  {kQ6K, 32000, 4096, 0},
                          {kQ5K, 4096, 4096, 0},  {kQ5K, 1024, 11008, 0}};
  const GemvKernel kernels[] = {GemvKernel::Auto, GemvKernel::SeqD2, GemvKernel::SeqD4};
  for (const Shape& c : shapes) {
    const Weights w = make_weights(c.type, c.N, c.K, 700 + c.type + static_cast<uint64_t>(c.N), false, stream);
    DeviceBuffer<uint16_t> w16(w.w16);
    const QuantMatrixView raw{w.gguf->get(), c.type, c.N, c.K};  // the GGUF blocks gemv_fast reads
    const auto offered = gemv_fast_kernels(c.type);
    for (int64_t T : {1, 2, 7, 8}) {
      const std::vector<uint16_t> xh = random_activations(T * c.K, rng);
      DeviceBuffer<uint16_t> x(xh);
      DeviceBuffer<float> y(static_cast<size_t>(T * c.N));
      const Generic::Refs r = generic.refs(w16.get(), x.get(), T, c.N, c.K, rng, stream.get());
      for (GemvKernel k : kernels) {
        if (k != GemvKernel::Auto && std::find(offered.begin(), offered.end(), k) == offered.end()) continue;
        if (k == GemvKernel::Auto && T == 1) continue;  // Auto runs the direct kernel for decode steps
        const std::string what = std::string(type_name(c.type)) + " gemv " + gemv_kernel_name(k) + " N=" +
                                 std::to_string(c.N) + " K=" + std::to_string(c.K) + " T=" + std::to_string(T);
        y.poison();
        gemv_fast_kernel(k, raw, x.get(), T, y.get(), GemmEpilogue::StoreF32, stream.get());
        EXPECT_TRUE(compare_bits(what + " StoreF32 vs generic", y.download(), r.y));
        y.upload(r.y0);
        gemv_fast_kernel(k, raw, x.get(), T, y.get(), GemmEpilogue::AccumulateF32, stream.get());
        EXPECT_TRUE(compare_bits(what + " AccumulateF32 vs generic (beta 1)", y.download(), r.y_acc));
      }
    }
  }
}

// SwiGLU: against float64 at small shapes, and bitwise against the generic path's sequence (two
// cuBLAS GEMMs, then silu_mul_f32_to_f16) at the 7B FFN shape.
TEST(GemmWs, SwigluMatchesReferenceAndGenericPathBitwise) {
  PFX_REQUIRE_GPU();
  Stream stream;
  Generic generic;
  std::mt19937_64 rng(8);
  for (uint32_t type : kWsTypes) {
    const int64_t N = kRows, K = small_k(type);
    const Weights w = make_weights(type, N, K, 300 + type, true, stream);
    for (int64_t T : {7, 300}) {
      const std::vector<uint16_t> xh = swiglu_activations(type, T * K, rng);
      const Reference g = reference_gemm(xh, w.w16, T, N, K), u = reference_gemm(xh, w.w16_up, T, N, K);
      std::vector<double> a_ref(g.y.size());
      double a_max = 0;
      for (size_t i = 0; i < a_ref.size(); ++i) a_ref[i] = silu_mul_ref(g.y[i], u.y[i]), a_max = std::max(a_max, std::fabs(a_ref[i]));
      // The case's data, not the kernel: every reference output must be an fp16 value's neighbour.
      EXPECT_LT(a_max, 65504.0) << type_name(type) << " T=" << T << ": SwiGLU reference outside fp16's range";
      DeviceBuffer<uint16_t> x(xh), a(static_cast<size_t>(T * N));
      const auto& vs = gemm_ws_variants(type);
      for (size_t v = 0; v < vs.size(); ++v) {
      if (!variant_selected(vs[v].name)) continue;
        a.poison();
        gemm_ws_swiglu_variant(static_cast<int>(v), w.view(), x.get(), T, a.get(), stream.get());
        EXPECT_TRUE(compare(label(type, vs[v], T, "SwiGLU"), halves_to_double(a.download()), a_ref, [&](size_t i, double r) {
          const double eg = kRelTol * g.abssum[i], eu = kRelTol * u.abssum[i];
          return 1.1 * std::fabs(u.y[i]) * eg + std::fabs(silu_mul_ref(g.y[i], 1.0)) * eu + fp16_ulp(r) + 1e-30;
        }));
      }
    }
  }
  // q4_K and q5_K (the FFN types of the Q4_K_M and Q5_K_M mixes).
  for (uint32_t type : {kQ4K, kQ5K}) {
    const int64_t N = 11008, K = 4096, T = 512;
    const Weights w = make_weights(type, N, K, 601 + (type - kQ4K), true, stream);
    const std::vector<uint16_t> xh = swiglu_activations(type, T * K, rng);
    DeviceBuffer<uint16_t> x(xh), wg(w.w16), wu(w.w16_up), a_ref(static_cast<size_t>(T * N)), a(static_cast<size_t>(T * N));
    DeviceBuffer<float> g(static_cast<size_t>(T * N)), u(static_cast<size_t>(T * N));
    generic.gemm(wg.get(), x.get(), g.get(), T, N, K, 0.0f, stream.get());
    generic.gemm(wu.get(), x.get(), u.get(), T, N, K, 0.0f, stream.get());
    silu_mul_f32_to_f16(g.get(), u.get(), a_ref.get(), T * N, stream.get());
    stream.sync();
    const std::vector<uint16_t> want = a_ref.download();
    const auto& vs = gemm_ws_variants(type);
    for (size_t v = 0; v < vs.size(); ++v) {
      if (!variant_selected(vs[v].name)) continue;
      a.poison();
      gemm_ws_swiglu_variant(static_cast<int>(v), w.view(), x.get(), T, a.get(), stream.get());
      EXPECT_TRUE(compare_bits(label(type, vs[v], T, "SwiGLU 11008x4096 vs generic GEMMs + silu_mul"), a.download(), want));
    }
  }
}


// ---- split chains and groups: the bits of whole tiles, one matrix at a time ----

int variant_index(uint32_t type, const std::string& name) {
  const auto& vs = gemm_ws_variants(type);
  for (size_t v = 0; v < vs.size(); ++v)
    if (name == vs[v].name) return static_cast<int>(v);
  ADD_FAILURE() << type_name(type) << ": no variant " << name;
  return 0;
}

// One split-chain variant against its whole-tile twin (same BN: the same wgmma steps on the same
// accumulators, so the same bits) on `ctas` CTAs, where small shapes split; StoreF32, StoreF16,
// AccumulateF32 and (with `swiglu`) the SwiGLU epilogue. Two rounds with different activations:
// each tail clears the flag it consumed, and a launch that found a flag still set would read the
// previous launch's accumulators and fail the second round.
void expect_split_equals_whole(const Weights& w, const Weights* swiglu, int bn, int64_t T, int ctas,
                               std::mt19937_64& rng, Stream& stream) {
  const int whole = variant_index(w.type, bn == 128 ? "ws_n128" : "ws_n256");
  const int split = variant_index(w.type, bn == 128 ? "ws_sk_n128" : "ws_sk_n256");
  const std::string what = std::string(type_name(w.type)) + " ws_sk_n" + std::to_string(bn) + " T=" + std::to_string(T) +
                           " on " + std::to_string(ctas) + " CTAs";
  for (int round = 0; round < 2; ++round) {
    DeviceBuffer<uint16_t> x(random_activations(T * w.K, rng));
    DeviceBuffer<float> y(static_cast<size_t>(T * w.N)), want(static_cast<size_t>(T * w.N));
    const std::vector<float> y0 = random_floats(static_cast<size_t>(T * w.N), rng);
    for (const GemmEpilogue e : {GemmEpilogue::StoreF32, GemmEpilogue::StoreF16, GemmEpilogue::AccumulateF32}) {
      if (e == GemmEpilogue::AccumulateF32) y.upload(y0), want.upload(y0);
      else y.poison(), want.poison();
      gemm_ws_variant(whole, w.view(), x.get(), T, want.get(), e, stream.get());
      gemm_ws_variant(split, w.view(), x.get(), T, y.get(), e, stream.get(), ctas);
      EXPECT_TRUE(compare_bits(what + " epilogue " + std::to_string(static_cast<int>(e)) + " round " +
                                   std::to_string(round) + " vs whole tiles",
                               y.download(), want.download()));
    }
    if (swiglu == nullptr) continue;
    DeviceBuffer<uint16_t> a(static_cast<size_t>(T * swiglu->N)), a_want(static_cast<size_t>(T * swiglu->N));
    a.poison(), a_want.poison();
    gemm_ws_swiglu_variant(whole, swiglu->view(), x.get(), T, a_want.get(), stream.get());
    gemm_ws_swiglu_variant(split, swiglu->view(), x.get(), T, a.get(), stream.get(), ctas);
    EXPECT_TRUE(compare_bits(what + " SwiGLU round " + std::to_string(round) + " vs whole tiles", a.download(),
                             a_want.download()));
  }
}

// Few CTAs make small shapes split (9 tiles of 128 × 128 on 4, 5 or 7 CTAs: heads and tails in
// most ranges); the 7B shapes split on the full grid in BitwiseEqualToTheGenericGemmAt7BShapes and
// the SwiGLU test, which run every variant.
TEST(GemmWs, SplitChainsEqualWholeTilesBitwise) {
  PFX_REQUIRE_GPU();
  Stream stream;
  std::mt19937_64 rng(12);
  for (uint32_t type : kWsTypes) {
    const int64_t N = 384, K = small_k(type);
    const Weights w = make_weights(type, N, K, 900 + type, false, stream);
    const Weights sw = make_weights(type, N, K, 950 + type, true, stream);
    for (int bn : {128, 256})
      for (int64_t T : {300, 513})
        for (int ctas : {4, 5, 7}) expect_split_equals_whole(w, &sw, bn, T, ctas, rng, stream);
  }
}

// Small enough for compute-sanitizer: one type, split chains on 4 CTAs and a group of three parts.
TEST(GemmWs, SplitChainsSmallCaseForSanitizers) {
  PFX_REQUIRE_GPU();
  Stream stream;
  std::mt19937_64 rng(13);
  const Weights w = make_weights(kQ4K, 384, 512, 990, false, stream);
  expect_split_equals_whole(w, nullptr, 128, 130, 4, rng, stream);
}

// Split-chain launches share the device's workspace and claim nothing on the device: the host
// orders a launch on another stream or host thread after the last one (kernels/gemm_ws.cu). The
// two tests below make `n` split launches (q4_K, 4 CTAs: heads and tails) from two streams or two
// threads with no synchronization between them, each checked bitwise against its whole-tile
// result (launches that overlapped would continue each other's accumulators).
struct SplitOrderingRuns {
  static constexpr int64_t kT = 300;
  static constexpr int kCtas = 4;
  Weights w;
  int split = 0;
  std::vector<std::unique_ptr<DeviceBuffer<uint16_t>>> x;
  std::vector<std::unique_ptr<DeviceBuffer<float>>> y, want;

  SplitOrderingRuns(int n, uint64_t seed, Stream& stream) : w(make_weights(kQ4K, 384, 4096, seed, false, stream)) {
    std::mt19937_64 rng(seed);
    const int whole = variant_index(kQ4K, "ws_n128");
    split = variant_index(kQ4K, "ws_sk_n128");
    for (int i = 0; i < n; ++i) {
      x.push_back(std::make_unique<DeviceBuffer<uint16_t>>(random_activations(kT * w.K, rng)));
      y.push_back(std::make_unique<DeviceBuffer<float>>(static_cast<size_t>(kT * w.N)));
      want.push_back(std::make_unique<DeviceBuffer<float>>(static_cast<size_t>(kT * w.N)));
      y.back()->poison(), want.back()->poison();
      gemm_ws_variant(whole, w.view(), x.back()->get(), kT, want.back()->get(), GemmEpilogue::StoreF32, stream.get());
    }
    stream.sync();
  }
  void launch(size_t i, cudaStream_t stream) const {
    gemm_ws_variant(split, w.view(), x[i]->get(), kT, y[i]->get(), GemmEpilogue::StoreF32, stream, kCtas);
  }
  // After every launch has been synchronized: each output bitwise its whole-tile result.
  void expect_whole_tile_results(const std::string& what) const {
    for (size_t i = 0; i < y.size(); ++i)
      EXPECT_TRUE(compare_bits(what + ": split launch " + std::to_string(i), y[i]->download(), want[i]->download()));
  }
};

// Eight launches alternating between two streams; and a split-chain launch inside a graph capture
// is refused, where a replay could not be ordered.
TEST(GemmWs, SplitChainsOnTwoStreamsAreOrderedAndNotCaptured) {
  PFX_REQUIRE_GPU();
  Stream a, b;
  const SplitOrderingRuns runs(8, 995, a);
  for (size_t i = 0; i < runs.y.size(); ++i) runs.launch(i, (i % 2 ? b : a).get());
  a.sync(), b.sync();
  runs.expect_whole_tile_results("two streams (odd launches on the second)");

  Stream c;
  CUDA_CHECK(cudaStreamBeginCapture(c.get(), cudaStreamCaptureModeThreadLocal));
  EXPECT_THROW(runs.launch(0, c.get()), pfx::Error);
  cudaGraph_t graph = nullptr;
  CUDA_CHECK(cudaStreamEndCapture(c.get(), &graph));
  if (graph) CUDA_CHECK(cudaGraphDestroy(graph));
}

// The same ordering between host threads: cudaStreamPerThread is one handle for each thread's own
// stream, so two threads launching on it at once would overlap without it. Two threads, four
// launches each.
TEST(GemmWs, SplitChainsFromTwoHostThreadsAreOrdered) {
  PFX_REQUIRE_GPU();
  Stream stream;
  constexpr size_t kThreads = 2, kPerThread = 4;
  const SplitOrderingRuns runs(kThreads * kPerThread, 996, stream);
  std::vector<std::string> errors(kThreads);
  std::vector<std::thread> threads;
  for (size_t t = 0; t < kThreads; ++t)
    threads.emplace_back([&, t] {
      try {
        for (size_t j = 0; j < kPerThread; ++j) runs.launch(t * kPerThread + j, cudaStreamPerThread);
        CUDA_CHECK(cudaStreamSynchronize(cudaStreamPerThread));
      } catch (const std::exception& e) {
        errors[t] = e.what();
      }
    });
  for (std::thread& th : threads) th.join();
  for (size_t t = 0; t < kThreads; ++t) EXPECT_EQ(errors[t], "") << "thread " << t;
  runs.expect_whole_tile_results("two host threads (launches 4-7 from the second)");
}

// Matrices of one type and K repacked one after another into one buffer, as the engine does for a
// layer's Q, K and V.
struct Group {
  std::vector<Weights> parts;
  std::unique_ptr<DeviceBuffer<uint8_t>> packed;
  int64_t rows = 0;
  WsMatrixView view() const { return {packed->get(), parts.front().type, rows, parts.front().K, false}; }
};
Group make_group(uint32_t type, const std::vector<int64_t>& rows, int64_t K, uint64_t seed, Stream& stream) {
  Group g;
  int64_t bytes = 0;
  for (size_t i = 0; i < rows.size(); ++i) {
    g.parts.push_back(make_weights(type, rows[i], K, seed + i, false, stream));
    bytes += gemm_ws_repacked_bytes(type, rows[i], K);
    g.rows += rows[i];
  }
  g.packed = std::make_unique<DeviceBuffer<uint8_t>>(static_cast<size_t>(bytes));
  int64_t off = 0;
  for (const Weights& p : g.parts) {
    gemm_ws_repack({p.gguf->get(), type, p.N, K}, g.packed->get() + off, stream.get());
    off += gemm_ws_repacked_bytes(type, p.N, K);
  }
  stream.sync();
  return g;
}

// One launch per group against one gemm_ws per matrix, bitwise: every variant that takes groups
// on the full grid and on 4 CTAs (split ranges then cross part boundaries), StoreF32 and
// AccumulateF32; and the pick at a 7B layer's Q/K/V shapes at T = 512 (MHA and GQA).
TEST(GemmWs, GroupEqualsOneLaunchPerMatrixBitwise) {
  PFX_REQUIRE_GPU();
  Stream stream;
  std::mt19937_64 rng(14);
  const auto check = [&](const Group& g, int64_t T, const std::vector<int>& variants, const std::vector<int>& ctas_list) {
    const int64_t K = g.parts.front().K;
    const uint32_t type = g.parts.front().type;
    DeviceBuffer<uint16_t> x(random_activations(T * K, rng));
    std::vector<std::unique_ptr<DeviceBuffer<float>>> y, want;
    std::vector<std::vector<float>> y0;
    for (const Weights& p : g.parts) {
      y.push_back(std::make_unique<DeviceBuffer<float>>(static_cast<size_t>(T * p.N)));
      want.push_back(std::make_unique<DeviceBuffer<float>>(static_cast<size_t>(T * p.N)));
      y0.push_back(random_floats(static_cast<size_t>(T * p.N), rng));
    }
    for (const GemmEpilogue e : {GemmEpilogue::StoreF32, GemmEpilogue::AccumulateF32}) {
      std::vector<std::vector<float>> expected;
      for (size_t i = 0; i < g.parts.size(); ++i) {
        if (e == GemmEpilogue::AccumulateF32) want[i]->upload(y0[i]);
        else want[i]->poison();
        gemm_ws(g.parts[i].view(), x.get(), T, want[i]->get(), e, stream.get());
        expected.push_back(want[i]->download());
      }
      for (int v : variants)
        for (int ctas : ctas_list) {
          std::vector<WsGroupPart> parts;
          for (size_t i = 0; i < g.parts.size(); ++i) {
            if (e == GemmEpilogue::AccumulateF32) y[i]->upload(y0[i]);
            else y[i]->poison();
            parts.push_back({g.parts[i].N, y[i]->get()});
          }
          std::string name = "pick";
          if (v < 0) gemm_ws_group(g.view(), parts, x.get(), T, e, stream.get());
          else name = gemm_ws_variants(type)[static_cast<size_t>(v)].name,
               gemm_ws_group_variant(v, g.view(), parts, x.get(), T, e, stream.get(), ctas);
          for (size_t i = 0; i < g.parts.size(); ++i)
            EXPECT_TRUE(compare_bits(std::string(type_name(type)) + " group " + name + " T=" + std::to_string(T) +
                                         " CTAs " + std::to_string(ctas) + " part " + std::to_string(i) + " epilogue " +
                                         std::to_string(static_cast<int>(e)) + " vs one gemm_ws",
                                     y[i]->download(), expected[i]));
        }
    }
  };
  for (uint32_t type : {kQ4K, kQ6K, kQ8_0}) {
    const Group g = make_group(type, {256, 128, 192}, small_k(type), 1000 + type, stream);
    std::vector<int> variants;
    const auto& vs = gemm_ws_variants(type);
    for (size_t v = 0; v < vs.size(); ++v)
      if (vs[v].groups && variant_selected(vs[v].name)) variants.push_back(static_cast<int>(v));
    check(g, 300, variants, {0, 4});
  }
  check(make_group(kQ4K, {4096, 4096, 4096}, 4096, 1100, stream), 512, {-1}, {0});
  check(make_group(kQ4K, {4096, 1024, 1024}, 4096, 1200, stream), 512, {-1}, {0});
  // Parts that no group takes: a part before the last whose rows end inside a 128-row tile.
  EXPECT_NE(gemm_ws_group_unsupported_reason(kQ4K, {{192, nullptr}, {128, nullptr}}, 256), "");
  EXPECT_EQ(gemm_ws_group_unsupported_reason(kQ4K, {{128, nullptr}, {192, nullptr}}, 256), "");
}

// The head-store epilogue (gemm_ws_group_rope): the attention's inputs straight from the Q/K/V
// GEMM are bitwise what the GEMM with StoreF32 followed by rope_store_qkv_fused writes: q16, and
// the K/V caches row for row (rows outside p0 .. p0+T-1 keep their old bytes), for the given
// variants (one launch for the three matrices, on each CTA count) and per matrix (the pick).
struct HeadShape {
  int H, Hkv, hd;
};
void check_head_store(uint32_t type, HeadShape hs, int T, int p0, const std::vector<int>& variants,
                      const std::vector<int>& ctas_list, Stream& stream, std::mt19937_64& rng) {
  const int64_t K = small_k(type), qrows = int64_t{hs.H} * hs.hd, kvrows = int64_t{hs.Hkv} * hs.hd;
  const Group g = make_group(type, {qrows, kvrows, kvrows}, K, 4100 + type + hs.hd, stream);
  constexpr int kMaxCtx = 400;
  const size_t cache_elems = static_cast<size_t>(kvrows) * kMaxCtx;
  const std::string at = std::string(type_name(type)) + " H " + std::to_string(hs.H) + "/" + std::to_string(hs.Hkv) +
                         " hd " + std::to_string(hs.hd) + " T=" + std::to_string(T) + " p0=" + std::to_string(p0);
  DeviceBuffer<uint16_t> x(random_activations(T * K, rng));
  QkvShape s;
  s.T = T, s.H = hs.H, s.Hkv = hs.Hkv, s.hd = hs.hd, s.p0 = p0, s.max_ctx = kMaxCtx;
  // Reference: three StoreF32 GEMMs, then the fast RoPE + cache store, over caches whose old
  // contents are random bytes.
  DeviceBuffer<float> q32(static_cast<size_t>(T * qrows)), k32(static_cast<size_t>(T * kvrows)),
      v32(static_cast<size_t>(T * kvrows));
  gemm_ws(g.parts[0].view(), x.get(), T, q32.get(), GemmEpilogue::StoreF32, stream.get());
  gemm_ws(g.parts[1].view(), x.get(), T, k32.get(), GemmEpilogue::StoreF32, stream.get());
  gemm_ws(g.parts[2].view(), x.get(), T, v32.get(), GemmEpilogue::StoreF32, stream.get());
  const std::vector<uint16_t> old_k = random_activations(static_cast<int64_t>(cache_elems), rng),
                              old_v = random_activations(static_cast<int64_t>(cache_elems), rng);
  DeviceBuffer<uint16_t> want_q(static_cast<size_t>(T * qrows)), want_k(old_k), want_v(old_v);
  want_q.poison();
  rope_store_qkv_fused({q32.get(), qrows, k32.get(), kvrows, v32.get(), kvrows}, {want_q.get(), want_k.get(), want_v.get()},
                       s, stream.get());
  const std::vector<uint16_t> wq = want_q.download(), wk = want_k.download(), wv = want_v.download();

  DeviceBuffer<float> table(static_cast<size_t>(T * hs.hd));
  rope_table(s, table.get(), stream.get());
  const WsRopeTarget rope{table.get(), hs.hd, p0, kMaxCtx};
  DeviceBuffer<uint16_t> q16(static_cast<size_t>(T * qrows)), kc(old_k), vc(old_v);
  const auto parts_of = [&](size_t first, size_t n) {
    const std::vector<WsHeadPart> all{{qrows, q16.get(), true, false}, {kvrows, kc.get(), true, true},
                                      {kvrows, vc.get(), false, true}};
    return std::vector<WsHeadPart>(all.begin() + static_cast<long>(first), all.begin() + static_cast<long>(first + n));
  };
  const auto check = [&](const std::string& how) {
    EXPECT_TRUE(compare_bits(at + " " + how + " q16", q16.download(), wq));
    EXPECT_TRUE(compare_bits(at + " " + how + " k cache", kc.download(), wk));
    EXPECT_TRUE(compare_bits(at + " " + how + " v cache", vc.download(), wv));
    q16.poison();
    kc.upload(old_k);
    vc.upload(old_v);
  };
  q16.poison();
  const auto& vs = gemm_ws_variants(type);
  for (int v : variants)
    for (int ctas : ctas_list) {
      gemm_ws_group_rope_variant(v, g.view(), parts_of(0, 3), rope, x.get(), T, stream.get(), ctas);
      check(std::string(vs[static_cast<size_t>(v)].name) + " one launch, CTAs " + std::to_string(ctas));
    }
  for (size_t i = 0; i < 3; ++i) gemm_ws_group_rope(g.parts[i].view(), parts_of(i, 1), rope, x.get(), T, stream.get());
  check("one launch per matrix");
}

// The variants that take groups (PFX_GEMM_VARIANTS may narrow them).
std::vector<int> group_variants(uint32_t type) {
  std::vector<int> variants;
  const auto& vs = gemm_ws_variants(type);
  for (size_t v = 0; v < vs.size(); ++v)
    if (vs[v].groups && variant_selected(vs[v].name)) variants.push_back(static_cast<int>(v));
  return variants;
}

TEST(GemmWs, HeadStoreEqualsGemmThenRopeBitwise) {
  PFX_REQUIRE_GPU();
  Stream stream;
  std::mt19937_64 rng(41);
  for (uint32_t type : {kQ4K, kQ6K, kQ8_0})
    for (const HeadShape hs : {HeadShape{4, 2, 128}, HeadShape{4, 4, 64}})
      for (const int T : {9, 300})
        for (const int p0 : {0, 37}) check_head_store(type, hs, T, p0, group_variants(type), {0, 4}, stream, rng);
  // What the epilogue cannot store: rows that are not whole heads, cache rows past max_ctx, a
  // rotation without a table.
  uint16_t* const y = reinterpret_cast<uint16_t*>(uintptr_t{256});
  float* const cs = reinterpret_cast<float*>(uintptr_t{256});
  EXPECT_NE(gemm_ws_group_rope_unsupported_reason(kQ4K, {{192, y, true, false}}, 256, 9, {cs, 128, 0, 100}), "");
  EXPECT_NE(gemm_ws_group_rope_unsupported_reason(kQ4K, {{128, y, false, true}}, 256, 9, {cs, 128, 95, 100}), "");
  EXPECT_NE(gemm_ws_group_rope_unsupported_reason(kQ4K, {{128, y, true, false}}, 256, 9, {nullptr, 128, 0, 100}), "");
  EXPECT_EQ(gemm_ws_group_rope_unsupported_reason(kQ4K, {{128, y, true, false}, {128, y, false, true}}, 256, 9,
                                                  {cs, 128, 91, 100}),
            "");
}

// One small case of the head store for compute-sanitizer (memcheck, racecheck): GQA, split chains
// over 4 CTAs, a prompt that ends inside a tile.
TEST(GemmWs, HeadStoreSmallCaseForSanitizers) {
  PFX_REQUIRE_GPU();
  Stream stream;
  std::mt19937_64 rng(43);
  check_head_store(kQ4K, HeadShape{4, 2, 128}, 130, 37, group_variants(kQ4K), {4}, stream, rng);
}


// ---- the decode mat-vec on the repack (kernels/gemv_ws.h) ----

// One warp per tile (kGemvWsGenericOrder), and the pick at T >= 2: every output bitwise equal to
// the generic GEMM's at the 7B decode shapes (the q6_K head included), StoreF32 and AccumulateF32.
TEST(GemvWs, GenericOrderIsBitwiseAtDecodeSizes) {
  PFX_REQUIRE_GPU();
  Stream stream;
  Generic generic;
  std::mt19937_64 rng(50);
  const Shape shapes[] = {{kQ4K, 4096, 4096, 0},  {kQ4K, 11008, 4096, 0}, {kQ4K, 4096, 11008, 0},
                          {kQ6K, 4096, 11008, 0}, {kQ6K, 4096, 4096, 0},  {kQ6K, 32000, 4096, 0}};
  for (const Shape& c : shapes) {
    const Weights w = make_weights(c.type, c.N, c.K, 800 + c.type + static_cast<uint64_t>(c.N), false, stream);
    DeviceBuffer<uint16_t> w16(w.w16);
    for (int64_t T : {1, 2, 7, 8}) {
      DeviceBuffer<uint16_t> x(random_activations(T * c.K, rng));
      DeviceBuffer<float> y(static_cast<size_t>(T * c.N));
      const Generic::Refs r = generic.refs(w16.get(), x.get(), T, c.N, c.K, rng, stream.get());
      for (const int warps : {kGemvWsGenericOrder, kGemvWsChainShallow, 0}) {
        if (warps == 0 && T == 1 && gemv_ws_warps(c.type, c.N, c.K) != kGemvWsGenericOrder) continue;  // a split pick
        const std::string what = std::string(type_name(c.type)) + " gemv_ws warps " + std::to_string(warps) + " N=" +
                                 std::to_string(c.N) + " K=" + std::to_string(c.K) + " T=" + std::to_string(T);
        y.poison();
        gemv_ws(w.view(), x.get(), T, y.get(), GemmEpilogue::StoreF32, stream.get(), warps);
        EXPECT_TRUE(compare_bits(what + " StoreF32 vs generic", y.download(), r.y));
        y.upload(r.y0);
        gemv_ws(w.view(), x.get(), T, y.get(), GemmEpilogue::AccumulateF32, stream.get(), warps);
        EXPECT_TRUE(compare_bits(what + " AccumulateF32 vs generic (beta 1)", y.download(), r.y_acc));
      }
    }
  }
}

// Every warp count against float64 (a part of rows padded to the 128-row pair; more warps than
// k-groups), every epilogue, T = 1..8; and run to run bitwise.
TEST(GemvWs, EveryWarpCountMatchesCpuReference) {
  PFX_REQUIRE_GPU();
  Stream stream;
  std::mt19937_64 rng(51);
  for (uint32_t type : {kQ4K, kQ6K}) {
    const int64_t N = kRows, K = small_k(type);
    const Weights w = make_weights(type, N, K, 900 + type, false, stream);
    for (int64_t T = 1; T <= kGemvMaxT; ++T) {
      const std::vector<uint16_t> xh = random_activations(T * K, rng);
      const Reference ref = reference_gemm(xh, w.w16, T, N, K);
      DeviceBuffer<uint16_t> x(xh);
      EpilogueCase c(ref, T, N, rng);
      const auto tol = [&](size_t i, double) { return kRelTol * ref.abssum[i] + 1e-30; };
      for (const int warps : {0, kGemvWsGenericOrder, kGemvWsChainShallow, 2, 4, 8, 16}) {
        const std::string what = std::string(type_name(type)) + " gemv_ws warps " + std::to_string(warps) + " T=" +
                                 std::to_string(T);
        c.check(
            what, [&](void* y, GemmEpilogue e) { gemv_ws(w.view(), x.get(), T, y, e, stream.get(), warps); }, tol,
            F16Compare::kExact);
        c.y.poison();
        gemv_ws(w.view(), x.get(), T, c.y.get(), GemmEpilogue::StoreF32, stream.get(), warps);
        const std::vector<float> first = c.y.download();
        gemv_ws(w.view(), x.get(), T, c.y.get(), GemmEpilogue::StoreF32, stream.get(), warps);
        EXPECT_TRUE(compare_bits(what + " run to run", c.y.download(), first));
      }
    }
  }
}

// The grouped launches: a group's parts, the heads store and the interleaved SwiGLU are bitwise
// what one gemv_ws per matrix (same warps) followed by rope_store_qkv_fused / silu_mul gives.
void check_gemv_ws_parts(uint32_t type, int64_t T, int warps, int p0, Stream& stream, std::mt19937_64& rng) {
  const int64_t K = small_k(type);
  const std::string at = std::string(type_name(type)) + " T=" + std::to_string(T) + " warps " + std::to_string(warps);
  DeviceBuffer<uint16_t> x(random_activations(T * K, rng));
  // Q, K, V of 4 / 2 / 2 heads of 64 (rows padded inside their pairs: 256, 128, 128).
  const HeadShape hs{4, 2, 64};
  const int64_t qrows = int64_t{hs.H} * hs.hd, kvrows = int64_t{hs.Hkv} * hs.hd;
  const Weights wq = make_weights(type, qrows, K, 1300 + type, false, stream), wk = make_weights(type, kvrows, K, 1301 + type, false, stream),
                wv = make_weights(type, kvrows, K, 1302 + type, false, stream);
  DeviceBuffer<float> q32(static_cast<size_t>(T * qrows)), k32(static_cast<size_t>(T * kvrows)), v32(static_cast<size_t>(T * kvrows));
  gemv_ws(wq.view(), x.get(), T, q32.get(), GemmEpilogue::StoreF32, stream.get(), warps);
  gemv_ws(wk.view(), x.get(), T, k32.get(), GemmEpilogue::StoreF32, stream.get(), warps);
  gemv_ws(wv.view(), x.get(), T, v32.get(), GemmEpilogue::StoreF32, stream.get(), warps);
  // Plain group, StoreF32: each part as alone.
  DeviceBuffer<float> gq(static_cast<size_t>(T * qrows)), gk(static_cast<size_t>(T * kvrows)), gv(static_cast<size_t>(T * kvrows));
  gq.poison(), gk.poison(), gv.poison();
  gemv_ws_group({{wq.view(), gq.get(), GemmEpilogue::StoreF32}, {wk.view(), gk.get(), GemmEpilogue::StoreF32},
                 {wv.view(), gv.get(), GemmEpilogue::StoreF32}},
                x.get(), T, stream.get(), warps);
  EXPECT_TRUE(compare_bits(at + " group part 0", gq.download(), q32.download()));
  EXPECT_TRUE(compare_bits(at + " group part 1", gk.download(), k32.download()));
  EXPECT_TRUE(compare_bits(at + " group part 2", gv.download(), v32.download()));
  // Heads: as rope_store_qkv_fused stores the fp32 outputs, over caches of random old bytes.
  constexpr int kMaxCtx = 64;
  const size_t cache_elems = static_cast<size_t>(kvrows) * kMaxCtx;
  QkvShape s;
  s.T = static_cast<int>(T), s.H = hs.H, s.Hkv = hs.Hkv, s.hd = hs.hd, s.p0 = p0, s.max_ctx = kMaxCtx;
  const std::vector<uint16_t> old_k = random_activations(static_cast<int64_t>(cache_elems), rng),
                              old_v = random_activations(static_cast<int64_t>(cache_elems), rng);
  DeviceBuffer<uint16_t> want_q(static_cast<size_t>(T * qrows)), want_k(old_k), want_v(old_v);
  want_q.poison();
  rope_store_qkv_fused({q32.get(), qrows, k32.get(), kvrows, v32.get(), kvrows}, {want_q.get(), want_k.get(), want_v.get()},
                       s, stream.get());
  DeviceBuffer<float> table(static_cast<size_t>(T * hs.hd));
  rope_table(s, table.get(), stream.get());
  DeviceBuffer<uint16_t> q16(static_cast<size_t>(T * qrows)), kc(old_k), vc(old_v);
  q16.poison();
  gemv_ws_group_heads({{wq.view(), q16.get(), true, false}, {wk.view(), kc.get(), true, true}, {wv.view(), vc.get(), false, true}},
                      GemvRopeTarget{table.get(), hs.hd, p0, nullptr, kMaxCtx}, x.get(), T, stream.get(), warps);
  EXPECT_TRUE(compare_bits(at + " heads q16", q16.download(), want_q.download()));
  EXPECT_TRUE(compare_bits(at + " heads k cache", kc.download(), want_k.download()));
  EXPECT_TRUE(compare_bits(at + " heads v cache", vc.download(), want_v.download()));
  // SwiGLU: the interleaved repack against gate and up alone, then silu_mul.
  const Weights sw = make_weights(type, qrows, K, 1400 + type, true, stream);
  const Weights g_alone = make_weights(type, qrows, K, 1400 + type, false, stream);  // gate: the same seed, same bytes
  DeviceBuffer<uint8_t> up_packed(static_cast<size_t>(gemm_ws_repacked_bytes(type, qrows, K)));
  gemm_ws_repack({sw.gguf_up->get(), type, qrows, K}, up_packed.get(), stream.get());
  DeviceBuffer<float> g32(static_cast<size_t>(T * qrows)), u32(static_cast<size_t>(T * qrows));
  gemv_ws(g_alone.view(), x.get(), T, g32.get(), GemmEpilogue::StoreF32, stream.get(), warps);
  gemv_ws({up_packed.get(), type, qrows, K, false}, x.get(), T, u32.get(), GemmEpilogue::StoreF32, stream.get(), warps);
  DeviceBuffer<uint16_t> a_want(static_cast<size_t>(T * qrows)), a(static_cast<size_t>(T * qrows));
  silu_mul_f32_to_f16(g32.get(), u32.get(), a_want.get(), T * qrows, stream.get());
  a.poison();
  gemv_ws_swiglu(sw.view(), x.get(), T, a.get(), stream.get(), warps);
  stream.sync();
  EXPECT_TRUE(compare_bits(at + " swiglu vs gate, up alone + silu_mul", a.download(), a_want.download()));
}

TEST(GemvWs, GroupsHeadsAndSwigluEqualOneMatrixAtATimeBitwise) {
  PFX_REQUIRE_GPU();
  Stream stream;
  std::mt19937_64 rng(52);
  for (uint32_t type : {kQ4K, kQ6K})
    for (const int64_t T : {1, 3, 8})
      for (const int warps : {0, 1, 4}) check_gemv_ws_parts(type, T, warps, T == 1 ? 37 : 0, stream, rng);
  // What it refuses: another type, T past 8, an interleaved matrix outside gemv_ws_swiglu, a warp count.
  const WsMatrixView q8{reinterpret_cast<void*>(uintptr_t{256}), kQ8_0, 128, 256, false};
  const WsMatrixView q4{reinterpret_cast<void*>(uintptr_t{256}), kQ4K, 128, 256, false};
  EXPECT_NE(gemv_ws_unsupported_reason(q8, 1), "");
  EXPECT_NE(gemv_ws_unsupported_reason(q4, 9), "");
  EXPECT_NE(gemv_ws_unsupported_reason({q4.data, kQ4K, 128, 256, true}, 1), "");
  EXPECT_EQ(gemv_ws_unsupported_reason(q4, 8), "");
  EXPECT_NE(gemv_ws_group_unsupported_reason({{q4, nullptr, GemmEpilogue::StoreF32}}, 1, 3), "");
}

// One small case of each launch for compute-sanitizer (memcheck, racecheck).
TEST(GemvWs, SmallCaseForSanitizers) {
  PFX_REQUIRE_GPU();
  Stream stream;
  std::mt19937_64 rng(53);
  check_gemv_ws_parts(kQ4K, 1, 4, 5, stream, rng);
  check_gemv_ws_parts(kQ6K, 2, 0, 0, stream, rng);
}

}  // namespace
}  // namespace pfx::kernels::test

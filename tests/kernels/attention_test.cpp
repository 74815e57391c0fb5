// Causal GQA attention: the generic path (cuBLAS + softmax kernel), the flash prefill kernel, the
// split-context decode kernel and the attention_fast dispatcher, each against a double-precision
// CPU reference on the same fp16 inputs, and fast against generic; every flash variant
// (kernels/attention_flash_variants.h) bit for bit against variant 0 and the generic path. Cache
// rows past the context hold NaN, so a kernel that reads beyond p0+T fails; outputs are
// NaN-poisoned before each run.
#include <cublas_v2.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

#include "gpu_test_support.h"
#include "kernels/attention_flash_variants.h"
#include "kernels/kernels.h"
#include "util/error.h"
#include "util/parallel.h"

namespace pfx::kernels::test {
namespace {

struct AttnCase {
  int T, p0, H, Hkv, hd;
  float q_scale;  // larger -> peakier softmax
};

std::string name(const AttnCase& c) {
  return "T" + std::to_string(c.T) + "_p" + std::to_string(c.p0) + "_H" + std::to_string(c.H) + "_Hkv" +
         std::to_string(c.Hkv) + "_hd" + std::to_string(c.hd) + (c.q_scale > 1 ? "_peaky" : "");
}

// cuBLAS handle owner. Copy deleted: one owner destroys it.
class Cublas {
 public:
  Cublas() { CUBLAS_CHECK(cublasCreate(&h_)); }
  ~Cublas() { cublasDestroy(h_); }
  Cublas(const Cublas&) = delete;
  Cublas& operator=(const Cublas&) = delete;
  cublasHandle_t get() const { return h_; }

 private:
  cublasHandle_t h_ = nullptr;
};

// Inputs as fp16 bits: q [T,H,hd], caches [Hkv][max_ctx][hd] with rows >= ctx all NaN (0xFFFF).
struct Inputs {
  std::vector<uint16_t> q, k, v;
  int max_ctx;
};

Inputs make_inputs(const AttnCase& c) {
  Inputs in;
  in.max_ctx = c.p0 + c.T + 13;
  const int ctx = c.p0 + c.T;
  in.q.resize(static_cast<size_t>(c.T) * c.H * c.hd);
  for (auto& x : in.q) x = float_to_half(random_floats(1, -1.0f, 1.0f)[0] * c.q_scale);
  const size_t cache_n = static_cast<size_t>(c.Hkv) * in.max_ctx * c.hd;
  in.k.assign(cache_n, 0xFFFF);
  in.v.assign(cache_n, 0xFFFF);
  for (int g = 0; g < c.Hkv; ++g)
    for (int p = 0; p < ctx; ++p)
      for (int d = 0; d < c.hd; ++d) {
        const size_t at = (static_cast<size_t>(g) * in.max_ctx + p) * c.hd + d;
        in.k[at] = float_to_half(uniform(-1.0f, 1.0f));
        in.v[at] = float_to_half(uniform(-1.0f, 1.0f));
      }
  return in;
}

// o[t, h*hd + d] in double, from the fp16 inputs.
std::vector<double> reference(const AttnCase& c, const Inputs& in) {
  std::vector<double> o(static_cast<size_t>(c.T) * c.H * c.hd);
  const int G = c.H / c.Hkv;
  const double scale = 1.0 / std::sqrt(static_cast<double>(c.hd));
  std::vector<float> kf(in.k.size()), vf(in.v.size());  // decoded once; the loops below are hot
  for (size_t i = 0; i < kf.size(); ++i) kf[i] = half_to_float(in.k[i]), vf[i] = half_to_float(in.v[i]);
  parallel_for(static_cast<int64_t>(c.T) * c.H, [&](int64_t begin, int64_t end) {
    std::vector<double> s, q(static_cast<size_t>(c.hd));
    for (int64_t job = begin; job < end; ++job) {
      const int t = static_cast<int>(job / c.H), h = static_cast<int>(job % c.H), g = h / G;
      const int n = c.p0 + t + 1;
      for (int d = 0; d < c.hd; ++d) q[static_cast<size_t>(d)] = half_to_float(in.q[(static_cast<size_t>(t) * c.H + h) * c.hd + d]);
      s.assign(static_cast<size_t>(n), 0.0);
      double m = -INFINITY;
      for (int p = 0; p < n; ++p) {
        const float* k = kf.data() + (static_cast<size_t>(g) * in.max_ctx + p) * c.hd;
        double dot = 0;
        for (int d = 0; d < c.hd; ++d) dot += q[static_cast<size_t>(d)] * k[d];
        s[static_cast<size_t>(p)] = dot * scale;
        m = std::max(m, s[static_cast<size_t>(p)]);
      }
      double sum = 0;
      for (auto& x : s) sum += (x = std::exp(x - m));
      double* out = o.data() + (static_cast<size_t>(t) * c.H + h) * c.hd;
      for (int d = 0; d < c.hd; ++d) out[d] = 0;
      for (int p = 0; p < n; ++p) {
        const float* v = vf.data() + (static_cast<size_t>(g) * in.max_ctx + p) * c.hd;
        const double w = s[static_cast<size_t>(p)] / sum;
        for (int d = 0; d < c.hd; ++d) out[d] += w * v[d];
      }
    }
  });
  return o;
}

// Errors are judged per output row (one head of one token) relative to that row's largest |o|:
// fp16 probabilities and the fp16 output cost about 2^-11 of it; 2e-3 leaves room for the
// accumulation order and none for a wrong or missing element.
constexpr double kRelTol = 2e-3;

::testing::AssertionResult check(const std::string& what, const std::vector<uint16_t>& got,
                                 const std::vector<double>& ref, int hd) {
  const size_t row = static_cast<size_t>(hd);
  std::vector<double> row_max(ref.size() / row, 0.0);
  for (size_t i = 0; i < ref.size(); ++i) row_max[i / row] = std::max(row_max[i / row], std::fabs(ref[i]));
  return compare(what, halves_to_double(got), ref,
                 [&](size_t i, double) { return kRelTol * row_max[i / row] + 1e-7; });
}

// Decode vs generic under the shared softmax convention (attention_shared.h): both multiply V by
// the same fp16 probabilities, so they differ only where an fp32 summation order (scores, P·V, the
// row sum) tips an fp16 rounding. Most outputs are then bit-identical; when every probability was
// rounded differently (the plain max) far fewer were. Prints the fraction either way.
constexpr double kMinIdentical = 0.9;

::testing::AssertionResult mostly_identical(const std::string& what, const std::vector<uint16_t>& got,
                                            const std::vector<uint16_t>& ref) {
  size_t same = 0;
  for (size_t i = 0; i < ref.size(); ++i) same += got[i] == ref[i];
  const double frac = ref.empty() ? 1.0 : static_cast<double>(same) / static_cast<double>(ref.size());
  std::printf("  %s: %.4f of %zu outputs bit-identical\n", what.c_str(), frac, ref.size());
  if (frac >= kMinIdentical) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << what << ": only " << frac << " of the outputs are bit-identical (want >= "
                                       << kMinIdentical << ")";
}

// A case's inputs on the device, its output buffer (o16) and the launch arguments over them.
// Copy deleted: args points into the buffers.
struct OnDevice {
  DeviceBuffer<uint16_t> q, k, v, o;
  AttentionArgs args;
  OnDevice(const AttnCase& c, const Inputs& in)
      : q(in.q), k(in.k), v(in.v), o(static_cast<size_t>(c.T) * c.H * c.hd) {
    args.q16 = q.get(), args.k_cache = k.get(), args.v_cache = v.get(), args.o16 = o.get();
    args.T = c.T, args.H = c.H, args.Hkv = c.Hkv, args.hd = c.hd, args.p0 = c.p0, args.max_ctx = in.max_ctx;
  }
  OnDevice(const OnDevice&) = delete;
  OnDevice& operator=(const OnDevice&) = delete;
};

class AttentionTest : public ::testing::TestWithParam<AttnCase> {};

TEST_P(AttentionTest, AllPathsMatchDoubleReference) {
  PFX_REQUIRE_GPU();
  const AttnCase c = GetParam();
  const Inputs in = make_inputs(c);
  const auto ref = reference(c, in);
  Stream stream;
  Cublas cublas;
  OnDevice dev(c, in);
  DeviceBuffer<uint16_t>& o = dev.o;
  const AttentionArgs& a = dev.args;

  // Generic.
  const size_t gen_bytes = attention_generic_scratch_bytes(c.T, c.p0 + c.T, c.H, c.hd);
  DeviceBuffer<uint8_t> gen_scratch(gen_bytes);
  o.poison();
  attention_generic(a, cublas.get(), gen_scratch.get(), gen_bytes, stream.get());
  const auto generic = o.download();
  EXPECT_TRUE(check("generic vs double", generic, ref, c.hd));

  const char* why = attention_fast_unsupported_reason(a);
  if (c.hd != 64 && c.hd != 128) {
    EXPECT_NE(why, nullptr) << "fast attention claims head dim " << c.hd;
    EXPECT_THROW(attention_flash_prefill(a, stream.get()), pfx::Error);
    return;
  }
  ASSERT_EQ(why, nullptr) << why;
  std::vector<double> generic_d = halves_to_double(generic);

  // Flash prefill, on every shape (T = 1 too).
  o.poison();
  attention_flash_prefill(a, stream.get());
  const auto flash = o.download();
  EXPECT_TRUE(check("flash vs double", flash, ref, c.hd));
  EXPECT_TRUE(check("flash vs generic", flash, generic_d, c.hd));
  // The generic tiled kernel computes flash's arithmetic in flash's order (attention_tile.cuh).
  EXPECT_TRUE(compare_bits("flash vs generic", flash, generic));

  // Split-context decode: meant for small T, correct for any; keep the CPU-side cost down.
  if (c.T <= 64) {
    const size_t dec_bytes = attention_decode_scratch_bytes(c.T, c.H, c.hd);
    DeviceBuffer<uint8_t> dec_scratch(dec_bytes);
    o.poison();
    attention_decode(a, dec_scratch.get(), dec_bytes, stream.get());
    const auto decode = o.download();
    EXPECT_TRUE(check("decode vs double", decode, ref, c.hd));
    EXPECT_TRUE(check("decode vs generic", decode, generic_d, c.hd));
    EXPECT_TRUE(mostly_identical("decode vs generic", decode, generic));
  }

  // The dispatcher, and run-to-run determinism of what it picks.
  const size_t fast_bytes = std::max<size_t>(attention_fast_scratch_bytes(c.T, c.H, c.hd), 16);
  DeviceBuffer<uint8_t> fast_scratch(fast_bytes);
  o.poison();
  attention_fast(a, fast_scratch.get(), fast_bytes, stream.get());
  const auto fast1 = o.download();
  EXPECT_TRUE(check("attention_fast vs double", fast1, ref, c.hd));
  o.poison();
  attention_fast(a, fast_scratch.get(), fast_bytes, stream.get());
  EXPECT_TRUE(compare_bits("attention_fast run-to-run", o.download(), fast1));
  // At position 0 (a prompt) every T gets the generic path's bits, the decode-sized T included.
  if (c.p0 == 0) {
    EXPECT_TRUE(compare_bits("attention_fast at position 0 vs generic", fast1, generic));
  }
}

INSTANTIATE_TEST_SUITE_P(
    Shapes, AttentionTest,
    ::testing::Values(AttnCase{1, 0, 4, 2, 64, 1}, AttnCase{7, 0, 8, 2, 64, 1}, AttnCase{33, 5, 8, 8, 128, 1},
                      AttnCase{33, 0, 8, 2, 128, 8}, AttnCase{511, 0, 8, 2, 128, 1}, AttnCase{512, 0, 4, 1, 64, 1},
                      AttnCase{513, 17, 8, 2, 128, 1}, AttnCase{513, 0, 4, 4, 64, 6},
                      AttnCase{2048, 0, 8, 2, 128, 1}, AttnCase{64, 100, 8, 4, 64, 1},
                      // decode shapes: long context, few rows
                      AttnCase{1, 2047, 32, 8, 128, 1}, AttnCase{1, 4000, 8, 8, 64, 1}, AttnCase{4, 1000, 8, 2, 64, 1},
                      AttnCase{2, 63, 4, 1, 128, 8}, AttnCase{3, 1, 4, 2, 128, 1},
                      // decode-sized prompts (position 0): attention_fast takes flash, the generic bits
                      AttnCase{4, 0, 32, 8, 128, 1}, AttnCase{2, 0, 8, 8, 64, 1},
                      // Qwen2.5-7B: 28 query heads on 4 KV heads (GQA 7:1), prefill and decode
                      AttnCase{129, 0, 28, 4, 128, 1}, AttnCase{1, 600, 28, 4, 128, 1},
                      // head dim without a fast kernel: generic only, fast reports why
                      AttnCase{33, 3, 6, 3, 96, 1}),
    [](const auto& tp) { return name(tp.param); });

// Every flash-prefill variant against variant 0 and the generic tiled kernel, bit for bit: the
// variants change the ring, the pipeline and the schedule, never the per-warp arithmetic
// (kernels/attention_flash_pipe.cu). T from 1 to 2048 (tile and block edges: 63/64/65, one
// partial block, many tiles), p0 = 0 and a chunk after a cached prefix (p0 = 100: tiles cross
// the diagonal off the 64-key grid), GQA 32/8 (4 heads per block where a variant packs them) and
// H = Hkv; 28/4 (G = 7: no packing) and 8/4 (G = 2: pairs). The instance prefix is the suite's
// name, so --gtest_filter='FlashVariants*' selects exactly these.
class FlashVariantsTest : public ::testing::TestWithParam<AttnCase> {};

TEST_P(FlashVariantsTest, EveryVariantIsBitwiseVariant0AndGeneric) {
  PFX_REQUIRE_GPU();
  const AttnCase c = GetParam();
  const Inputs in = make_inputs(c);
  Stream stream;
  Cublas cublas;
  OnDevice dev(c, in);
  DeviceBuffer<uint16_t>& o = dev.o;
  const AttentionArgs& a = dev.args;
  ASSERT_EQ(attention_generic_scratch_bytes(c.T, c.p0 + c.T, c.H, c.hd), 0u) << "hd 64/128 run the tiled kernel";
  o.poison();
  attention_generic(a, cublas.get(), nullptr, 0, stream.get());
  const auto generic = o.download();

  const auto& variants = attention_flash_variants();
  ASSERT_GE(variants.size(), 2u);
  std::vector<uint16_t> v0;
  for (size_t i = 0; i < variants.size(); ++i) {
    const std::string what = "variant " + std::to_string(i) + " " + variants[i].name;
    SCOPED_TRACE(what);
    o.poison();
    attention_flash_prefill_variant(static_cast<int>(i), a, stream.get());
    const auto out = o.download();
    if (i == 0) {
      v0 = out;
    } else {
      EXPECT_TRUE(compare_bits(what + " vs variant 0", out, v0));
    }
    EXPECT_TRUE(compare_bits(what + " vs generic", out, generic));
  }
}

std::vector<AttnCase> variant_cases() {
  std::vector<AttnCase> cases;
  for (const int hd : {64, 128})
    for (const int T : {1, 7, 63, 64, 65, 200, 512, 1000, 2048})
      for (const int Hkv : {8, 32})
        for (const int p0 : {0, 100}) cases.push_back({T, p0, 32, Hkv, hd, 1});
  for (const int hd : {64, 128}) {
    cases.push_back({333, 0, 28, 4, hd, 1});
    cases.push_back({130, 64, 8, 4, hd, 4});
  }
  return cases;
}

INSTANTIATE_TEST_SUITE_P(FlashVariants, FlashVariantsTest, ::testing::ValuesIn(variant_cases()),
                         [](const auto& tp) { return name(tp.param); });

// Graph-launched decode (AttentionArgs::p0_dev): the position read from device memory and a grid
// sized for max_ctx give the bits of the by-value launch at every context length, across the
// split boundaries (every kMinKeysPerSplit = 64 keys at these row counts, and the 2-waves cap for
// H = 32); an out-of-range device position gives NaN, never an out-of-bounds read.
TEST(Attention, DecodePositionFromDeviceIsBitwiseByValue) {
  PFX_REQUIRE_GPU();
  for (const AttnCase shape : {AttnCase{1, 0, 4, 2, 64, 1}, AttnCase{1, 0, 32, 8, 128, 1}, AttnCase{2, 0, 8, 2, 64, 1}}) {
    AttnCase full = shape;
    full.p0 = 700;  // the cache holds 700 + T + 13 rows, all valid up to 700 + T
    const Inputs in = make_inputs(full);
    Stream stream;
    DeviceBuffer<uint16_t> q(in.q), k(in.k), v(in.v);
    DeviceBuffer<uint16_t> o(static_cast<size_t>(shape.T) * shape.H * shape.hd);
    DeviceBuffer<int> p0_dev(1);
    const size_t bytes = attention_decode_scratch_bytes(shape.T, shape.H, shape.hd);
    DeviceBuffer<uint8_t> scratch(bytes);
    AttentionArgs a;
    a.q16 = q.get(), a.k_cache = k.get(), a.v_cache = v.get(), a.o16 = o.get();
    a.T = shape.T, a.H = shape.H, a.Hkv = shape.Hkv, a.hd = shape.hd, a.max_ctx = in.max_ctx;
    for (const int p0 : {0, 1, 62, 63, 64, 65, 127, 128, 129, 200, 255, 256, 511, 512, 513, 640, 700}) {
      SCOPED_TRACE("T=" + std::to_string(shape.T) + " H=" + std::to_string(shape.H) + " p0=" + std::to_string(p0));
      a.p0 = p0, a.p0_dev = nullptr;
      o.poison();
      attention_decode(a, scratch.get(), bytes, stream.get());
      const auto by_value = o.download();
      p0_dev.upload({p0});
      a.p0 = 0, a.p0_dev = p0_dev.get();  // the by-value p0 is ignored
      o.poison();
      attention_decode(a, scratch.get(), bytes, stream.get());
      EXPECT_TRUE(compare_bits("device p0 vs by value", o.download(), by_value));
    }
    p0_dev.upload({in.max_ctx - shape.T + 1});  // one row past the cache
    o.fill_bytes(0);
    attention_decode(a, scratch.get(), bytes, stream.get());
    for (uint16_t h : o.download()) ASSERT_TRUE(std::isnan(half_to_float(h))) << "out-of-range device position";
  }
}

TEST(Attention, RejectsBadArguments) {
  alignas(16) uint16_t h[8] = {};
  AttentionArgs a;
  a.q16 = h, a.k_cache = h, a.v_cache = h, a.o16 = h;
  a.T = 4, a.H = 8, a.Hkv = 3, a.hd = 64, a.p0 = 0, a.max_ctx = 16;  // H % Hkv != 0
  EXPECT_THROW(attention_flash_prefill(a, nullptr), pfx::Error);
  a.Hkv = 2, a.p0 = 13;  // 13 + 4 > 16
  EXPECT_THROW(attention_decode(a, h, sizeof h, nullptr), pfx::Error);
  a.p0 = 0;
  EXPECT_THROW(attention_decode(a, h, 1, nullptr), pfx::Error);  // scratch too small
  EXPECT_THROW(attention_generic(a, nullptr, h, sizeof h, nullptr), pfx::Error);  // no handle
  // Only the decode kernel reads the position from the device.
  const int* p0_dev = reinterpret_cast<const int*>(h);
  a.p0_dev = p0_dev;
  EXPECT_THROW(attention_flash_prefill(a, nullptr), pfx::Error);
  EXPECT_THROW(attention_generic(a, nullptr, h, sizeof h, nullptr), pfx::Error);
  a.T = 17;  // T alone past the cache, whatever the device position
  EXPECT_THROW(attention_decode(a, h, sizeof h, nullptr), pfx::Error);
  a.T = 4, a.p0_dev = nullptr;
  a.hd = 80;
  EXPECT_NE(attention_fast_unsupported_reason(a), nullptr);
  a.hd = 64;  // a flash variant that does not exist
  EXPECT_THROW(attention_flash_prefill_variant(-1, a, nullptr), pfx::Error);
  EXPECT_THROW(attention_flash_prefill_variant(static_cast<int>(attention_flash_variants().size()), a, nullptr),
               pfx::Error);
}

}  // namespace
}  // namespace pfx::kernels::test

// RoPE + fp16 conversion + KV-cache write: the generic pair (rope_f32, store_qkv) and the fused
// kernel must give identical bits, match a double-precision reference to fp16 rounding, write
// exactly cache rows p0..p0+T-1 (the rest stays poisoned), and the fused kernel must leave its
// fp32 inputs untouched. q/k/v come from one fused-QKV-style buffer to exercise row strides.
// Layouts: adjacent pairs (llama) and neox pairs (qwen2), partial rotation (n_rot < hd), linear
// frequency scaling and llama3 frequency factors (rope_freqs).
#include <gtest/gtest.h>

#include <cmath>

#include "gpu_test_support.h"
#include "kernels/kernels.h"
#include "util/error.h"

namespace pfx::kernels::test {
namespace {

struct RopeCase {
  int T, p0, H, Hkv, hd;
  bool neox = false;
  int n_rot = 0;            // 0: hd
  float freq_scale = 1.0f;
  bool factors = false;     // llama3-style per-pair factors 1 .. 8
};

std::string name(const RopeCase& c) {
  return "T" + std::to_string(c.T) + "_p" + std::to_string(c.p0) + "_H" + std::to_string(c.H) + "_Hkv" +
         std::to_string(c.Hkv) + "_hd" + std::to_string(c.hd) + (c.neox ? "_neox" : "") +
         (c.n_rot ? "_rot" + std::to_string(c.n_rot) : "") + (c.freq_scale != 1.0f ? "_lin" : "") +
         (c.factors ? "_ff" : "");
}

std::vector<float> factor_table(int n_rot) {
  std::vector<float> f(static_cast<size_t>(n_rot / 2));
  for (size_t i = 0; i < f.size(); ++i) f[i] = 1.0f + 7.0f * static_cast<float>(i) / static_cast<float>(f.size());
  return f;
}

// Rotated copy (double) of one head vector at position pos; elements past n_rot copied.
void rope_ref(const float* x, double* y, int pos, int hd, double base, const RopeCase& c) {
  const int n_rot = c.n_rot ? c.n_rot : hd, half = n_rot / 2;
  const std::vector<float> ff = factor_table(n_rot);
  for (int d = 0; d < hd; ++d) y[d] = x[d];
  for (int i = 0; i < half; ++i) {
    double inv = std::pow(base, -2.0 * i / n_rot) * c.freq_scale;
    if (c.factors) inv /= ff[static_cast<size_t>(i)];
    const double theta = pos * inv;
    const double co = std::cos(theta), si = std::sin(theta);
    const int a = c.neox ? i : 2 * i, b = c.neox ? i + half : 2 * i + 1;
    y[a] = x[a] * co - x[b] * si;
    y[b] = x[a] * si + x[b] * co;
  }
}

class RopeTest : public ::testing::TestWithParam<RopeCase> {};

TEST_P(RopeTest, GenericEqualsFusedAndMatchesReference) {
  PFX_REQUIRE_GPU();
  const RopeCase c = GetParam();
  const int extra = 9;  // cache rows past the context: must stay untouched
  QkvShape s;
  s.T = c.T, s.H = c.H, s.Hkv = c.Hkv, s.hd = c.hd, s.p0 = c.p0, s.max_ctx = c.p0 + c.T + extra;
  s.rope_base = 10000.0f;
  s.neox = c.neox, s.n_rot = c.n_rot, s.freq_scale = c.freq_scale;
  DeviceBuffer<float> factors(factor_table(c.n_rot ? c.n_rot : c.hd));
  if (c.factors) s.freq_factors = factors.get();
  const int64_t ld = static_cast<int64_t>(c.H + 2 * c.Hkv) * c.hd;  // [T, q | k | v] like a fused QKV GEMM
  const auto qkv = random_floats(static_cast<size_t>(c.T) * ld, -2.0f, 2.0f);
  const size_t cache_n = static_cast<size_t>(c.Hkv) * s.max_ctx * c.hd;

  Stream stream;
  DeviceBuffer<float> gen_in(qkv), fused_in(qkv);
  DeviceBuffer<uint16_t> gen_q(static_cast<size_t>(c.T) * c.H * c.hd), fused_q(gen_q.size());
  DeviceBuffer<uint16_t> gen_k(cache_n), gen_v(cache_n), fused_k(cache_n), fused_v(cache_n);
  for (auto* b : {&gen_q, &fused_q, &gen_k, &gen_v, &fused_k, &fused_v}) b->poison();

  auto input = [&](float* base) {
    QkvInput in;
    in.q32 = base, in.ld_q = ld;
    in.k32 = base + static_cast<int64_t>(c.H) * c.hd, in.ld_k = ld;
    in.v32 = base + static_cast<int64_t>(c.H + c.Hkv) * c.hd, in.ld_v = ld;
    return in;
  };
  const QkvInput gi = input(gen_in.get()), fi = input(fused_in.get());
  rope_f32(const_cast<float*>(gi.q32), gi.ld_q, const_cast<float*>(gi.k32), gi.ld_k, s, stream.get());
  store_qkv(gi, QkvOutput{gen_q.get(), gen_k.get(), gen_v.get()}, s, stream.get());
  rope_store_qkv_fused(fi, QkvOutput{fused_q.get(), fused_k.get(), fused_v.get()}, s, stream.get());
  stream.sync();

  const auto q_gen = gen_q.download(), k_gen = gen_k.download(), v_gen = gen_v.download();
  EXPECT_TRUE(compare_bits("q16 generic vs fused", fused_q.download(), q_gen));
  EXPECT_TRUE(compare_bits("K cache generic vs fused", fused_k.download(), k_gen));
  EXPECT_TRUE(compare_bits("V cache generic vs fused", fused_v.download(), v_gen));
  EXPECT_TRUE(compare_bits("fused leaves q32/k32/v32 untouched", fused_in.download(), qkv));

  // The position from device memory (graph-launched decode, QkvShape::p0_dev): the same bits; the
  // by-value p0 is then ignored. A device position past the cache writes nothing.
  {
    DeviceBuffer<int> p0_dev(std::vector<int>{c.p0});
    QkvShape sd = s;
    sd.p0 = 0, sd.p0_dev = p0_dev.get();
    DeviceBuffer<uint16_t> dev_q(gen_q.size()), dev_k(cache_n), dev_v(cache_n);
    for (auto* b : {&dev_q, &dev_k, &dev_v}) b->poison();
    rope_store_qkv_fused(fi, QkvOutput{dev_q.get(), dev_k.get(), dev_v.get()}, sd, stream.get());
    stream.sync();
    EXPECT_TRUE(compare_bits("q16 device p0 vs by value", dev_q.download(), fused_q.download()));
    EXPECT_TRUE(compare_bits("K cache device p0 vs by value", dev_k.download(), fused_k.download()));
    EXPECT_TRUE(compare_bits("V cache device p0 vs by value", dev_v.download(), fused_v.download()));
    p0_dev.upload({s.max_ctx - c.T + 1});
    for (auto* b : {&dev_q, &dev_k, &dev_v}) b->poison();
    rope_store_qkv_fused(fi, QkvOutput{dev_q.get(), dev_k.get(), dev_v.get()}, sd, stream.get());
    stream.sync();
    for (auto* b : {&dev_q, &dev_k, &dev_v})
      for (uint16_t h : b->download()) ASSERT_EQ(h, 0xFFFF) << "a device position past the cache wrote";
  }

  // References: rotated q and k in double, v as is; rope_f32's fp32 output too.
  std::vector<double> q_ref(q_gen.size()), rot_ref(qkv.size());
  std::vector<double> k_ref, v_ref, k_got, v_got;
  std::vector<double> head(static_cast<size_t>(c.hd));
  for (int t = 0; t < c.T; ++t) {
    const float* row = qkv.data() + static_cast<size_t>(t) * ld;
    for (int i = 0; i < ld; ++i) rot_ref[static_cast<size_t>(t) * ld + i] = row[i];
    for (int h = 0; h < c.H + c.Hkv; ++h) {
      rope_ref(row + static_cast<size_t>(h) * c.hd, head.data(), c.p0 + t, c.hd, s.rope_base, c);
      for (int d = 0; d < c.hd; ++d) rot_ref[static_cast<size_t>(t) * ld + h * c.hd + d] = head[static_cast<size_t>(d)];
      if (h < c.H) {
        for (int d = 0; d < c.hd; ++d) q_ref[(static_cast<size_t>(t) * c.H + h) * c.hd + d] = head[static_cast<size_t>(d)];
      } else {
        const int g = h - c.H;
        for (int d = 0; d < c.hd; ++d) {
          const size_t at = (static_cast<size_t>(g) * s.max_ctx + c.p0 + t) * c.hd + d;
          k_ref.push_back(head[static_cast<size_t>(d)]);
          k_got.push_back(half_to_float(k_gen[at]));
          v_ref.push_back(row[static_cast<size_t>(c.H + c.Hkv + g) * c.hd + d]);
          v_got.push_back(half_to_float(v_gen[at]));
        }
      }
    }
  }
  // fp32 rotation error (a few ulps of |x0| + |x1| <= 4) on top of fp16 rounding.
  auto tol16 = [](size_t, double r) { return fp16_ulp(r) + 4e-6; };
  EXPECT_TRUE(compare("q16 vs double reference", halves_to_double(q_gen), q_ref, tol16));
  EXPECT_TRUE(compare("K cache rows vs double reference", k_got, k_ref, tol16));
  EXPECT_TRUE(compare("V cache rows vs fp16(v)", v_got, v_ref, [](size_t, double r) { return fp16_ulp(r); }));
  EXPECT_TRUE(compare("rope_f32 in place vs double reference", to_double(gen_in.download()), rot_ref,
                      [](size_t, double) { return 4e-6; }));

  // Cache rows outside p0..p0+T-1 keep their poison (all-ones bits).
  size_t touched_outside = 0;
  for (int g = 0; g < c.Hkv; ++g)
    for (int p = 0; p < s.max_ctx; ++p) {
      if (p >= c.p0 && p < c.p0 + c.T) continue;
      for (int d = 0; d < c.hd; ++d) {
        const size_t at = (static_cast<size_t>(g) * s.max_ctx + p) * c.hd + d;
        touched_outside += (k_gen[at] != 0xFFFF) + (v_gen[at] != 0xFFFF);
      }
    }
  EXPECT_EQ(touched_outside, 0u) << "cache elements written outside rows p0..p0+T-1";
}

INSTANTIATE_TEST_SUITE_P(Shapes, RopeTest,
                         ::testing::Values(RopeCase{1, 0, 4, 2, 64}, RopeCase{7, 0, 8, 2, 64}, RopeCase{33, 100, 8, 8, 128},
                                           RopeCase{511, 0, 8, 2, 128}, RopeCase{512, 3, 4, 1, 64},
                                           RopeCase{513, 0, 32, 8, 128}, RopeCase{2048, 0, 8, 8, 128},
                                           RopeCase{1, 4000, 32, 32, 128}, RopeCase{7, 2, 6, 3, 96},
                                           // qwen2: neox pairs; llama3: factors; partial rotation; linear scaling
                                           RopeCase{33, 5, 28, 4, 128, true}, RopeCase{1, 900, 8, 2, 64, true},
                                           RopeCase{65, 0, 32, 8, 128, false, 0, 1.0f, true},
                                           RopeCase{9, 11, 8, 2, 64, false, 32}, RopeCase{9, 11, 8, 2, 64, true, 32},
                                           RopeCase{17, 40, 4, 4, 64, false, 0, 0.25f}),
                         [](const auto& tp) { return name(tp.param); });

TEST(Rope, RejectsBadShapes) {
  float f[4] = {};
  uint16_t h[4] = {};
  QkvShape s;
  s.T = 4, s.H = 8, s.Hkv = 3, s.hd = 64, s.p0 = 0, s.max_ctx = 16;  // H not a multiple of Hkv
  const QkvInput in{f, 512, f, 192, f, 192};
  const QkvOutput out{h, h, h};
  EXPECT_THROW(store_qkv(in, out, s, nullptr), pfx::Error);
  s.Hkv = 2, s.p0 = 14;  // 14 + 4 > 16
  EXPECT_THROW(rope_store_qkv_fused(in, out, s, nullptr), pfx::Error);
  s.p0 = 0, s.hd = 63;
  EXPECT_THROW(rope_f32(f, 512, f, 192, s, nullptr), pfx::Error);
  // Only the fused kernel reads the position from the device; T alone must fit the cache then.
  const int p0 = 0;
  s.hd = 64, s.p0_dev = &p0;
  EXPECT_THROW(rope_f32(f, 512, f, 192, s, nullptr), pfx::Error);
  EXPECT_THROW(store_qkv(in, out, s, nullptr), pfx::Error);
  s.T = 17;
  EXPECT_THROW(rope_store_qkv_fused(in, out, s, nullptr), pfx::Error);
}

}  // namespace
}  // namespace pfx::kernels::test

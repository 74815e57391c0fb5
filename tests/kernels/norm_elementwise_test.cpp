// RMSNorm (generic and warp-per-row), SwiGLU, residual add, bias add, fp32->fp16 and argmax against CPU
// references, on ragged token counts, with outputs poisoned before every launch.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <tuple>
#include <utility>
#include <vector>

#include "gpu_test_support.h"
#include "kernels/kernels.h"
#include "util/error.h"

namespace pfx::kernels::test {
namespace {

std::vector<double> rmsnorm_ref(const std::vector<float>& x, const std::vector<float>& w, int T, int D, float eps) {
  std::vector<double> out(x.size());
  for (int t = 0; t < T; ++t) {
    double ss = 0;
    for (int d = 0; d < D; ++d) ss += static_cast<double>(x[static_cast<size_t>(t) * D + d]) * x[static_cast<size_t>(t) * D + d];
    const double r = 1.0 / std::sqrt(ss / D + eps);
    for (int d = 0; d < D; ++d) out[static_cast<size_t>(t) * D + d] = x[static_cast<size_t>(t) * D + d] * r * w[d];
  }
  return out;
}

TEST(Rmsnorm, GenericAndFastMatchReference) {
  PFX_REQUIRE_GPU();
  Stream stream;
  const float eps = 1e-5f;
  struct Shape { int T, D; };
  // T < 64 with D <= 8192 runs the fast path's one-block-per-row kernel, the rest its warp kernel
  // (the row in registers up to D = 4096, in two batched passes above).
  for (const Shape s : {Shape{1, 4096}, Shape{7, 4096}, Shape{33, 4096}, Shape{63, 4096}, Shape{64, 4096},
                        Shape{511, 4096}, Shape{512, 4096}, Shape{513, 4096}, Shape{2048, 1024}, Shape{1, 8192},
                        Shape{2, 8196}, Shape{1, 12288}, Shape{7, 64}, Shape{33, 100}, Shape{5, 1},
                        Shape{100, 100}, Shape{64, 4100}, Shape{65, 5120}, Shape{66, 8192}}) {
    SCOPED_TRACE("T=" + std::to_string(s.T) + " D=" + std::to_string(s.D));
    const auto x = random_floats(static_cast<size_t>(s.T) * s.D, -3.0f, 3.0f);
    const auto w = random_floats(static_cast<size_t>(s.D), -1.5f, 1.5f);
    const auto ref = rmsnorm_ref(x, w, s.T, s.D, eps);
    DeviceBuffer<float> dx(x), dw(w);
    DeviceBuffer<uint16_t> out(x.size());
    auto tol = [](size_t, double r) { return fp16_ulp(r); };

    out.poison();
    rmsnorm_f32_to_f16(dx.get(), dw.get(), out.get(), s.T, s.D, eps, stream.get());
    const std::vector<uint16_t> generic = out.download();
    EXPECT_TRUE(compare("generic", halves_to_double(generic), ref, tol));

    const char* why = rmsnorm_fast_unsupported_reason(dx.get(), dw.get(), out.get(), s.D);
    if (s.D % 4 != 0) {
      EXPECT_NE(why, nullptr);
      EXPECT_THROW(rmsnorm_f32_to_f16_fast(dx.get(), dw.get(), out.get(), s.T, s.D, eps, stream.get()), pfx::Error);
      continue;
    }
    ASSERT_EQ(why, nullptr) << why;
    out.poison();
    rmsnorm_f32_to_f16_fast(dx.get(), dw.get(), out.get(), s.T, s.D, eps, stream.get());
    const std::vector<uint16_t> fast = out.download();
    EXPECT_TRUE(compare("fast", halves_to_double(fast), ref, tol));
    // One summation order for both kernels (rmsnorm.cu): the parity check must see no difference.
    EXPECT_TRUE(compare_bits("fast vs generic", fast, generic));
  }
}

// n values, and pointer offsets of 0 and 1 element (the latter forces the scalar path).
const std::vector<int64_t> kSizes = {1, 7, 33, 511, 512, 513, 4096 * 7 + 3};

// body(n, off) for every n of kSizes at both offsets, each under its own SCOPED_TRACE.
template <class Body>
void for_each_size_and_offset(Body body) {
  for (int64_t n : kSizes) {
    for (int off : {0, 1}) {
      SCOPED_TRACE("n=" + std::to_string(n) + " offset=" + std::to_string(off));
      body(n, off);
    }
  }
}

// Inputs of a two-input op: x and y on the host, and their device copies dx, dy.
struct TwoInputs {
  TwoInputs(std::vector<float> x_host, std::vector<float> y_host)
      : x(std::move(x_host)), y(std::move(y_host)), dx(x), dy(y) {}
  std::vector<float> x, y;
  DeviceBuffer<float> dx, dy;
};
struct Range { float lo, hi; };

// body(n, off, in) for every n and offset of for_each_size_and_offset, with in.x and in.y n + off
// random values drawn from x_range, then y_range ([lo, hi) each; x first keeps the draw order).
template <class Body>
void for_each_two_inputs(Range x_range, Range y_range, Body body) {
  for_each_size_and_offset([&](int64_t n, int off) {
    auto x = random_floats(static_cast<size_t>(n + off), x_range.lo, x_range.hi);
    auto y = random_floats(static_cast<size_t>(n + off), y_range.lo, y_range.hi);
    const TwoInputs in(std::move(x), std::move(y));
    body(n, off, in);
  });
}

TEST(Elementwise, SiluMulMatchesReference) {
  PFX_REQUIRE_GPU();
  Stream stream;
  for_each_two_inputs({-8.0f, 8.0f}, {-2.0f, 2.0f}, [&](int64_t n, int off, const TwoInputs& in) {
    const std::vector<float>& g = in.x;  // gate
    const std::vector<float>& u = in.y;  // up
    DeviceBuffer<uint16_t> a(static_cast<size_t>(n + off));
    a.poison();
    silu_mul_f32_to_f16(in.dx.get() + off, in.dy.get() + off, a.get() + off, n, stream.get());
    const auto got = a.download();
    std::vector<double> got_d, ref;
    for (int64_t i = 0; i < n; ++i) {
      const double gi = g[static_cast<size_t>(i + off)];
      ref.push_back(gi / (1.0 + std::exp(-gi)) * u[static_cast<size_t>(i + off)]);
      got_d.push_back(half_to_float(got[static_cast<size_t>(i + off)]));
    }
    // fp16 rounding plus a few fp32 ulps from expf and the divide.
    EXPECT_TRUE(compare("silu_mul", got_d, ref, [](size_t, double r) { return fp16_ulp(r) + 1e-6 * std::fabs(r); }));
    if (off) {
      EXPECT_EQ(got[0], 0xFFFF) << "silu_mul wrote before its output";
    }
  });
}

TEST(Elementwise, AddF32IsExact) {
  PFX_REQUIRE_GPU();
  Stream stream;
  for_each_two_inputs({-100.0f, 100.0f}, {-1.0f, 1.0f}, [&](int64_t n, int off, const TwoInputs& in) {
    add_f32(in.dx.get() + off, in.dy.get() + off, n, stream.get());
    std::vector<float> want(in.x);
    for (int64_t i = 0; i < n; ++i)
      want[static_cast<size_t>(i + off)] = in.x[static_cast<size_t>(i + off)] + in.y[static_cast<size_t>(i + off)];
    EXPECT_TRUE(compare_bits("add_f32", in.dx.download(), want));
  });
}

// The Q/K/V bias add (qwen2): each row of a strided matrix gets the bias, nothing past n changes.
TEST(Elementwise, AddBiasF32IsExactPerRow) {
  PFX_REQUIRE_GPU();
  Stream stream;
  for (const auto& [T, n, ld] : std::vector<std::tuple<int, int64_t, int64_t>>{{1, 64, 64}, {7, 512, 640}, {2049, 3584, 3584}}) {
    SCOPED_TRACE("T=" + std::to_string(T) + " n=" + std::to_string(n) + " ld=" + std::to_string(ld));
    const auto x = random_floats(static_cast<size_t>(T * ld), -50.0f, 50.0f);
    const auto b = random_floats(static_cast<size_t>(n), -3.0f, 3.0f);
    DeviceBuffer<float> dx(x), db(b);
    add_bias_f32(dx.get(), ld, db.get(), T, n, stream.get());
    std::vector<float> want(x);
    for (int t = 0; t < T; ++t)
      for (int64_t c = 0; c < n; ++c) want[static_cast<size_t>(t * ld + c)] = x[static_cast<size_t>(t * ld + c)] + b[static_cast<size_t>(c)];
    EXPECT_TRUE(compare_bits("add_bias_f32", dx.download(), want));
  }
  float f = 0;
  EXPECT_THROW(add_bias_f32(&f, 4, &f, 1, 8, stream.get()), pfx::Error);  // ld < n
}

TEST(Elementwise, F32ToF16IsRoundNearestEven) {
  PFX_REQUIRE_GPU();
  Stream stream;
  for_each_size_and_offset([&](int64_t n, int off) {
    auto x = random_floats(static_cast<size_t>(n + off), -70000.0f, 70000.0f);
    for (size_t i = 0; i < x.size(); i += 3) x[i] *= 1e-8f;  // subnormal fp16 range too
    DeviceBuffer<float> dx(x);
    DeviceBuffer<uint16_t> out(x.size());
    out.poison();
    f32_to_f16(dx.get() + off, out.get() + off, n, stream.get());
    std::vector<uint16_t> want(x.size(), 0xFFFF);
    for (int64_t i = 0; i < n; ++i) want[static_cast<size_t>(i + off)] = float_to_half(x[static_cast<size_t>(i + off)]);
    EXPECT_TRUE(compare_bits("f32_to_f16", out.download(), want));
  });
}

TEST(Argmax, LowestIndexOfMaximumAndNaNRows) {
  PFX_REQUIRE_GPU();
  Stream stream;
  for (int cols : {1, 7, 513, 32000}) {
    SCOPED_TRACE("cols=" + std::to_string(cols));
    const int rows = 6;
    auto x = random_floats(static_cast<size_t>(rows) * cols, -10.0f, 10.0f);
    auto at = [&](int r, int c) -> float& { return x[static_cast<size_t>(r) * cols + c]; };
    if (cols > 1) {
      at(1, cols - 1) = 50.0f;  // maximum at the end
      at(2, cols / 2) = 60.0f;  // tie: the lower index wins
      at(2, cols - 1) = 60.0f;
      at(3, 0) = std::nanf("");  // NaN anywhere -> -1
      for (int c = 0; c < cols; ++c) at(4, c) = -std::numeric_limits<float>::infinity();
    }
    std::vector<int32_t> want(rows);
    for (int r = 0; r < rows; ++r) {
      int best = 0;
      bool nan = false;
      for (int c = 0; c < cols; ++c) {
        nan |= std::isnan(at(r, c));
        if (at(r, c) > at(r, best)) best = c;
      }
      want[static_cast<size_t>(r)] = nan ? -1 : best;
    }
    DeviceBuffer<float> dx(x);
    DeviceBuffer<int32_t> out(rows);
    out.fill_bytes(0x7F);  // neither a valid index nor -1
    argmax_rows(dx.get(), rows, cols, out.get(), stream.get());
    EXPECT_TRUE(compare_bits("argmax", out.download(), want));
  }
}

}  // namespace
}  // namespace pfx::kernels::test

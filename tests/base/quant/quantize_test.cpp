// Quantizers: error bounds on random data, exact agreement with gguf-py's bit-exact ports of
// ggml's q8_0/f16/bf16 quantizers, and q4_K/q6_K quality against llama.cpp's own quantizer on
// the fixture weights.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <fstream>
#include <iostream>
#include <random>

#include "engine/gguf/python_runner.h"
#include "base/quant/golden_input.h"
#include "gguf/gguf.h"
#include "quant/blocks.h"
#include "quant/dequant.h"
#include "quant/fp16.h"
#include "quant/quantize.h"
#include "util/error.h"
#include "util/fixtures.h"
#include "util/npy.h"

namespace fs = std::filesystem;
using pfx::quant::Type;

namespace {

std::vector<float> roundtrip(Type type, const std::vector<float>& x, int64_t cols) {
  const int64_t rows = static_cast<int64_t>(x.size()) / cols;
  const int64_t rb = pfx::quant::row_bytes(type, cols);
  std::vector<uint8_t> q(static_cast<size_t>(rb * rows));
  std::vector<float> y(x.size());
  for (int64_t r = 0; r < rows; ++r) {
    pfx::quant::quantize_row(type, x.data() + r * cols, q.data() + r * rb, cols);
    pfx::quant::dequantize_row(type, q.data() + r * rb, y.data() + r * cols, cols);
  }
  return y;
}

// sqrt(mean((x - y)^2)) / sqrt(mean(x^2)), in double.
double relative_rmse(const std::vector<float>& x, const std::vector<float>& y) {
  double num = 0, den = 0;
  for (size_t i = 0; i < x.size(); ++i) {
    num += (static_cast<double>(x[i]) - y[i]) * (static_cast<double>(x[i]) - y[i]);
    den += static_cast<double>(x[i]) * x[i];
  }
  return std::sqrt(num / den);
}

template <class Dist>
std::vector<float> sample(size_t n, uint32_t seed, Dist dist) {
  std::mt19937 rng(seed);
  std::vector<float> v(n);
  for (float& x : v) x = static_cast<float>(dist(rng));
  return v;
}

bool all_finite(const std::vector<float>& v) {
  for (float x : v) {
    if (!std::isfinite(x)) return false;
  }
  return true;
}

}  // namespace

// Bounds are ~15% above what this quantizer measures (printed), which is itself within a few
// percent of ggml's reference quantizers on the same distributions.
TEST(Quantize, GaussianErrorBounds) {
  const int64_t cols = 4096;
  const auto x = sample(64 * cols, 42, std::normal_distribution<double>(0.0, 0.02));
  struct Case {
    Type type;
    double bound;
  };
  for (const Case c : {Case{Type::Q8_0, 0.0075}, Case{Type::Q6_K, 0.021}, Case{Type::Q5_K, 0.042}, Case{Type::Q4_K, 0.1},
                       Case{Type::F16, 0.0004}, Case{Type::BF16, 0.003}}) {
    const auto y = roundtrip(c.type, x, cols);
    const double e = relative_rmse(x, y);
    std::cout << "  relative RMSE " << pfx::quant::type_name(c.type) << " (gaussian): " << e << "\n";
    EXPECT_LT(e, c.bound) << pfx::quant::type_name(c.type);
    EXPECT_TRUE(all_finite(y));
  }
}

TEST(Quantize, HeavyTailedAndUniformErrorBounds) {
  const int64_t cols = 2048;
  const auto heavy = sample(32 * cols, 7, std::student_t_distribution<double>(2.0));
  const auto uni = sample(32 * cols, 8, std::uniform_real_distribution<double>(-3.0, 1.0));
  for (const auto* x : {&heavy, &uni}) {
    const auto y8 = roundtrip(Type::Q8_0, *x, cols);
    const auto y6 = roundtrip(Type::Q6_K, *x, cols);
    const auto y4 = roundtrip(Type::Q4_K, *x, cols);
    std::cout << "  relative RMSE " << (x == &heavy ? "student-t(2)" : "uniform") << ": q8_0 " << relative_rmse(*x, y8)
              << ", q6_K " << relative_rmse(*x, y6) << ", q4_K " << relative_rmse(*x, y4) << "\n";
    EXPECT_LT(relative_rmse(*x, y8), 0.015);
    EXPECT_LT(relative_rmse(*x, y6), 0.03);
    EXPECT_LT(relative_rmse(*x, y4), 0.12);
    EXPECT_TRUE(all_finite(y8) && all_finite(y6) && all_finite(y4));
  }
}

TEST(Quantize, Q8_0ErrorIsAtMostHalfAStep) {
  const auto x = sample(256 * 32, 3, std::normal_distribution<double>(0.0, 1.0));
  const auto y = roundtrip(Type::Q8_0, x, 256);
  for (size_t b = 0; b < x.size() / 32; ++b) {
    float amax = 0;
    for (int j = 0; j < 32; ++j) amax = std::max(amax, std::fabs(x[b * 32 + j]));
    const float d = pfx::quant::fp16_to_fp32(pfx::quant::fp32_to_fp16(amax / 127.f));
    // Half a quantization step, plus the fp16 rounding of d spread over up to 127 steps.
    const float bound = 0.5f * d + 127.f * std::fabs(d - amax / 127.f) + 1e-7f;
    for (int j = 0; j < 32; ++j) ASSERT_LE(std::fabs(x[b * 32 + j] - y[b * 32 + j]), bound) << b << "," << j;
  }
}

TEST(Quantize, DegenerateRowsStayFinite) {
  const int64_t n = 512;
  const std::vector<std::vector<float>> rows = {
      std::vector<float>(n, 0.f),
      std::vector<float>(n, 0.75f),
      std::vector<float>(n, -3.f),
      std::vector<float>(n, 1e-38f),
      std::vector<float>(n, std::numeric_limits<float>::denorm_min()),
      sample(n, 11, std::normal_distribution<double>(0.0, 1e-6)),
      sample(n, 12, std::normal_distribution<double>(0.0, 1000.0)),
  };
  for (Type t : {Type::Q8_0, Type::Q4_K, Type::Q5_K, Type::Q6_K}) {
    for (size_t r = 0; r < rows.size(); ++r) {
      const auto y = roundtrip(t, rows[r], n);
      EXPECT_TRUE(all_finite(y)) << pfx::quant::type_name(t) << " row " << r;
      if (r == 0) {
        for (float v : y) ASSERT_EQ(v, 0.f) << pfx::quant::type_name(t);
      }
      if (r == 1 || r == 2) {
        EXPECT_LT(relative_rmse(rows[r], y), 0.02) << pfx::quant::type_name(t) << " row " << r;
      }
    }
  }
  // One large outlier in an otherwise small block.
  std::vector<float> spike(256, 0.01f);
  spike[17] = 50.f;
  for (Type t : {Type::Q8_0, Type::Q4_K, Type::Q5_K, Type::Q6_K}) {
    const auto y = roundtrip(t, spike, 256);
    EXPECT_TRUE(all_finite(y));
    EXPECT_NEAR(y[17], 50.f, 2.f) << pfx::quant::type_name(t);
  }
}

TEST(Quantize, UnsupportedTypesAndBadLengthsThrow) {
  std::vector<float> x(512, 1.f);
  std::vector<uint8_t> q(4096);
  EXPECT_THROW(pfx::quant::quantize_row(Type::Q5_0, x.data(), q.data(), 256), pfx::Error);
  EXPECT_THROW(pfx::quant::quantize_row(Type::Q2_K, x.data(), q.data(), 256), pfx::Error);
  EXPECT_THROW(pfx::quant::quantize_row(Type::Q4_K, x.data(), q.data(), 200), pfx::Error);
  EXPECT_THROW(pfx::quant::quantize_row(Type::Q8_0, x.data(), q.data(), 33), pfx::Error);
}

// gguf-py's Q8_0, F16 and BF16 quantizers are documented bit-exact ports of ggml's reference
// ones; ours must produce identical bytes.
TEST(QuantizeBitExact, Q8_0F16Bf16MatchGgufPy) {
  const std::string problem = pfx::test::python_gguf_problem();
  ASSERT_EQ(problem, "");
  pfx::test::TempDir dir("quantize_py");
  const int64_t cols = 1024, rows = 16;
  auto x = sample(static_cast<size_t>(cols * rows), 5, std::normal_distribution<double>(0.0, 0.5));
  // Values that stress rounding: ties for q8_0 (x*id = k + 0.5), f16 ties and subnormals, zeros.
  for (int j = 0; j < 32; ++j) x[static_cast<size_t>(j)] = static_cast<float>(j - 16) * 0.5f;  // amax 8 → d = 8/127
  for (int j = 32; j < 64; ++j) x[static_cast<size_t>(j)] = 0.f;
  for (int j = 64; j < 96; ++j) x[static_cast<size_t>(j)] = static_cast<float>(j - 80) * 0x1p-25f;
  x[100] = 1.f + 0x1p-11f;
  x[101] = 65519.f;
  x[102] = -70000.f;
  pfx::write_npy(dir / "x.npy", x.data(), {rows, cols});
  for (Type t : {Type::Q8_0, Type::F16, Type::BF16}) {
    const std::string name = t == Type::Q8_0 ? "Q8_0" : t == Type::F16 ? "F16" : "BF16";
    const auto r = pfx::test::run_python("base/quant/gguf_py_quantize.py",
                                         {(dir / "x.npy").string(), name, (dir / (name + ".bin")).string()});
    ASSERT_EQ(r.exit_code, 0) << r.output;
    std::ifstream in(dir / (name + ".bin"), std::ios::binary);
    const std::vector<uint8_t> want((std::istreambuf_iterator<char>(in)), {});
    const int64_t rb = pfx::quant::row_bytes(t, cols);
    std::vector<uint8_t> got(static_cast<size_t>(rb * rows));
    for (int64_t r2 = 0; r2 < rows; ++r2) pfx::quant::quantize_row(t, x.data() + r2 * cols, got.data() + r2 * rb, cols);
    ASSERT_EQ(want.size(), got.size()) << name;
    size_t first = got.size();
    int64_t differing = 0;
    for (size_t i = 0; i < got.size(); ++i) {
      if (got[i] != want[i]) {
        if (first == got.size()) first = i;
        ++differing;
      }
    }
    EXPECT_EQ(differing, 0) << name << ": first differing byte " << first;
  }
}

// llama.cpp quantized the fixture weights W with ggml's reference q4_K/q6_K quantizers; we only
// have their q8_0 version W8 = W + e8. We quantize W8 and compare our error |Q(W8) - W8| with
// llama.cpp's error on W, estimated as |Q_ggml(W) - W8|^2 - |e8|^2 where |e8|^2 is the expected
// q8_0 rounding noise (d^2/12 per element, d read from each q8_0 block). Equal algorithms give
// a ratio near 1; ours must not be worse by more than 3%.
TEST(QuantizeQuality, CloseToLlamaCppOnFixtureWeights) {
  const fs::path models = pfx::fixtures_dir() / "models";
  const auto ref = pfx::gguf::File::open(models / "kq256-q80.gguf");
  for (const auto& [file, type] : {std::pair{"kq256-q4km.gguf", Type::Q4_K}, std::pair{"kq256-q6k.gguf", Type::Q6_K}}) {
    const auto theirs_file = pfx::gguf::File::open(models / file);
    double err_ours = 0, err_theirs = 0, q8_noise = 0;
    int64_t tensors = 0;
    for (const auto& t : theirs_file.tensors()) {
      if (t.type != type) continue;
      const auto& r = ref.tensor(t.name);
      ASSERT_EQ(r.type, Type::Q8_0) << t.name;
      ++tensors;
      std::vector<float> w(static_cast<size_t>(r.n_elements)), theirs(w.size()), ours(w.size());
      pfx::quant::dequantize_row(Type::Q8_0, ref.tensor_data(r), w.data(), r.n_elements);
      pfx::quant::dequantize_row(type, theirs_file.tensor_data(t), theirs.data(), t.n_elements);
      const int64_t rb = t.row_bytes();
      std::vector<uint8_t> q(static_cast<size_t>(t.n_bytes));
      for (int64_t row = 0; row < t.rows(); ++row) {
        pfx::quant::quantize_row(type, w.data() + row * t.cols(), q.data() + row * rb, t.cols());
      }
      pfx::quant::dequantize_row(type, q.data(), ours.data(), t.n_elements);
      for (size_t i = 0; i < w.size(); ++i) {
        err_ours += (static_cast<double>(ours[i]) - w[i]) * (static_cast<double>(ours[i]) - w[i]);
        err_theirs += (static_cast<double>(theirs[i]) - w[i]) * (static_cast<double>(theirs[i]) - w[i]);
      }
      const auto* blocks = reinterpret_cast<const pfx::quant::BlockQ8_0*>(ref.tensor_data(r));
      for (int64_t b = 0; b < r.n_elements / 32; ++b) {
        const double d = pfx::quant::fp16_to_fp32(blocks[b].d);
        q8_noise += 32.0 * d * d / 12.0;
      }
    }
    ASSERT_GT(tensors, 0) << file;
    ASSERT_GT(err_theirs, q8_noise) << file;
    const double raw_ratio = std::sqrt(err_ours / err_theirs);
    const double ratio = std::sqrt(err_ours / (err_theirs - q8_noise));
    std::cout << "  " << pfx::quant::type_name(type) << " over " << tensors << " tensors: our RMSE / llama.cpp's = "
              << ratio << " (q8_0 noise removed; " << raw_ratio << " raw)\n";
    EXPECT_LT(ratio, 1.03) << file;
  }
}

// ggml's reference k-quant quantizers' bytes for a fixed input (data/README.md says how they were
// made): ours must be identical, block for block.
namespace {
void expect_ggml_reference_bytes(Type t) {
  const auto x = pfx::test::golden_input();
  const fs::path path = fs::path(PFX_TESTS_DIR) / "base/quant/data" /
                        ("ggml_ref_" + std::string(pfx::quant::type_name(t)) + ".bin");
  std::ifstream in(path, std::ios::binary);
  ASSERT_TRUE(in) << "missing golden file " << path;
  const std::vector<uint8_t> want((std::istreambuf_iterator<char>(in)), {});
  const int64_t rb = pfx::quant::row_bytes(t, pfx::test::kGoldenCols);
  ASSERT_EQ(static_cast<int64_t>(want.size()), rb * pfx::test::kGoldenRows) << path;
  std::vector<uint8_t> got(want.size());
  for (int r = 0; r < pfx::test::kGoldenRows; ++r) {
    pfx::quant::quantize_row(t, x.data() + static_cast<size_t>(r) * pfx::test::kGoldenCols, got.data() + r * rb,
                             pfx::test::kGoldenCols);
  }
  const int64_t bsize = pfx::quant::traits(t).type_size;
  int64_t differing = 0, first = -1;
  for (int64_t b = 0; b < static_cast<int64_t>(got.size()) / bsize; ++b) {
    if (std::memcmp(got.data() + b * bsize, want.data() + b * bsize, static_cast<size_t>(bsize)) != 0) {
      if (first < 0) first = b;
      ++differing;
    }
  }
  EXPECT_EQ(differing, 0) << pfx::quant::type_name(t) << ": " << differing << " of " << got.size() / bsize
                          << " blocks differ from ggml's, first block " << first << " (row " << first * bsize / rb << ")";
}
}  // namespace

TEST(QuantizeBitExact, Q4KAndQ6KMatchGgmlReferenceBytes) {
  for (Type t : {Type::Q4_K, Type::Q6_K}) expect_ggml_reference_bytes(t);
}
TEST(QuantizeBitExact, Q5KMatchesGgmlReferenceBytes) { expect_ggml_reference_bytes(Type::Q5_K); }

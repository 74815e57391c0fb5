// Random quantized weights and the float64 reference of the fast-GEMM tests (gemm_reference.h).
#include "gemm_reference.h"

#include <cmath>
#include <cstdlib>
#include <cstring>
#include <string>

#include "quant/dequant.h"
#include "quant/fp16.h"
#include "quant/types.h"
#include "util/error.h"
#include "util/parallel.h"

namespace pfx::kernels::test {

namespace {

// A random fp16 scale: ±2^e, e uniform in [lo, hi); about 3% of them subnormal (2^-24 .. 2^-15),
// so the rounding of tiny weights to fp16 subnormals is exercised too.
uint16_t random_scale(std::mt19937_64& rng, double lo, double hi) {
  std::uniform_real_distribution<double> u(0.0, 1.0);
  const bool tiny = u(rng) < 0.03;
  const double e = tiny ? -24.0 + 9.0 * u(rng) : lo + (hi - lo) * u(rng);
  const double mag = std::exp2(e);
  const float v = static_cast<float>(u(rng) < 0.5 ? -mag : mag);
  return quant::fp32_to_fp16(v);
}

void put16(uint8_t* p, uint16_t v) { std::memcpy(p, &v, 2); }

}  // namespace

const char* type_name(uint32_t t) {
  switch (t) {
    case kQ8_0: return "q8_0";
    case kQ4K: return "q4_K";
    case kQ5K: return "q5_K";
    case kQ6K: return "q6_K";
    case kF16: return "f16";
    default: return "?";
  }
}

int64_t row_bytes(uint32_t t, int64_t cols) { return quant::row_bytes(static_cast<quant::Type>(t), cols); }

std::vector<uint8_t> random_weights(uint32_t t, int64_t N, int64_t K, std::mt19937_64& rng) {
  const int64_t rb = row_bytes(t, K);
  if (t == kF16) {  // finite values in [-1, 1], none zero
    const std::vector<uint16_t> h = random_activations(N * K, rng);
    std::vector<uint8_t> raw(h.size() * 2);
    std::memcpy(raw.data(), h.data(), raw.size());
    return raw;
  }
  std::vector<uint8_t> raw(static_cast<size_t>(N * rb));
  for (auto& b : raw) b = static_cast<uint8_t>(rng());
  // Scales: replace the random bytes at the fp16 scale fields with finite values of moderate size.
  const quant::TypeTraits& tr = quant::traits(static_cast<quant::Type>(t));
  const int64_t blocks = N * K / tr.block_size;
  for (int64_t b = 0; b < blocks; ++b) {
    uint8_t* blk = raw.data() + b * tr.type_size;
    switch (t) {
      case kQ4K:  // d, dmin at 0, 2; d inside the fused decode's range (|d| <= 2^-7, kernels/gemm_ws.h)
        put16(blk, random_scale(rng, -12, -7));
        put16(blk + 2, random_scale(rng, -12, -6));
        break;
      case kQ5K:
        put16(blk, random_scale(rng, -12, -6));
        put16(blk + 2, random_scale(rng, -12, -6));
        break;
      case kQ6K:  // d at 208, inside the fused decode's range (|d| < 2^-10; -10 itself could round up to it)
        put16(blk + 208, random_scale(rng, -14, -10.01));
        break;
      case kQ8_0:  // d at 0
        put16(blk, random_scale(rng, -12, -6));
        break;
      default: fail("random_weights: type ", t);
    }
  }
  return raw;
}

void scale_block_scales(uint32_t t, std::vector<uint8_t>& raw, float factor) {
  if (t != kQ4K && t != kQ6K) fail("scale_block_scales: type ", t);
  const int bytes = t == kQ6K ? 210 : 144, at = t == kQ6K ? 208 : 0;
  for (size_t b = 0; b + static_cast<size_t>(bytes) <= raw.size(); b += static_cast<size_t>(bytes)) {
    uint16_t h;
    std::memcpy(&h, raw.data() + b + at, 2);
    put16(raw.data() + b + at, quant::fp32_to_fp16(quant::fp16_to_fp32(h) * factor));
  }
}

std::vector<uint16_t> reference_weights_f16(uint32_t t, const std::vector<uint8_t>& raw, int64_t N, int64_t K) {
  const int64_t rb = row_bytes(t, K);
  std::vector<uint16_t> w16(static_cast<size_t>(N * K));
  parallel_for(N, [&](int64_t begin, int64_t end) {
    std::vector<float> row(static_cast<size_t>(K));
    for (int64_t n = begin; n < end; ++n) {
      quant::dequantize_row(static_cast<quant::Type>(t), raw.data() + n * rb, row.data(), K);
      for (int64_t k = 0; k < K; ++k) w16[static_cast<size_t>(n * K + k)] = quant::fp32_to_fp16(row[static_cast<size_t>(k)]);
    }
  });
  return w16;
}

std::vector<uint16_t> random_activations(int64_t n, std::mt19937_64& rng) {
  std::uniform_real_distribution<float> u(-1.0f, 1.0f);
  std::vector<uint16_t> x(static_cast<size_t>(n));
  for (auto& h : x) {
    do h = quant::fp32_to_fp16(u(rng));
    while ((h & 0x7FFFu) == 0);
  }
  return x;
}

Reference reference_gemm(const std::vector<uint16_t>& x16, const std::vector<uint16_t>& w16, int64_t T, int64_t N,
                         int64_t K) {
  std::vector<float> wf(w16.size());
  for (size_t i = 0; i < w16.size(); ++i) wf[i] = quant::fp16_to_fp32(w16[i]);
  Reference r{std::vector<double>(static_cast<size_t>(T * N)), std::vector<double>(static_cast<size_t>(T * N))};
  parallel_for(T, [&](int64_t begin, int64_t end) {
    std::vector<double> xd(static_cast<size_t>(K));
    for (int64_t t = begin; t < end; ++t) {
      for (int64_t k = 0; k < K; ++k) xd[static_cast<size_t>(k)] = quant::fp16_to_fp32(x16[static_cast<size_t>(t * K + k)]);
      for (int64_t n = 0; n < N; ++n) {
        const float* w = wf.data() + n * K;
        double s = 0, a = 0;
        for (int64_t k = 0; k < K; ++k) {
          const double p = xd[static_cast<size_t>(k)] * static_cast<double>(w[k]);
          s += p;
          a += std::fabs(p);
        }
        r.y[static_cast<size_t>(t * N + n)] = s;
        r.abssum[static_cast<size_t>(t * N + n)] = a;
      }
    }
  });
  return r;
}

bool variant_selected(const char* name) {
  const char* env = std::getenv("PFX_GEMM_VARIANTS");
  if (env == nullptr || *env == 0) return true;
  const std::string list = env, n = name;
  size_t start = 0;
  while (start <= list.size()) {
    const size_t comma = list.find(',', start);
    const std::string item = list.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
    if (!item.empty() && n.rfind(item, 0) == 0) return true;  // a prefix of the name
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  return false;
}

double silu_mul_ref(double g, double u) { return g / (1.0 + std::exp(-g)) * u; }

}  // namespace pfx::kernels::test

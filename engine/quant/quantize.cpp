// Reference quantizers in ggml's style (quantize_row_*_ref without an importance matrix):
// q8_0 = absmax scaling; q4_K = per-sub-block weighted least-squares scale+min search, then
// 6-bit super-block quantization of the scales; q6_K = per-sub-block scale search, then 8-bit
// scales. Each block is independent, so rows can be quantized in parallel.
#include "quant/quantize.h"

#include <algorithm>
#include <cmath>
#include <cstring>

#include "quant/blocks.h"
#include "quant/dequant.h"
#include "quant/fp16.h"
#include "util/error.h"

namespace pfx::quant {
namespace {

constexpr float kGroupMaxEps = 1e-15f;  // below this a group is treated as all zeros

// Round to nearest, ties to even, for |x| < 2^22: adding 1.5 * 2^23 leaves the rounded integer
// in the low mantissa bits (the FPU rounds to nearest even).
inline int nearest_int(float x) {
  const float shifted = x + 12582912.f;
  int32_t bits;
  std::memcpy(&bits, &shifted, sizeof bits);
  return (bits & 0x007FFFFF) - 0x00400000;
}

inline int clamp_int(int v, int lo, int hi) { return v < lo ? lo : (v > hi ? hi : v); }

void quant_q8_0(const float* x, BlockQ8_0* y, int64_t nb) {
  for (int64_t i = 0; i < nb; ++i, x += QK8_0) {
    float amax = 0.f;
    for (int j = 0; j < QK8_0; ++j) amax = std::max(amax, std::fabs(x[j]));
    const float d = amax / 127.f;
    const float id = d != 0.f ? 1.f / d : 0.f;
    y[i].d = fp32_to_fp16(d);
    for (int j = 0; j < QK8_0; ++j) y[i].qs[j] = static_cast<int8_t>(std::round(x[j] * id));
  }
}

// Fits x ≈ scale * L + min (min ≤ 0, L in 0..nmax) minimizing the weighted squared error:
// start from the min/max grid, then try nstep+1 slightly different grids, refit scale and min
// by weighted least squares on each, keep the best. Returns scale; *neg_min = -min.
float fit_scale_min(int n, int nmax, const float* x, const float* w, uint8_t* L, float* neg_min, uint8_t* Laux,
                    float rmin, float rdelta, int nstep) {
  float lo = x[0], hi = x[0];
  float sum_w = w[0], sum_x = w[0] * x[0];
  for (int i = 1; i < n; ++i) {
    lo = std::min(lo, x[i]);
    hi = std::max(hi, x[i]);
    sum_w += w[i];
    sum_x += w[i] * x[i];
  }
  if (lo > 0) lo = 0;
  if (hi == lo) {
    std::fill(L, L + n, uint8_t{0});
    *neg_min = -lo;
    return 0.f;
  }
  float iscale = static_cast<float>(nmax) / (hi - lo);
  float scale = 1.f / iscale;
  float best_error = 0.f;
  for (int i = 0; i < n; ++i) {
    const int l = clamp_int(nearest_int(iscale * (x[i] - lo)), 0, nmax);
    L[i] = static_cast<uint8_t>(l);
    const float diff = scale * static_cast<float>(l) + lo - x[i];
    best_error += w[i] * diff * diff;
  }
  for (int step = 0; step <= nstep; ++step) {
    iscale = (rmin + rdelta * static_cast<float>(step) + static_cast<float>(nmax)) / (hi - lo);
    float sum_l = 0.f, sum_l2 = 0.f, sum_xl = 0.f;
    for (int i = 0; i < n; ++i) {
      const int l = clamp_int(nearest_int(iscale * (x[i] - lo)), 0, nmax);
      Laux[i] = static_cast<uint8_t>(l);
      const float wl = w[i] * static_cast<float>(l);
      sum_l += wl;
      sum_l2 += wl * static_cast<float>(l);
      sum_xl += wl * x[i];
    }
    const float det = sum_w * sum_l2 - sum_l * sum_l;
    if (det <= 0.f) continue;
    float this_scale = (sum_w * sum_xl - sum_x * sum_l) / det;
    float this_min = (sum_l2 * sum_x - sum_l * sum_xl) / det;
    if (this_min > 0.f) {  // the model needs min ≤ 0: refit the scale alone
      this_min = 0.f;
      this_scale = sum_xl / sum_l2;
    }
    float err = 0.f;
    for (int i = 0; i < n; ++i) {
      const float diff = this_scale * static_cast<float>(Laux[i]) + this_min - x[i];
      err += w[i] * diff * diff;
    }
    if (err < best_error) {
      std::copy(Laux, Laux + n, L);
      best_error = err;
      scale = this_scale;
      lo = this_min;
    }
  }
  *neg_min = -lo;
  return scale;
}

void quant_q4_k(const float* x, BlockQ4_K* y, int64_t nb) {
  uint8_t L[QK_K];
  uint8_t Laux[32];
  float weights[32];
  float mins[QK_K / 32];
  float scales[QK_K / 32];
  for (int64_t i = 0; i < nb; ++i, x += QK_K) {
    float max_scale = 0.f, max_min = 0.f;
    for (int j = 0; j < QK_K / 32; ++j) {
      const float* xs = x + 32 * j;
      float sum_x2 = 0.f;
      for (int l = 0; l < 32; ++l) sum_x2 += xs[l] * xs[l];
      const float av_x = std::sqrt(sum_x2 / 32.f);
      // Weight large-magnitude elements more, as ggml's reference does without an imatrix.
      for (int l = 0; l < 32; ++l) weights[l] = av_x + std::fabs(xs[l]);
      scales[j] = fit_scale_min(32, 15, xs, weights, L + 32 * j, &mins[j], Laux, -1.f, 0.1f, 20);
      max_scale = std::max(max_scale, scales[j]);
      max_min = std::max(max_min, mins[j]);
    }
    const float inv_scale = max_scale > 0 ? 63.f / max_scale : 0.f;
    const float inv_min = max_min > 0 ? 63.f / max_min : 0.f;
    std::memset(y[i].scales, 0, sizeof y[i].scales);
    for (int j = 0; j < QK_K / 32; ++j) {
      const int ls = std::min(63, nearest_int(inv_scale * scales[j]));
      const int lm = std::min(63, nearest_int(inv_min * mins[j]));
      // Packing mirrors get_scale_min_k4.
      if (j < 4) {
        y[i].scales[j] = static_cast<uint8_t>(ls);
        y[i].scales[j + 4] = static_cast<uint8_t>(lm);
      } else {
        y[i].scales[j + 4] = static_cast<uint8_t>((ls & 0xF) | ((lm & 0xF) << 4));
        y[i].scales[j - 4] = static_cast<uint8_t>(y[i].scales[j - 4] | ((ls >> 4) << 6));
        y[i].scales[j] = static_cast<uint8_t>(y[i].scales[j] | ((lm >> 4) << 6));
      }
    }
    y[i].d = fp32_to_fp16(max_scale / 63.f);
    y[i].dmin = fp32_to_fp16(max_min / 63.f);
    // Requantize every element against the scales as they will be decoded.
    for (int j = 0; j < QK_K / 32; ++j) {
      uint8_t sc, m;
      get_scale_min_k4(j, y[i].scales, &sc, &m);
      const float d = fp16_to_fp32(y[i].d) * sc;
      if (d == 0.f) continue;
      const float dm = fp16_to_fp32(y[i].dmin) * m;
      for (int l = 0; l < 32; ++l) {
        L[32 * j + l] = static_cast<uint8_t>(clamp_int(nearest_int((x[32 * j + l] + dm) / d), 0, 15));
      }
    }
    uint8_t* q = y[i].qs;
    for (int j = 0; j < QK_K; j += 64, q += 32) {
      for (int l = 0; l < 32; ++l) q[l] = static_cast<uint8_t>(L[j + l] | (L[j + l + 32] << 4));
    }
  }
}

// Symmetric fit x ≈ scale * (L - nmax), L - nmax in [-nmax, nmax-1], weighted by x² (large
// elements matter most): try 19 grids around nmax/max and keep the best least-squares scale.
float fit_scale_symmetric(int n, int nmax, const float* x, int8_t* L) {
  float max = 0.f, amax = 0.f;
  for (int i = 0; i < n; ++i) {
    const float ax = std::fabs(x[i]);
    if (ax > amax) {
      amax = ax;
      max = x[i];
    }
  }
  if (amax < kGroupMaxEps) {
    std::fill(L, L + n, int8_t{0});
    return 0.f;
  }
  float iscale = -static_cast<float>(nmax) / max;
  float sum_lx = 0.f, sum_l2 = 0.f;
  for (int i = 0; i < n; ++i) {
    const int l = clamp_int(nearest_int(iscale * x[i]), -nmax, nmax - 1);
    L[i] = static_cast<int8_t>(l + nmax);
    const float w = x[i] * x[i];
    sum_lx += w * x[i] * static_cast<float>(l);
    sum_l2 += w * static_cast<float>(l * l);
  }
  float scale = sum_l2 != 0.f ? sum_lx / sum_l2 : 0.f;
  float best = scale * sum_lx;
  for (int step = -9; step <= 9; ++step) {
    if (step == 0) continue;
    iscale = -(static_cast<float>(nmax) + 0.1f * static_cast<float>(step)) / max;
    sum_lx = sum_l2 = 0.f;
    for (int i = 0; i < n; ++i) {
      const int l = clamp_int(nearest_int(iscale * x[i]), -nmax, nmax - 1);
      const float w = x[i] * x[i];
      sum_lx += w * x[i] * static_cast<float>(l);
      sum_l2 += w * static_cast<float>(l * l);
    }
    // Better fit ⇔ sum_lx² / sum_l2 larger (the error is sum w x² minus that).
    if (sum_l2 > 0.f && sum_lx * sum_lx > best * sum_l2) {
      for (int i = 0; i < n; ++i) {
        L[i] = static_cast<int8_t>(nmax + clamp_int(nearest_int(iscale * x[i]), -nmax, nmax - 1));
      }
      scale = sum_lx / sum_l2;
      best = scale * sum_lx;
    }
  }
  return scale;
}

void quant_q6_k(const float* x, BlockQ6_K* y, int64_t nb) {
  int8_t L[QK_K];
  float scales[QK_K / 16];
  for (int64_t i = 0; i < nb; ++i, x += QK_K) {
    float max_scale = 0.f, max_abs_scale = 0.f;
    for (int ib = 0; ib < QK_K / 16; ++ib) {
      scales[ib] = fit_scale_symmetric(16, 32, x + 16 * ib, L + 16 * ib);
      if (std::fabs(scales[ib]) > max_abs_scale) {
        max_abs_scale = std::fabs(scales[ib]);
        max_scale = scales[ib];
      }
    }
    if (max_abs_scale < kGroupMaxEps) {
      std::memset(&y[i], 0, sizeof y[i]);
      continue;
    }
    // The largest sub-block scale maps to -128, so its sign can be folded into d.
    const float iscale = -128.f / max_scale;
    y[i].d = fp32_to_fp16(1.f / iscale);
    for (int ib = 0; ib < QK_K / 16; ++ib) {
      y[i].scales[ib] = static_cast<int8_t>(std::min(127, nearest_int(iscale * scales[ib])));
    }
    for (int j = 0; j < QK_K / 16; ++j) {
      const float d = fp16_to_fp32(y[i].d) * static_cast<float>(y[i].scales[j]);
      if (d == 0.f) continue;
      for (int l = 0; l < 16; ++l) {
        L[16 * j + l] = static_cast<int8_t>(clamp_int(nearest_int(x[16 * j + l] / d), -32, 31) + 32);
      }
    }
    uint8_t* ql = y[i].ql;
    uint8_t* qh = y[i].qh;
    for (int j = 0; j < QK_K; j += 128, ql += 64, qh += 32) {
      for (int l = 0; l < 32; ++l) {
        const int q1 = L[j + l], q2 = L[j + l + 32], q3 = L[j + l + 64], q4 = L[j + l + 96];
        ql[l] = static_cast<uint8_t>((q1 & 0xF) | ((q3 & 0xF) << 4));
        ql[l + 32] = static_cast<uint8_t>((q2 & 0xF) | ((q4 & 0xF) << 4));
        qh[l] = static_cast<uint8_t>((q1 >> 4) | ((q2 >> 4) << 2) | ((q3 >> 4) << 4) | ((q4 >> 4) << 6));
      }
    }
  }
}

}  // namespace

void quantize_row(Type type, const float* src, void* dst, int64_t n) {
  const TypeTraits& tr = traits(type);
  if (!tr.can_quantize) fail("quantize: tensor type ", tr.name, " is not supported (no quantizer)");
  if (n < 0 || n % tr.block_size != 0) {
    fail("quantize: ", n, " elements is not a multiple of the ", tr.name, " block size ", tr.block_size);
  }
  const int64_t nb = n / tr.block_size;
  switch (type) {
    case Type::F32: std::memcpy(dst, src, static_cast<size_t>(n) * sizeof(float)); return;
    case Type::F16: {
      auto* y = static_cast<uint16_t*>(dst);
      for (int64_t i = 0; i < n; ++i) y[i] = fp32_to_fp16(src[i]);
      return;
    }
    case Type::BF16: {
      auto* y = static_cast<uint16_t*>(dst);
      for (int64_t i = 0; i < n; ++i) y[i] = fp32_to_bf16(src[i]);
      return;
    }
    case Type::Q8_0: return quant_q8_0(src, static_cast<BlockQ8_0*>(dst), nb);
    case Type::Q4_K: return quant_q4_k(src, static_cast<BlockQ4_K*>(dst), nb);
    case Type::Q6_K: return quant_q6_k(src, static_cast<BlockQ6_K*>(dst), nb);
    default: break;
  }
  fail("quantize: tensor type ", tr.name, " is not supported");
}

}  // namespace pfx::quant

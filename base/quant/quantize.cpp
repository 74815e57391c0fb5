// Reference quantizers following ggml's quantize_row_*_ref (no importance matrix) operation for
// operation, so the bytes match ggml's: q8_0 = absmax scaling; q4_K / q5_K = per-sub-block weighted
// least-squares scale+min search, then 6-bit quantization of the scales; q6_K = per-sub-block
// scale search, then 8-bit scales. Built with -ffp-contract=off (no FMA). Each block is
// independent, so rows can be quantized in parallel.
#include "quant/quantize.h"

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <vector>

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
  const int32_t bits = std::bit_cast<int32_t>(x + 12582912.f);
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

// ---- lanes ------------------------------------------------------------------------------
// The k-quant scale searches below run their float sums element by element, a long chain of
// dependent adds. Sub-blocks are independent, so all sub-blocks of a super-block are searched
// together, one SIMD lane each (GCC/Clang vector extensions, 4 x float = SSE2 baseline): every
// lane performs exactly the scalar sequence of IEEE operations, so results are bit-identical to
// the one-sub-block-at-a-time reference, just several times faster.
using f32x4 = float __attribute__((vector_size(16)));
using i32x4 = int32_t __attribute__((vector_size(16)));

inline i32x4 nearest_int(f32x4 x) {
  const i32x4 bits = std::bit_cast<i32x4>(x + 12582912.f);
  return (bits & 0x007FFFFF) - 0x00400000;
}
inline i32x4 clamp_int(i32x4 v, int lo, int hi) {
  const i32x4 lov = i32x4{} + lo, hiv = i32x4{} + hi;
  v = v < lov ? lov : v;
  return v > hiv ? hiv : v;
}
inline f32x4 to_float(i32x4 v) { return __builtin_convertvector(v, f32x4); }
inline f32x4 select(i32x4 mask, f32x4 a, f32x4 b) {
  return std::bit_cast<f32x4>((std::bit_cast<i32x4>(a) & mask) | (std::bit_cast<i32x4>(b) & ~mask));
}
inline f32x4 abs(f32x4 x) { return std::bit_cast<f32x4>(std::bit_cast<i32x4>(x) & 0x7FFFFFFF); }

// ---- q4_K, q5_K ---------------------------------------------------------------------------
// ggml's make_qkx2_quants(32, nmax, x, w, ..., rmin, rdelta 0.1, nstep): fit
// x ≈ scale * L + min (min ≤ 0, L in 0..nmax) minimizing the weighted squared error. Start from
// the min/max grid, then try nstep + 1 slightly wider grids (each relative to the best min so
// far), refit scale and min by weighted least squares on each, keep the best.
constexpr int kQ4kSub = QK_K / 32;    // sub-blocks per super-block = lanes
constexpr int kQ4kVec = kQ4kSub / 4;  // f32x4 vectors per element row
constexpr int kQ4kLen = 32;           // elements per sub-block
struct KFit {
  int nmax;  // top level: 15 (q4_K), 31 (q5_K)
  float rmin, rdelta;
  int steps;
};
// ggml's quantize_row_q4_K_ref / quantize_row_q5_K_ref arguments.
constexpr KFit kQ4kFit{15, -1.f, 0.1f, 20}, kQ5kFit{31, -0.5f, 0.1f, 15};

struct Q4kLanes {
  f32x4 x[kQ4kLen][kQ4kVec];  // [element][lane group]: lane j = sub-block j
  f32x4 w[kQ4kLen][kQ4kVec];
};

// GCC 12-13 at -O3 (the Release builds) reports lanes of the zero-initialized f32x4 arrays of the q4_K
// and q6_K fits below (iscale, scale_v) as maybe used uninitialized once inlined into quant_k4 /
// quant_q6_k: a false positive on vector-extension lane stores. Scoped to the fits and quantizers.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
void fit_scale_min_k(const Q4kLanes& in, const KFit& fit, uint8_t (&L)[kQ4kSub][kQ4kLen], float (&scale_out)[kQ4kSub],
                     float (&neg_min_out)[kQ4kSub]) {
  f32x4 lo[kQ4kVec], hi[kQ4kVec], sum_w[kQ4kVec], sum_x[kQ4kVec];
  for (int v = 0; v < kQ4kVec; ++v) {
    lo[v] = hi[v] = in.x[0][v];
    sum_w[v] = in.w[0][v];
    sum_x[v] = sum_w[v] * in.x[0][v];
  }
  for (int i = 1; i < kQ4kLen; ++i) {
    for (int v = 0; v < kQ4kVec; ++v) {
      lo[v] = select(in.x[i][v] < lo[v], in.x[i][v], lo[v]);
      hi[v] = select(in.x[i][v] > hi[v], in.x[i][v], hi[v]);
      sum_w[v] += in.w[i][v];
      sum_x[v] += in.w[i][v] * in.x[i][v];
    }
  }
  // Per-lane state, scalar where the reference branches.
  float lo_s[kQ4kSub], scale[kQ4kSub], best[kQ4kSub] = {};
  bool live[kQ4kSub];
  f32x4 iscale[kQ4kVec] = {}, scale_v[kQ4kVec] = {};
  for (int j = 0; j < kQ4kSub; ++j) {
    if (lo[j / 4][j % 4] > 0) lo[j / 4][j % 4] = 0;  // (clang binds no reference to a vector lane)
    const float l = lo[j / 4][j % 4];
    const float h = hi[j / 4][j % 4];
    live[j] = h != l;  // a constant non-negative sub-block quantizes to all zeros
    const float is = live[j] ? static_cast<float>(fit.nmax) / (h - l) : 0.f;
    iscale[j / 4][j % 4] = is;
    scale[j] = live[j] ? 1.f / is : 0.f;
    scale_v[j / 4][j % 4] = scale[j];
    lo_s[j] = l;
  }
  i32x4 Lv[kQ4kLen][kQ4kVec];
  f32x4 best_v[kQ4kVec] = {};
  for (int i = 0; i < kQ4kLen; ++i) {
    for (int v = 0; v < kQ4kVec; ++v) {
      const i32x4 l = clamp_int(nearest_int(iscale[v] * (in.x[i][v] - lo[v])), 0, fit.nmax);
      Lv[i][v] = l;
      const f32x4 diff = scale_v[v] * to_float(l) + lo[v] - in.x[i][v];
      best_v[v] += in.w[i][v] * (diff * diff);
    }
  }
  for (int j = 0; j < kQ4kSub; ++j) best[j] = best_v[j / 4][j % 4];
  i32x4 Laux[kQ4kLen][kQ4kVec];
  for (int step = 0; step <= fit.steps; ++step) {
    f32x4 sum_l[kQ4kVec] = {}, sum_l2[kQ4kVec] = {}, sum_xl[kQ4kVec] = {};
    for (int j = 0; j < kQ4kSub; ++j) {
      const float h = hi[j / 4][j % 4];
      iscale[j / 4][j % 4] =
          live[j] ? (fit.rmin + fit.rdelta * static_cast<float>(step) + static_cast<float>(fit.nmax)) / (h - lo_s[j]) : 0.f;
    }
    for (int i = 0; i < kQ4kLen; ++i) {
      for (int v = 0; v < kQ4kVec; ++v) {
        const i32x4 l = clamp_int(nearest_int(iscale[v] * (in.x[i][v] - lo[v])), 0, fit.nmax);
        Laux[i][v] = l;
        const f32x4 lf = to_float(l);
        const f32x4 wl = in.w[i][v] * lf;
        sum_l[v] += wl;
        sum_l2[v] += wl * lf;
        sum_xl[v] += wl * in.x[i][v];
      }
    }
    f32x4 this_scale[kQ4kVec] = {}, this_min[kQ4kVec] = {};
    bool fitted[kQ4kSub];
    for (int j = 0; j < kQ4kSub; ++j) {
      const int v = j / 4, k = j % 4;
      const float sw = sum_w[v][k], sx = sum_x[v][k], sl = sum_l[v][k], sl2 = sum_l2[v][k], sxl = sum_xl[v][k];
      const float det = sw * sl2 - sl * sl;
      fitted[j] = live[j] && det > 0;
      if (!fitted[j]) continue;
      float ts = (sw * sxl - sx * sl) / det;
      float tm = (sl2 * sx - sl * sxl) / det;
      if (tm > 0) {  // the model needs min ≤ 0: refit the scale alone
        tm = 0;
        ts = sxl / sl2;
      }
      this_scale[v][k] = ts;
      this_min[v][k] = tm;
    }
    f32x4 err[kQ4kVec] = {};
    for (int i = 0; i < kQ4kLen; ++i) {
      for (int v = 0; v < kQ4kVec; ++v) {
        const f32x4 diff = this_scale[v] * to_float(Laux[i][v]) + this_min[v] - in.x[i][v];
        err[v] += in.w[i][v] * (diff * diff);
      }
    }
    for (int j = 0; j < kQ4kSub; ++j) {
      const int v = j / 4, k = j % 4;
      if (!fitted[j] || !(err[v][k] < best[j])) continue;
      for (int i = 0; i < kQ4kLen; ++i) Lv[i][v][k] = Laux[i][v][k];
      best[j] = err[v][k];
      scale[j] = this_scale[v][k];
      lo_s[j] = this_min[v][k];
      lo[v][k] = this_min[v][k];
    }
  }
  for (int j = 0; j < kQ4kSub; ++j) {
    for (int i = 0; i < kQ4kLen; ++i) L[j][i] = live[j] ? static_cast<uint8_t>(Lv[i][j / 4][j % 4]) : 0;
    scale_out[j] = scale[j];
    neg_min_out[j] = -lo_s[j];
  }
}

// q4_K and q5_K (Block: BlockQ4_K / BlockQ5_K, told apart by q5_K's qh): the same fit, scale
// packing and requantization, at 4 or 5 bits.
template <class Block>
void quant_k4(const float* x, Block* y, int64_t nb) {
  constexpr bool kFifthBit = requires(const Block& b) { b.qh; };
  constexpr KFit fit = kFifthBit ? kQ5kFit : kQ4kFit;
  Q4kLanes lanes;
  uint8_t Lt[kQ4kSub][kQ4kLen];
  float scales[kQ4kSub], mins[kQ4kSub];
  for (int64_t i = 0; i < nb; ++i, x += QK_K) {
    for (int j = 0; j < kQ4kSub; ++j) {
      const float* xs = x + kQ4kLen * j;
      float sum_x2 = 0.f;
      for (int l = 0; l < kQ4kLen; ++l) sum_x2 += xs[l] * xs[l];
      const float av_x = std::sqrt(sum_x2 / 32.f);
      // Weight large-magnitude elements more, as ggml's reference does without an imatrix.
      for (int l = 0; l < kQ4kLen; ++l) {
        lanes.x[l][j / 4][j % 4] = xs[l];
        lanes.w[l][j / 4][j % 4] = av_x + std::fabs(xs[l]);
      }
    }
    fit_scale_min_k(lanes, fit, Lt, scales, mins);
    float max_scale = 0.f, max_min = 0.f;
    for (int j = 0; j < kQ4kSub; ++j) {
      if (scales[j] > max_scale) max_scale = scales[j];
      if (mins[j] > max_min) max_min = mins[j];
    }
    const float inv_scale = max_scale > 0 ? 63.f / max_scale : 0.f;
    const float inv_min = max_min > 0 ? 63.f / max_min : 0.f;
    std::memset(y[i].scales, 0, sizeof y[i].scales);
    for (int j = 0; j < kQ4kSub; ++j) {
      // ggml stores nearest_int in a uint8_t before clamping to 63; keep that wrap-around.
      const uint8_t ls = std::min<uint8_t>(63, static_cast<uint8_t>(nearest_int(inv_scale * scales[j])));
      const uint8_t lm = std::min<uint8_t>(63, static_cast<uint8_t>(nearest_int(inv_min * mins[j])));
      // Packing mirrors get_scale_min_k4.
      if (j < 4) {
        y[i].scales[j] = ls;
        y[i].scales[j + 4] = lm;
      } else {
        y[i].scales[j + 4] = static_cast<uint8_t>((ls & 0xF) | ((lm & 0xF) << 4));
        y[i].scales[j - 4] = static_cast<uint8_t>(y[i].scales[j - 4] | ((ls >> 4) << 6));
        y[i].scales[j] = static_cast<uint8_t>(y[i].scales[j] | ((lm >> 4) << 6));
      }
    }
    y[i].d = fp32_to_fp16(max_scale / 63.f);
    y[i].dmin = fp32_to_fp16(max_min / 63.f);
    // Requantize every element against the scales as they will be decoded (sub-blocks whose
    // decoded scale is 0 keep the levels of the fit, as in ggml).
    uint8_t L[QK_K];
    for (int j = 0; j < kQ4kSub; ++j) {
      for (int l = 0; l < kQ4kLen; ++l) L[kQ4kLen * j + l] = Lt[j][l];
      uint8_t sc, m;
      get_scale_min_k4(j, y[i].scales, &sc, &m);
      const float d = fp16_to_fp32(y[i].d) * sc;
      if (d == 0.f) continue;
      const float dm = fp16_to_fp32(y[i].dmin) * m;
      for (int l = 0; l < kQ4kLen; ++l) {
        L[kQ4kLen * j + l] = static_cast<uint8_t>(clamp_int(nearest_int((x[kQ4kLen * j + l] + dm) / d), 0, fit.nmax));
      }
    }
    // Low nibbles of chunk c (64 elements) in qs[32c ..]: element l low, l + 32 high; q5_K's fifth
    // bits in qh[l], bit 2c (element l) and 2c + 1 (l + 32).
    uint8_t* q = y[i].qs;
    if constexpr (kFifthBit) std::memset(y[i].qh, 0, sizeof y[i].qh);
    for (int j = 0, c = 0; j < QK_K; j += 64, q += 32, ++c) {
      for (int l = 0; l < 32; ++l) {
        q[l] = static_cast<uint8_t>((L[j + l] & 15) | ((L[j + l + 32] & 15) << 4));
        if constexpr (kFifthBit)
          y[i].qh[l] = static_cast<uint8_t>(y[i].qh[l] | ((L[j + l] >> 4) << (2 * c)) | ((L[j + l + 32] >> 4) << (2 * c + 1)));
      }
    }
  }
}

// ---- q6_K -------------------------------------------------------------------------------
// ggml's make_qx_quants(16, 32, x, L, rmse_type 1): symmetric fit x ≈ scale * (L - 32) with
// weights x² (large elements matter most); try 18 grids around 32/max, keep the best
// least-squares scale. All 16 sub-blocks of a super-block at once, one lane each (see above).
constexpr int kQ6kSub = QK_K / 16;
constexpr int kQ6kVec = kQ6kSub / 4;
constexpr int kQ6kLen = 16;
constexpr int kQ6kMax = 32;

void fit_scale_q6k(const f32x4 (&x)[kQ6kLen][kQ6kVec], int8_t (&L)[kQ6kSub][kQ6kLen], float (&scale_out)[kQ6kSub]) {
  f32x4 max[kQ6kVec] = {}, amax[kQ6kVec] = {};
  for (int i = 0; i < kQ6kLen; ++i) {
    for (int v = 0; v < kQ6kVec; ++v) {
      const f32x4 ax = abs(x[i][v]);
      const i32x4 bigger = ax > amax[v];
      amax[v] = select(bigger, ax, amax[v]);
      max[v] = select(bigger, x[i][v], max[v]);
    }
  }
  bool live[kQ6kSub];
  float scale[kQ6kSub], best[kQ6kSub];
  f32x4 iscale[kQ6kVec] = {}, sum_lx[kQ6kVec] = {}, sum_l2[kQ6kVec] = {}, w[kQ6kLen][kQ6kVec];
  for (int j = 0; j < kQ6kSub; ++j) {
    live[j] = !(amax[j / 4][j % 4] < kGroupMaxEps);
    iscale[j / 4][j % 4] = live[j] ? -static_cast<float>(kQ6kMax) / max[j / 4][j % 4] : 0.f;
  }
  i32x4 Lv[kQ6kLen][kQ6kVec];
  for (int i = 0; i < kQ6kLen; ++i) {
    for (int v = 0; v < kQ6kVec; ++v) {
      const i32x4 l = clamp_int(nearest_int(iscale[v] * x[i][v]), -kQ6kMax, kQ6kMax - 1);
      Lv[i][v] = l + kQ6kMax;
      const f32x4 lf = to_float(l);
      w[i][v] = x[i][v] * x[i][v];
      sum_lx[v] += w[i][v] * x[i][v] * lf;
      sum_l2[v] += w[i][v] * lf * lf;
    }
  }
  for (int j = 0; j < kQ6kSub; ++j) {
    const float slx = sum_lx[j / 4][j % 4], sl2 = sum_l2[j / 4][j % 4];
    scale[j] = sl2 != 0.f ? slx / sl2 : 0.f;
    best[j] = scale[j] * slx;
  }
  i32x4 Laux[kQ6kLen][kQ6kVec];
  for (int step = -9; step <= 9; ++step) {
    if (step == 0) continue;
    for (int j = 0; j < kQ6kSub; ++j) {
      iscale[j / 4][j % 4] =
          live[j] ? -(static_cast<float>(kQ6kMax) + 0.1f * static_cast<float>(step)) / max[j / 4][j % 4] : 0.f;
    }
    for (int v = 0; v < kQ6kVec; ++v) sum_lx[v] = sum_l2[v] = f32x4{};
    for (int i = 0; i < kQ6kLen; ++i) {
      for (int v = 0; v < kQ6kVec; ++v) {
        const i32x4 l = clamp_int(nearest_int(iscale[v] * x[i][v]), -kQ6kMax, kQ6kMax - 1);
        Laux[i][v] = l + kQ6kMax;
        const f32x4 lf = to_float(l);
        sum_lx[v] += w[i][v] * x[i][v] * lf;
        sum_l2[v] += w[i][v] * lf * lf;
      }
    }
    for (int j = 0; j < kQ6kSub; ++j) {
      const int v = j / 4, k = j % 4;
      const float slx = sum_lx[v][k], sl2 = sum_l2[v][k];
      // Better fit ⇔ slx² / sl2 larger (the error is sum w x² minus that).
      if (!live[j] || !(sl2 > 0 && slx * slx > best[j] * sl2)) continue;
      for (int i = 0; i < kQ6kLen; ++i) Lv[i][v][k] = Laux[i][v][k];
      scale[j] = slx / sl2;
      best[j] = scale[j] * slx;
    }
  }
  for (int j = 0; j < kQ6kSub; ++j) {
    for (int i = 0; i < kQ6kLen; ++i) L[j][i] = live[j] ? static_cast<int8_t>(Lv[i][j / 4][j % 4]) : 0;
    scale_out[j] = live[j] ? scale[j] : 0.f;
  }
}

void quant_q6_k(const float* x, BlockQ6_K* y, int64_t nb) {
  f32x4 xt[kQ6kLen][kQ6kVec];
  int8_t Lt[kQ6kSub][kQ6kLen];
  float scales[kQ6kSub];
  for (int64_t i = 0; i < nb; ++i, x += QK_K) {
    for (int j = 0; j < kQ6kSub; ++j) {
      for (int l = 0; l < kQ6kLen; ++l) xt[l][j / 4][j % 4] = x[kQ6kLen * j + l];
    }
    fit_scale_q6k(xt, Lt, scales);
    float max_scale = 0.f, max_abs_scale = 0.f;
    for (int ib = 0; ib < kQ6kSub; ++ib) {
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
    for (int ib = 0; ib < kQ6kSub; ++ib) {
      y[i].scales[ib] = static_cast<int8_t>(std::min(127, nearest_int(iscale * scales[ib])));
    }
    int8_t L[QK_K];
    for (int j = 0; j < kQ6kSub; ++j) {
      for (int l = 0; l < kQ6kLen; ++l) L[kQ6kLen * j + l] = Lt[j][l];
      const float d = fp16_to_fp32(y[i].d) * static_cast<float>(y[i].scales[j]);
      if (d == 0.f) continue;
      for (int l = 0; l < kQ6kLen; ++l) {
        L[kQ6kLen * j + l] = static_cast<int8_t>(clamp_int(nearest_int(x[kQ6kLen * j + l] / d), -32, 31) + 32);
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

#pragma GCC diagnostic pop
}  // namespace

void quantize_row(Type type, const float* src, void* dst, int64_t n) {
  const TypeTraits& tr = traits(type);
  if (!tr.can_quantize) fail("quantize: tensor type ", tr.name, " is not supported (no quantizer)");
  if (n < 0 || n % tr.block_size != 0) {
    fail("quantize: ", n, " elements is not a multiple of the ", tr.name, " block size ", tr.block_size);
  }
  // Blocks are stored through typed pointers: a destination not aligned for them is written via
  // an aligned buffer (see dequantize_row).
  if (reinterpret_cast<uintptr_t>(dst) % static_cast<uintptr_t>(element_alignment(type)) != 0) {
    const size_t bytes = static_cast<size_t>(row_bytes(type, n));
    std::vector<uint64_t> aligned((bytes + 7) / 8);
    quantize_row(type, src, aligned.data(), n);
    std::memcpy(dst, aligned.data(), bytes);
    return;
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
    case Type::Q4_K: return quant_k4(src, static_cast<BlockQ4_K*>(dst), nb);
    case Type::Q5_K: return quant_k4(src, static_cast<BlockQ5_K*>(dst), nb);
    case Type::Q6_K: return quant_q6_k(src, static_cast<BlockQ6_K*>(dst), nb);
    default: break;
  }
  fail("quantize: tensor type ", tr.name, " is not supported");
}

}  // namespace pfx::quant

// Logit comparison metrics (see compare.h).
#include "metrics/compare.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "util/error.h"

namespace pfx {

int32_t argmax(const float* v, int64_t n) {
  int32_t best = n > 0 ? 0 : -1;
  for (int64_t i = 1; i < n; ++i)
    if (v[i] > v[best] || (std::isnan(v[best]) && !std::isnan(v[i]))) best = static_cast<int32_t>(i);
  return best;
}

NonFinite find_non_finite(const float* v, int64_t rows, int64_t cols) {
  NonFinite nf;
  for (int64_t i = 0; i < rows * cols; ++i)
    if (!std::isfinite(v[i])) {
      if (nf.count == 0) {
        nf.first_row = i / cols;
        nf.first_col = i % cols;
      }
      ++nf.count;
    }
  return nf;
}

LogitStats compare_logits(const float* a, const float* ref, int64_t rows, int64_t cols) {
  if (rows <= 0 || cols <= 0) fail("compare_logits: empty logits (", rows, " x ", cols, ")");
  LogitStats s;
  double sq_diff = 0, sq_ref = 0;
  int64_t agree = 0;
  for (int64_t r = 0; r < rows; ++r) {
    const float* ar = a + r * cols;
    const float* rr = ref + r * cols;
    for (int64_t c = 0; c < cols; ++c) {
      if (!std::isfinite(ar[c]) || !std::isfinite(rr[c])) {
        s.has_nan = true;
        continue;
      }
      const double d = static_cast<double>(ar[c]) - static_cast<double>(rr[c]);
      s.max_abs_diff = std::max(s.max_abs_diff, std::abs(d));
      s.max_abs_ref = std::max(s.max_abs_ref, std::abs(static_cast<double>(rr[c])));
      sq_diff += d * d;
      sq_ref += static_cast<double>(rr[c]) * rr[c];
    }
    if (argmax(ar, cols) == argmax(rr, cols)) ++agree;
  }
  s.rel = s.max_abs_ref > 0 ? s.max_abs_diff / s.max_abs_ref : s.max_abs_diff;
  s.nmse = sq_ref > 0 ? sq_diff / sq_ref : sq_diff;
  s.top1_agreement = static_cast<double>(agree) / static_cast<double>(rows);
  return s;
}

std::string format_stats(const LogitStats& s, int64_t rows) {
  char buf[256];
  std::snprintf(buf, sizeof buf, "max|d|/max|ref| %.3e (max|d| %.3e, max|ref| %.4g) NMSE %.3e top-1 %.1f%% (%lld/%lld rows)%s",
                s.rel, s.max_abs_diff, s.max_abs_ref, s.nmse, 100.0 * s.top1_agreement,
                static_cast<long long>(std::llround(s.top1_agreement * static_cast<double>(rows))),
                static_cast<long long>(rows), s.has_nan ? " NaN/inf PRESENT" : "");
  return buf;
}

int64_t first_divergence(std::span<const int32_t> a, std::span<const int32_t> b) {
  const size_t n = std::min(a.size(), b.size());
  for (size_t i = 0; i < n; ++i)
    if (a[i] != b[i]) return static_cast<int64_t>(i);
  return a.size() == b.size() ? -1 : static_cast<int64_t>(n);
}

}  // namespace pfx

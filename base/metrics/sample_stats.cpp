// Order statistics of samples (see sample_stats.h).
#include "metrics/sample_stats.h"

#include <algorithm>
#include <cmath>
#include <numeric>

namespace pfx {

double median(std::vector<double> v) { return percentile(std::move(v), 0.5); }

double percentile(std::vector<double> v, double p) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  const double pos = p * double(v.size() - 1);
  const size_t i = static_cast<size_t>(std::floor(pos));
  const double frac = pos - double(i);
  if (i + 1 >= v.size()) return v.back();
  return v[i] * (1 - frac) + v[i + 1] * frac;
}

double mean(const std::vector<double>& v) {
  return v.empty() ? 0 : std::accumulate(v.begin(), v.end(), 0.0) / double(v.size());
}

double stddev(const std::vector<double>& v) {
  if (v.size() < 2) return 0;
  const double m = mean(v);
  double s = 0;
  for (double x : v) s += (x - m) * (x - m);
  return std::sqrt(s / double(v.size() - 1));
}

double spread_pct(const std::vector<double>& v, double mid) {
  if (mid <= 0 || v.empty()) return 0.0;
  const auto [lo, hi] = std::minmax_element(v.begin(), v.end());
  return (*hi - *lo) / mid * 100.0;
}

}  // namespace pfx

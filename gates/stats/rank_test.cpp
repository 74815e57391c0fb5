// Mann-Whitney U (see rank_test.h). Exact null distribution by the counting recurrence
// N(m, n, u) = N(m-1, n, u-n) + N(m, n-1, u) (the largest of the m+n values is either an a, beating
// all n b's, or a b, beating none); the normal approximation uses the tie-corrected variance
// m·n/12 · ((N+1) − Σ(t³−t)/(N(N−1))).
#include "stats/rank_test.h"

#include <algorithm>
#include <cmath>
#include <numeric>

namespace pfx::gates {

namespace {

// Counts of U = 0..m·n over all arrangements, for sizes m, n (as doubles: C(m+n, m) overflows fast).
std::vector<double> exact_u_counts(int m, int n) {
  // table[i][j] is the distribution for sizes (i, j); built up row by row.
  std::vector<std::vector<std::vector<double>>> table(static_cast<size_t>(m + 1),
                                                      std::vector<std::vector<double>>(static_cast<size_t>(n + 1)));
  for (int i = 0; i <= m; ++i)
    for (int j = 0; j <= n; ++j) {
      auto& d = table[static_cast<size_t>(i)][static_cast<size_t>(j)];
      d.assign(static_cast<size_t>(i * j + 1), 0.0);
      if (i == 0 || j == 0) {
        d[0] = 1.0;
        continue;
      }
      const auto& with_a_last = table[static_cast<size_t>(i - 1)][static_cast<size_t>(j)];
      const auto& with_b_last = table[static_cast<size_t>(i)][static_cast<size_t>(j - 1)];
      for (size_t u = 0; u < d.size(); ++u) {
        if (u >= static_cast<size_t>(j) && u - static_cast<size_t>(j) < with_a_last.size()) d[u] += with_a_last[u - static_cast<size_t>(j)];
        if (u < with_b_last.size()) d[u] += with_b_last[u];
      }
    }
  return table[static_cast<size_t>(m)][static_cast<size_t>(n)];
}

double normal_upper_tail(double z) { return 0.5 * std::erfc(z / std::sqrt(2.0)); }

}  // namespace

UTestResult mann_whitney_u(const std::vector<double>& a, const std::vector<double>& b) {
  UTestResult r;
  const size_t m = a.size(), n = b.size();
  if (m == 0 || n == 0) return r;
  // Ranks of the pooled sample (average ranks for ties) and the tie groups.
  std::vector<std::pair<double, int>> pooled;
  for (double x : a) pooled.push_back({x, 0});
  for (double x : b) pooled.push_back({x, 1});
  std::sort(pooled.begin(), pooled.end(), [](const auto& x, const auto& y) { return x.first < y.first; });
  const size_t total = pooled.size();
  double rank_sum_a = 0, tie_term = 0;
  bool ties = false;
  for (size_t i = 0; i < total;) {
    size_t k = i;
    while (k < total && pooled[k].first == pooled[i].first) ++k;
    const double t = static_cast<double>(k - i);
    const double avg_rank = (static_cast<double>(i + 1) + static_cast<double>(k)) / 2.0;
    for (size_t q = i; q < k; ++q)
      if (pooled[q].second == 0) rank_sum_a += avg_rank;
    if (k - i > 1) {
      ties = true;
      tie_term += t * t * t - t;
    }
    i = k;
  }
  const double md = static_cast<double>(m), nd = static_cast<double>(n);
  r.u = rank_sum_a - md * (md + 1) / 2.0;
  const double mean_u = md * nd / 2.0;
  if (!ties && m * n <= 400) {
    const auto counts = exact_u_counts(static_cast<int>(m), static_cast<int>(n));
    const double all = std::accumulate(counts.begin(), counts.end(), 0.0);
    const auto u = static_cast<size_t>(std::llround(r.u));
    double lower = 0, upper = 0;
    for (size_t k = 0; k < counts.size(); ++k) {
      if (k <= u) lower += counts[k];
      if (k >= u) upper += counts[k];
    }
    r.p_two_sided = std::min(1.0, 2.0 * std::min(lower, upper) / all);
    r.exact = true;
    return r;
  }
  const double big_n = md + nd;
  const double var = md * nd / 12.0 * ((big_n + 1.0) - tie_term / (big_n * (big_n - 1.0)));
  if (var <= 0) return r;  // every value equal: no evidence either way
  const double z = std::max(0.0, std::fabs(r.u - mean_u) - 0.5) / std::sqrt(var);
  r.p_two_sided = std::min(1.0, 2.0 * normal_upper_tail(z));
  return r;
}

}  // namespace pfx::gates

// Windowed U-test change points (see change_points.h).
#include "stats/change_points.h"

#include <algorithm>

#include "stats/rank_test.h"

namespace pfx::gates {

namespace {

double median_of(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

}  // namespace

std::vector<ChangePoint> change_points(const std::vector<std::vector<double>>& per_commit, size_t window, double alpha) {
  const size_t n = per_commit.size();
  std::vector<ChangePoint> candidates;
  for (size_t i = 1; i < n; ++i) {
    std::vector<double> before, after;
    for (size_t k = i >= window ? i - window : 0; k < i; ++k) before.insert(before.end(), per_commit[k].begin(), per_commit[k].end());
    for (size_t k = i; k < std::min(n, i + window); ++k) after.insert(after.end(), per_commit[k].begin(), per_commit[k].end());
    if (before.empty() || after.empty()) continue;
    ChangePoint c;
    c.index = i;
    c.p = mann_whitney_u(before, after).p_two_sided;
    c.before = median_of(before);
    c.after = median_of(after);
    candidates.push_back(c);
  }
  std::vector<ChangePoint> out;
  for (const auto& c : candidates) {
    if (c.p >= alpha) continue;
    bool smallest = true;
    for (const auto& o : candidates) {
      const size_t d = o.index > c.index ? o.index - c.index : c.index - o.index;
      if (d > 0 && d <= window && (o.p < c.p || (o.p == c.p && o.index < c.index))) smallest = false;
    }
    if (smallest) out.push_back(c);
  }
  return out;
}

}  // namespace pfx::gates

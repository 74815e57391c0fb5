// Statistics for the A/B gate (see stats.h).
#include "stats/stats.h"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <random>

namespace pfx::gates {

Interval bootstrap_median_ci(const std::vector<double>& v, double confidence, int resamples, uint64_t seed) {
  if (v.empty()) return {};
  std::mt19937_64 rng(seed);
  std::uniform_int_distribution<size_t> pick(0, v.size() - 1);
  std::vector<double> meds;
  meds.reserve(static_cast<size_t>(resamples));
  std::vector<double> s(v.size());
  for (int r = 0; r < resamples; ++r) {
    for (auto& x : s) x = v[pick(rng)];
    meds.push_back(median(s));
  }
  const double a = (1 - confidence) / 2;
  return {percentile(meds, a), percentile(meds, 1 - a)};
}

Interval bootstrap_median_change_pct(const std::vector<double>& a, const std::vector<double>& b, double level, int resamples,
                                     uint64_t seed) {
  if (a.empty() || b.empty()) return {};
  std::mt19937_64 rng(seed);
  std::uniform_int_distribution<size_t> pa(0, a.size() - 1), pb(0, b.size() - 1);
  std::vector<double> ra(a.size()), rb(b.size()), changes;
  changes.reserve(static_cast<size_t>(resamples));
  for (int r = 0; r < resamples; ++r) {
    for (auto& x : ra) x = a[pa(rng)];
    for (auto& x : rb) x = b[pb(rng)];
    const double ma = median(ra);
    if (ma > 0) changes.push_back((median(rb) / ma - 1) * 100);
  }
  if (changes.empty()) return {};
  const double tail = (1 - level) / 2;
  return {percentile(changes, tail), percentile(changes, 1 - tail)};
}

std::string to_string(AbDecision d) {
  switch (d) {
    case AbDecision::Improved: return "improved";
    case AbDecision::NoChange: return "no change";
    case AbDecision::Regressed: return "regressed";
    case AbDecision::Undecided: return "undecided";
  }
  return "?";
}

AbAnalysis analyse_pairs(const std::vector<double>& ratios, double threshold_pct, double confidence) {
  AbAnalysis a;
  a.pairs = static_cast<int>(ratios.size());
  if (ratios.empty()) return a;
  std::vector<double> pct;
  for (double r : ratios) {
    pct.push_back((r - 1.0) * 100.0);
    if (r > 1.0) ++a.wins;
  }
  a.median_delta_pct = median(pct);
  a.ci_pct = bootstrap_median_ci(pct, confidence);
  if (a.ci_pct.lo > 0) a.decision = AbDecision::Improved;
  else if (a.ci_pct.lo > -threshold_pct) a.decision = AbDecision::NoChange;
  else if (a.median_delta_pct < -threshold_pct && a.ci_pct.hi < 0) a.decision = AbDecision::Regressed;
  else a.decision = AbDecision::Undecided;
  return a;
}

}  // namespace pfx::gates

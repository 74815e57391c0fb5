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

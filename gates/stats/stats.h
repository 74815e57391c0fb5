// Small statistics for the A/B gate: median and percentiles (from base/metrics), a seeded bootstrap confidence interval
// of the median, and the decision rule that turns paired ratios into PASS / FAIL / more pairs.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "metrics/sample_stats.h"

namespace pfx::gates {

using pfx::mean;
using pfx::median;
using pfx::percentile;
using pfx::stddev;

struct Interval {
  double lo = 0, hi = 0;
};
// Percentile bootstrap CI of the median of `v` (resamples with replacement, fixed seed so a
// report is reproducible from its samples).
Interval bootstrap_median_ci(const std::vector<double>& v, double confidence = 0.95, int resamples = 4000,
                             uint64_t seed = 0x5eed);

// Percentile bootstrap interval of 100 · (median(b) / median(a) − 1), each side resampled with
// replacement (fixed seed: a report is reproducible from its samples). `level` e.g. 0.95. The
// timing gate judges role budgets on it.
Interval bootstrap_median_change_pct(const std::vector<double>& a, const std::vector<double>& b, double level,
                                     int resamples = 4000, uint64_t seed = 0x7157);

enum class AbDecision { Improved, NoChange, Regressed, Undecided };
std::string to_string(AbDecision d);

// ratios: candidate/baseline tok/s per pair. threshold_pct: the largest regression that counts as
// "no change" (already widened by the A/A noise floor). Rules:
//   CI of median Δ% above 0               → Improved
//   CI entirely within (−threshold, +∞)    → NoChange  (any regression is smaller than the threshold)
//   median Δ% < −threshold and CI below 0  → Regressed
//   otherwise                              → Undecided (take more pairs)
struct AbAnalysis {
  double median_delta_pct = 0;
  Interval ci_pct;
  int wins = 0, pairs = 0;
  AbDecision decision = AbDecision::Undecided;
};
AbAnalysis analyse_pairs(const std::vector<double>& ratios, double threshold_pct, double confidence = 0.95);

}  // namespace pfx::gates

// The Mann-Whitney U test (Wilcoxon rank-sum): do two samples come from the same distribution, or
// is one stochastically larger? Distribution-free, so it suits tok/s samples (skewed by the
// occasional slow repetition). Used by `landing compare` (are two benches different?) and by the
// ledger's change-point detection (does a metric shift between two windows of landings?).
#pragma once
#include <vector>

namespace pfx::gates {

struct UTestResult {
  double u = 0;          // U of sample a: pairs (a_i, b_j) with a_i > b_j, ties counted 1/2
  double p_two_sided = 1;  // probability of a |U - mn/2| at least this large if both come from one distribution
  bool exact = false;    // exact null distribution (small samples, no ties) vs normal approximation
};

// Empty samples give p = 1 (no evidence). Exact when neither sample has ties and m·n ≤ 400 (e.g. 20 × 20);
// otherwise the normal approximation with tie correction and continuity correction.
UTestResult mann_whitney_u(const std::vector<double>& a, const std::vector<double>& b);

}  // namespace pfx::gates

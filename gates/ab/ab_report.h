// The A/B gate's figures, typed: the whole-prefill throughput of both builds (the report's headline
// row, with the A/A noise floor and the confidence interval) and every sample in run order (the
// "ab" table, drawn as points).
#pragma once
#include <array>
#include <optional>
#include <string>
#include <vector>

#include "core/gate_result.h"

namespace pfx::gates {

struct AbFigures {
  std::string metric;          // "pp512 tok/s"
  double baseline_tps = 0;     // medians over the pairs run
  double candidate_tps = 0;
  std::optional<double> noise_pct;              // A/A noise floor
  std::optional<std::array<double, 2>> ci_pct;  // of the per-pair median Δ%
  // The gate's Δ: the paired median of per-pair ratios (ab/ab_judge.h), the one Δ the headline
  // shows; empty only for a version-1 record, whose headline showed the ratio of the medians.
  std::optional<double> delta_pct;
  std::optional<double> clock_normalised_delta_pct;  // the same Δ with each run's tok/s per MHz
  struct Metric {  // gates.ab.extra_metrics (pp2048, tg128): one row each, judged by check `check`
    std::string metric, check;
    double baseline_tps = 0, candidate_tps = 0;
    std::optional<double> delta_pct;
    std::optional<std::array<double, 2>> ci_pct;
  };
  std::vector<Metric> extra;
  struct Pair {
    double baseline_tps = 0, candidate_tps = 0;
    bool throttled = false;  // set aside
  };
  std::vector<Pair> pairs;                    // ABAB… in run order
  std::vector<std::array<double, 2>> aa;      // A/A: baseline, baseline again
};

// The headline row (named after the "ab" check) and the samples table.
void add_ab_output(GateResult& r, const AbFigures& f);

// landing-gate-result/1 reader: the figures from details.headline, .pairs and .aa.
void read_legacy_ab_output(GateResult& r);

}  // namespace pfx::gates

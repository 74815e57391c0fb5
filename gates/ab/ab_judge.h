// The A/B gate's judgement, from its stored pairs alone (so `landing import` can redo it). One Δ
// definition everywhere — the headline, the ledger and the gate: the paired median of the
// per-pair ratios candidate/baseline, as a percentage. The budget is the budget: the gate takes
// more pairs (up to max_pairs) while undecided, never a wider threshold; still undecided at the
// cap is INCONCLUSIVE. Beside the raw Δ stands the clock-normalised Δ (each run's tok/s divided
// by its mean SM clock), so a reviewer can tell code from clocks.
// Pairs (GateResult::details["pairs"]): [{baseline: {tps: {METRIC: v}, sm_clock_mhz: {min, max}},
// candidate: {…}, throttled: bool}]; METRIC is "pp512", "pp2048", "tg128", …
#pragma once
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "core/gate_profile.h"
#include "core/gate_result.h"
#include "stats/stats.h"

namespace pfx::gates {

struct AbSettings {
  std::string primary = "pp512";          // pp<prompt_tokens>: the headline metric
  std::vector<std::string> metrics;       // primary first, then gates.ab.extra_metrics
  double max_regression_pct = 2.0;
  double confidence = 0.95;
  int max_pairs = 24;
};
AbSettings ab_settings(const GateProfile& profile);

struct AbMetric {
  std::string metric;
  AbAnalysis raw;               // over unthrottled pairs
  double clock_norm_delta_pct = 0;
  bool clock_norm_known = false;
  double baseline_median = 0, candidate_median = 0;  // tok/s medians of each side (for display)
  int throttled = 0;
};
// One metric's analysis of the pairs; ratios are recomputed from the tok/s values.
AbMetric analyse_ab_metric(const nlohmann::json& pairs, const std::string& metric, const AbSettings& s);
// True while the metric's evidence does not decide (the gate then takes more pairs).
bool ab_undecided(const AbMetric& m);

// The checks of the gate ("ab" for the primary metric, "ab <metric>" for the others) and the
// headline, from details["pairs"] and `pairs_run` (how many pairs were taken).
std::vector<Check> judge_ab(const nlohmann::json& pairs, const AbSettings& s, nlohmann::json& headline);

// The gate's typed figures (ab/ab_report.h) from details (pairs, aa): the headline row with the
// paired median Δ, the clock-normalised Δ, one row per extra metric, the samples table.
void add_ab_figures(GateResult& r, const AbSettings& s);

// Re-judges a whole A/B result from its stored pairs under `profile` (checks, figures).
void rejudge_ab(GateResult& r, const GateProfile& profile);

}  // namespace pfx::gates

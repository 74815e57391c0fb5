// The timing gate's judgement, from the per-repetition samples it stores (so `landing import`
// can redo it). Per kernel and per role: the median ns of each side, Δ%, a two-sided Mann-Whitney
// U p-value over the repetitions (≥ 5 per side) and a verdict at the profile's α (gates.timing.alpha,
// default 0.05): SLOWER / FASTER where p < α, SAME otherwise; "unchanged code" where the kernel's
// SASS hash (kernel-sass.json beside kernel-resources.json) is equal in both builds — never a
// mover, never a budget failure (a role is unchanged code when all its kernels are). Top movers
// are ranked by significance; with none the headline is "no significant change". A role budget
// (max_regression_pct) is judged on the bootstrap interval of its Δ% at 1 − α: FAIL when even the
// interval's low end exceeds the budget, PASS when its high end is within it, INCONCLUSIVE between.
// Evidence (details.models[]): {model, reps, prompt_tokens, kernels: [row], roles: [row], sass},
// row: {key, status: changed|added|removed, baseline_samples_ns, candidate_samples_ns,
// sass: unchanged|changed|unavailable, kernels (roles only)}.
#pragma once
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "core/gate_profile.h"
#include "core/gate_result.h"
#include "core/ran_as_asked.h"

namespace pfx::gates {

struct TimingSettings {
  double alpha = 0.05;
  nlohmann::json role_budgets = nlohmann::json::array();  // [{role: glob, max_regression_pct}]
};
TimingSettings timing_settings(const GateProfile& profile);

// What every traced `prefill bench` asks of either build: gates.timing.path on CUDA (bench's
// default backend), each build's default GEMM variant. A run that reports anything else stops its
// model with a FAIL no waiver excuses; each model's evidence keeps what every run reported
// (details.models[].ran: {baseline: [{asked, reported}], candidate: […]}) for `landing import`.
AskedRun timing_ask(const GateProfile& profile);

// Adds to `row`: baseline_ns, candidate_ns (medians), delta_ns, delta_pct, p_value, ci_pct and
// verdict ("SLOWER", "FASTER", "SAME", "unchanged code", "added", "removed").
void judge_timing_row(nlohmann::json& row, double alpha);

// Judges one model's evidence in place (every row, movers, evidence line) and returns its checks:
// the model's own (FAIL when nothing was timed) and one per budgeted role.
std::vector<Check> judge_timing_evidence(nlohmann::json& model, const TimingSettings& s);

// The check "coverage" and the "unguarded" table (landing.md) from details["coverage"]
// (timing/kernel_coverage.h): INCONCLUSIVE when a kernel no traced run launched has changed code
// (or its change cannot be told), PASS otherwise, SKIPPED when the kernel list was unknown.
void judge_coverage(GateResult& r);

// Re-judges a whole timing result from details.models and details.coverage under `profile`
// (checks, evidence, rows and tables).
void rejudge_timing(GateResult& r, const GateProfile& profile);

}  // namespace pfx::gates

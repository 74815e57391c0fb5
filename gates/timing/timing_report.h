// The timing gate's figures for one model, typed: the combined trace diff of its repetitions
// (trace/diff.h) and the one JSON mapping of it in the gate result (details.models[], keys
// baseline_ns / candidate_ns / delta_pct / noise_pct, docs/schemas/gate-result.md), the rows it
// contributes to the report's results table and its tables (per-kernel chart, per-role table with
// TFLOP/s and GB/s).
#pragma once
#include <nlohmann/json.hpp>
#include <string>

#include "core/gate_result.h"
#include "trace/diff.h"

namespace pfx::gates {

struct TimingModel {
  std::string model;       // the profile's model name
  int prompt_tokens = 0;
  pfx::trace::TraceDiff diff;  // combine_repetitions of the baseline/candidate trace pairs
};

nlohmann::json to_json(const TimingModel& m);
TimingModel timing_model_from_json(const nlohmann::json& j, const std::string& where);

// Appends model number `index`'s rows and tables from its judged evidence (details.models[i]
// after timing_judge.h's judge_timing_evidence: per row verdict, p_value, ci_pct; movers): the
// GPU kernel time; the significant kernel movers, most significant first, or one "no significant
// change" row; the roles whose change is significant; tables "kernels-<index>" (per kernel with
// p-value and verdict, movers first, drawn as bars) and "roles-<index>" (per role with the
// interval, verdict, TFLOP/s and GB/s, shown in landing.md too). Role rows name the budget check
// that judges them. Errors (pfx::Error) name the field.
void add_timing_output(GateResult& r, const nlohmann::json& judged_model, std::size_t index);
// The figures of an unjudged model (landing-gate-result/1 records, which had no verdict per row):
// the top 5 kernels and roles by |Δ|, as that version showed them.
void add_timing_output(GateResult& r, const TimingModel& m, std::size_t index);
// The check that judges role `role` of `model` against gates.timing.role_budgets.
std::string role_check_name(const std::string& model, const std::string& role);

// landing-gate-result/1 reader: rows and tables from details.models.
void read_legacy_timing_output(GateResult& r);

}  // namespace pfx::gates

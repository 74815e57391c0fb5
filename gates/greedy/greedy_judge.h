// The greedy gate's rule on one case, from its stored evidence alone (so `landing import` can redo
// it): baseline and candidate token ids and texts byte-identical → PASS; both empty → FAIL that
// no waiver excuses (nothing was compared); otherwise FAIL naming the first diverging token and
// both continuations. Evidence: {baseline_ids, candidate_ids, baseline_text, candidate_text}.
#pragma once
#include <nlohmann/json.hpp>

#include "core/gate_result.h"

namespace pfx::gates {

// Sets c.status / reason / waivable from `row`, and row["first_divergence"] on a divergence.
// Returns false (c untouched) when `row` lacks the evidence.
bool judge_greedy_case(Check& c, nlohmann::json& row);

}  // namespace pfx::gates

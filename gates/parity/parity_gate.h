// The parity gate: does the candidate's fast path compute what its generic path computes? Per
// case (model + prompt from the gate profile): `prefill logits --path fast` vs `--path generic`
// on the same build; max |Δ| / max |generic|, NMSE, top-1 agreement, NaN/inf. FAIL above
// gates.parity.max_rel_dev (default 1e-3), or max_nmse / min_top1 where the profile sets them.
#pragma once
#include "core/gate_context.h"

namespace pfx::gates {
GateResult run_parity_gate(const GateContext& ctx);
}  // namespace pfx::gates

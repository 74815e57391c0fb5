// The parity gate: does the candidate's fast path compute what its generic path computes? Per
// case (model + prompt from the gate profile): `prefill logits --path fast` vs `--path generic`
// on the same build; max |Δ| / max |generic|, NMSE, top-1 agreement, NaN/inf. FAIL above
// gates.parity.max_rel_dev (default 1e-3), or max_nmse / min_top1 where the profile sets them.
// A case over its threshold is localised (the first two such cases, where the candidate's
// `--version --json` has capabilities.residual_dump): both paths rerun with `--dump-residual`
// and the check names the first layer whose residual deviates by more than 1/100 of the
// threshold, with the per-layer list in its metrics. Localisation only adds information: its own
// failures become notes and never change the verdict. Which GEMM variants each case runs on, and
// the checks of variants that cannot run (one the baseline offered and the candidate does not is
// INCONCLUSIVE): parity/parity_plan.h.
#pragma once
#include "run/gate_context.h"

namespace pfx::gates {
GateResult run_parity_gate(const GateContext& ctx);
}  // namespace pfx::gates

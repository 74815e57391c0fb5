// The accuracy gate: is each candidate path right in absolute terms? Each fixtures oracle case
// (float64 NumPy forward pass, fixtures/oracle/NAME.json + .logits.npy) through each configured
// path; max |Δ| / max |oracle|, NMSE and top-1 agreement against the fixtures README's bounds
// (1e-2, 1e-4, 95% by default). This catches what parity cannot: a bug both paths share. The
// greedy continuation is compared with the oracle's too and its first divergence reported
// (information, per the README: quantized models diverge legitimately).
#pragma once
#include "run/gate_context.h"

namespace pfx::gates {
GateResult run_accuracy_gate(const GateContext& ctx);
}  // namespace pfx::gates

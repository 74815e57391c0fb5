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

// The paths the gate runs each case on (gates.accuracy.paths; none listed: the fast and generic
// paths on CUDA, the backend alone ("") on the CPU), the check name of a case on one of them, and
// what its logits and greedy calls ask of the candidate (`subcommand` logits or greedy). `landing
// import` expects these checks and checks the reports an imported result recorded against the asks.
std::vector<std::string> accuracy_paths(const GateProfile& profile);
std::string accuracy_check_name(const GateProfile& profile, const std::string& case_name, const std::string& path);
AskedRun accuracy_ask(const GateProfile& profile, const std::string& path, const std::string& subcommand);

}  // namespace pfx::gates

// The timing gate: which kernels got faster or slower? One prefill of each profile model is run
// under the CUPTI tracer (`landing trace`, gates/trace) for the baseline and the candidate,
// alternately, `reps` times; per kernel name and per tensor role (NVTX ranges, DESIGN.md seam 3)
// the median GPU ns of each side, Δns and Δ%, top movers first, kernels added or removed. FAIL only
// where gates.timing.role_budgets sets a regression budget for a role and the role's median Δ%
// exceeds it by more than its run-to-run noise.
#pragma once
#include <filesystem>

#include "core/gate_context.h"

namespace pfx::gates {

// `landing_exe`: the binary whose `trace` subcommand runs the tracer.
GateResult run_timing_gate(const GateContext& ctx, const std::filesystem::path& landing_exe);

}  // namespace pfx::gates

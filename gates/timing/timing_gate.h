// The timing gate: which kernels got faster or slower? One prefill of each profile model is run
// under the CUPTI tracer (`landing trace`, gates/trace) for the baseline and the candidate,
// alternately, `reps` times; per kernel name and per tensor role (NVTX ranges, DESIGN.md seam 3)
// the median GPU ns of each side, Δns and Δ%, top movers first, kernels added or removed. FAIL only
// where gates.timing.role_budgets sets a regression budget for a role and the role's median Δ%
// exceeds it by more than its run-to-run noise.
#pragma once
#include <filesystem>
#include <map>
#include <vector>

#include "run/gate_context.h"
#include "trace/diff.h"

namespace pfx::gates {

// `landing_exe`: the binary whose `trace` subcommand runs the tracer.
GateResult run_timing_gate(const GateContext& ctx, const std::filesystem::path& landing_exe);

// The judgement for one model from its repetitions' trace diffs (baseline vs candidate), combined
// by trace::combine_repetitions: per kernel and per role the median ns of each side, Δ, Δ% and
// run-to-run noise (details.models[], and the rows and tables of timing_report.h), one check for
// the model (FAIL if nothing was timed) and one per budgeted role (FAIL where
// Δ% > max_regression_pct + noise). Evidence lines accumulate in details.model_evidence.
// `role_weight_bytes`: weight bytes per GEMM role (role_bytes.h), for GB/s where times are per pass.
void judge_timing_model(GateResult& r, const std::string& model, const std::vector<pfx::trace::TraceDiff>& reps,
                        const nlohmann::json& budgets, const std::string& origin, int prompt_tokens,
                        const std::map<std::string, double>& role_weight_bytes = {});

}  // namespace pfx::gates

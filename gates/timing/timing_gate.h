// The timing gate: which kernels got faster or slower? One prefill of each profile model is run
// under the CUPTI tracer (`landing trace`, gates/trace) for the baseline and the candidate,
// alternately, `reps` times; per kernel name and per tensor role (NVTX ranges, DESIGN.md seam 3)
// the samples of each side, judged by timing_judge.h: a Mann-Whitney verdict per row at α, movers
// by significance, "unchanged code" by SASS hash, role budgets on the interval's bound.
#pragma once
#include <filesystem>
#include <map>
#include <vector>

#include "run/gate_context.h"
#include "timing/timing_judge.h"
#include "trace/diff.h"

namespace pfx::gates {

// `landing_exe`: the binary whose `trace` subcommand runs the tracer.
GateResult run_timing_gate(const GateContext& ctx, const std::filesystem::path& landing_exe);

// One model's evidence from its repetitions' trace diffs (baseline vs candidate), combined by
// trace::combine_repetitions: per kernel and per role the samples of each side and whether its
// code changed (`code`, kernel_code.h; null: not known), judged by timing_judge.h into
// details.models[], checks on `r` and its rows and tables (timing_report.h).
// `role_weight_bytes`: weight bytes per GEMM role (role_bytes.h), for GB/s where times are per pass.
// `ran`: what the traced runs reported they ran (timing_judge.h timing_ask), kept in the evidence.
void judge_timing_model(GateResult& r, const std::string& model, const std::vector<pfx::trace::TraceDiff>& reps,
                        const TimingSettings& settings, int prompt_tokens, const nlohmann::json& code = nullptr,
                        const std::map<std::string, double>& role_weight_bytes = {}, const nlohmann::json& ran = nullptr);

}  // namespace pfx::gates

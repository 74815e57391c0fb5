// The greedy gate: does the candidate generate the same tokens as the baseline build? Same
// prompts, N tokens each, on the CUDA fast path where a GPU answers, else on the CPU backend (the
// result says which). Byte-identical passes; otherwise FAIL showing the first diverging position
// and both continuations — unless the candidate's gate profile waives it with a reason.
#pragma once
#include "run/gate_context.h"

namespace pfx::gates {

GateResult run_greedy_gate(const GateContext& ctx);

// What each greedy call asks of both builds once the gate has chosen `backend` (cpu or cuda;
// gates.greedy.backend, "auto" deciding at run time): gates.greedy.path on CUDA, no path on the
// CPU. `landing import` checks the reports an imported result recorded against it.
AskedRun greedy_ask(const GateProfile& profile, const std::string& backend);

}  // namespace pfx::gates

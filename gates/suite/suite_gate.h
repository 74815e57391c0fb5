// The suite gate: the candidate build's whole CTest run except the `landing-e2e` label (so a
// landing never recurses into its own end-to-end tests), read back from CTest's JUnit output:
// passed/failed/skipped and the failing tests by name. FAIL on any failure or on no test at all;
// INCONCLUSIVE while any test was skipped (the GPU tests on a host without one) until the run of
// a host that could run them is joined (`landing import`, suite/suite_judge.h).
#pragma once
#include "run/gate_context.h"
#include "junit/junit.h"

namespace pfx::gates {

GateResult run_suite_gate(const GateContext& ctx);
// Turns a parsed report into evidence and checks (what the gate does after ctest ran; the rules
// are suite/suite_judge.h's). `ctest_exit`: ctest's exit code (non-zero with no failing test → FAIL).
void judge_junit(GateResult& r, const JUnitReport& rep, int ctest_exit = 0);

}  // namespace pfx::gates

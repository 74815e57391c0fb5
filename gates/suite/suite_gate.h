// The suite gate: the candidate build's whole CTest run except the `landing-e2e` label (so a
// landing never recurses into its own end-to-end tests), read back from CTest's JUnit output:
// passed/failed/skipped and the failing tests by name. FAIL on any failure or on no test at all.
#pragma once
#include "run/gate_context.h"
#include "junit/junit.h"

namespace pfx::gates {

GateResult run_suite_gate(const GateContext& ctx);
// Turns a parsed report into checks/evidence (what the gate does after ctest ran).
void judge_junit(GateResult& r, const JUnitReport& rep);

}  // namespace pfx::gates

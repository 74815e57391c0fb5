// The suite gate's figures, typed: the passed/failed/skipped row of the report's results table and
// the table of tests that did not pass (failed first, then skipped, with their messages).
#pragma once
#include "core/gate_result.h"
#include "junit/junit.h"

namespace pfx::gates {

void add_suite_output(GateResult& r, const JUnitReport& rep);

// landing-gate-result/1 reader: the figures from details.passed/failed/skipped, .failed_tests and
// .skipped_tests.
void read_legacy_suite_output(GateResult& r);

}  // namespace pfx::gates

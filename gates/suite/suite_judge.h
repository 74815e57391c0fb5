// The suite gate's judgement, from evidence alone so that it can be redone: when ctest ran here,
// when `landing import` re-judges a suite result from another host, and when the CPU host's run
// (GPU tests skipped) and the GPU host's run (`landing gate suite` there) are joined into one.
// Evidence (GateResult::details): "tests" [{name, outcome: passed|failed|skipped, message}] and
// "runs" [{host, ctest_exit}] (one per ctest run joined). Rules:
//   a failing test, or a ctest exit other than 0 with no failing test named → FAIL;
//   no test ran (all skipped) → FAIL (checked nothing);
//   any test skipped in every run → INCONCLUSIVE, never PASS (a suite whose tests were skipped
//   did not check them: run `landing gate suite` where they can run and import it);
//   else PASS.
#pragma once
#include <nlohmann/json.hpp>
#include <string>

#include "core/gate_result.h"
#include "junit/junit.h"

namespace pfx::gates {

// details["tests"] from a parsed JUnit report.
nlohmann::json suite_tests(const JUnitReport& rep);
// Replaces r.checks and r.evidence from r.details (tests, runs); counts go to details too. Does
// not settle the status (finish() does, applying waivers).
void judge_suite(GateResult& r);
// The two runs' evidence joined (per test: failed if it failed in either, else passed if it passed
// in either, else skipped), judged; `local` supplies everything else (ids, command, host).
GateResult join_suite(const GateResult& local, const GateResult& imported);

}  // namespace pfx::gates

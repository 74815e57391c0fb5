// junit.xml: the landing as JUnit (the format Jenkins and GitLab read; tests/gates/report/junit.xsd)
// so CI systems show every check next to their own tests: a <testsuite> per gate (time, timestamp,
// hostname of the machine that ran it, its status/reason/reproduce as properties), a <testcase> per
// check (classname = the gate; a gate with no checks is one case of its own name): FAIL →
// <failure type="FAIL">, SKIPPED/INCONCLUSIVE/not run → <skipped message="STATUS: reason">,
// WAIVED → passed with the waiver in system-out.
#pragma once
#include <string>

#include "report/landing_record.h"

namespace pfx::gates {
std::string render_junit(const LandingRecord& r);
}  // namespace pfx::gates

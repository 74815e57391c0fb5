// junit.xml: the landing as a JUnit test suite (one test case per gate) so CI systems show gates
// next to their own tests: FAIL → <failure>, SKIPPED/INCONCLUSIVE/not run → <skipped>, WAIVED → passed
// with the waiver in system-out.
#pragma once
#include <string>

#include "report/landing_record.h"

namespace pfx::gates {
std::string render_junit(const LandingRecord& r);
}  // namespace pfx::gates

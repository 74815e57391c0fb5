// `landing import` checks again that every imported run ran what its gate asked
// (core/ran_as_asked.h). What was asked comes from the report's gate profile (and, for parity, the
// plan of the report's two builds), never from the file; what each build reported comes from the
// file's evidence (the checks' metrics.ran of parity, accuracy and greedy, each A/B sample's ran,
// each timing model's ran) and is judged against that build's `--version --json` as the report
// recorded it. A run whose report contradicts the ask, or evidence lacking the report of a build
// that gives one (a result written by a landing that did not check), fails the checks resting on
// it, not waivable; what an older build cannot report is said in their reasons. SKIPPED checks ran
// nothing and are left alone.
#pragma once
#include "core/gate_profile.h"
#include "core/gate_result.h"
#include "report/landing_record.h"

namespace pfx::gates {

void reverify_ran_as_asked(GateResult& r, const GateProfile& profile, const LandingRecord& rec);

}  // namespace pfx::gates

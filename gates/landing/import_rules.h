// What `landing import` believes of a result from another machine — as little as possible. A
// result is bound to what it judged (gate_result.h `binding`): its candidate and baseline ids,
// the sha256 of both `prefill` binaries and of the effective gate profile must be the report's,
// and its harness pinned, or the import is refused (unless the user accepts the mismatch with a
// reason the report shows). Its status is never taken as given: `required` comes from the
// report's profile, every check claiming PASS is re-judged from its stored metrics under the
// report's thresholds and waivers (no metrics → FAIL), the profile's cases must all be there
// (for parity: on every GEMM variant the plan of the report's two builds requires, the baseline's
// included, parity/parity_plan.h), and a result with no checks is a FAIL. Only gates the profile enables, never `build`, and only
// gates with a re-judging rule (not ptxas, which every host runs from kernel-resources.json) can
// be imported.
#pragma once
#include <string>
#include <vector>

#include "core/gate_profile.h"
#include "core/gate_result.h"
#include "parity/parity_plan.h"
#include "report/landing_record.h"

namespace pfx::gates {

// One line per difference between the result's binding and the report ("candidate prefill
// sha256 3f2a…, report has 9c1d…"); empty when bound.
std::vector<std::string> binding_mismatches(const GateResult& r, const LandingRecord& rec);

// Why `gate` cannot be imported into a report with `profile`, or "" when it can.
std::string not_importable(const std::string& gate, const GateProfile& profile);

// The parity plan of the report's builds (their `--version --json` as the report recorded them).
ParityPlan report_parity_plan(const GateProfile& profile, const LandingRecord& rec);

// The imported result as this landing judges it under `profile`, for the report `rec`: its two
// builds' `--version --json` say which GEMM variants parity must cover (parity/parity_plan.h: the
// baseline's variants too), and the plan, not the file, settles those the candidate cannot run;
// every recorded run is checked against what its gate asked (landing/import_ran_as_asked.h).
GateResult rejudge_imported(const GateResult& imported, const GateProfile& profile, const LandingRecord& rec);

}  // namespace pfx::gates

// Coverage of what lands: which of the candidate's kernels (kernel-resources.json beside its
// prefill) no traced gate run launched — the "unguarded kernels" — and whether any of them changed
// code. A changed kernel that nothing launched was never timed or exercised by the traced runs, so
// the timing gate's check "coverage" is INCONCLUSIVE then (the landing INCOMPLETE) and names it.
// "Changed": its SASS hash differs from the baseline's or it is new (kernel_code.h); where a build
// has no SASS hashes, its ptxas resources (registers, spills, stack, shared memory) differ or it is
// new — a weaker test, and the check's reason says so. Launched: the mangled names in the
// candidate's traces (CUPTI's records).
#pragma once
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <vector>

#include "core/gate_result.h"
#include "ptxas/kernel_resources.h"
#include "timing/kernel_code.h"

namespace pfx::gates {

struct CoverageInput {
  bool resources_known = false;                 // the candidate's kernel-resources.json was read
  std::string resources_note;                   // why not, when not
  std::vector<KernelResources> candidate, baseline;
  std::set<std::string> launched;               // mangled names the candidate's traced runs launched
  SassHashes baseline_sass, candidate_sass;
};

// The evidence, details["coverage"]: {known, note, kernels, launched, changed_by,
// unguarded: [{kernel, mangled, source, changed: new|changed|unchanged|unknown, by}]}; judged by
// timing_judge.h's judge_coverage.
nlohmann::json kernel_coverage(const CoverageInput& in);

}  // namespace pfx::gates

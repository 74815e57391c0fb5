// Which runs the parity gate makes, from the profile and both builds' `--version --json`: every
// case on the candidate's default fast path (check name = the case's name), and each case of
// gates.parity.gemm_variant_cases (empty: every case) again on each other GEMM variant it must
// cover, check "<case> gemm=<variant>", run with `prefill logits --gemm`.
//
// The variants it must cover: those gates.parity.gemm_variants names (["all"]: every name the
// candidate's capabilities.gemm_variants lists, the first being its default), plus every variant
// the baseline's capabilities.gemm_variants lists. Both the candidate's list and its profile are
// the candidate's word, so neither can take a variant out of the check: the profile may add
// variants, never remove the baseline's. A variant that cannot be run gets one check of its own,
// "gemm=<variant>", settled here without a run:
//   - named by the profile, not offered by the candidate: FAIL (the profile asks for a check the
//     build cannot give);
//   - offered by the baseline, not by the candidate: INCONCLUSIVE, not waivable ("offered by the
//     baseline <id>, not by the candidate"): the candidate lost it or retired it, and only a human
//     can tell which; the landing cannot be PASS until one accepts it. The next landing's baseline
//     no longer offers a variant whose retirement landed.
// A baseline whose `--version --json` predates capabilities.gemm_variants (or has none) requires
// no variant; the note says so, nothing is invented.
// `landing import` asks the same plan which checks an imported parity result must hold, and takes
// the settled checks from the plan, never from the imported file.
#pragma once
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "core/gate_profile.h"
#include "core/gate_result.h"
#include "core/ran_as_asked.h"

namespace pfx::gates {

// What the plan reads of one build: its `prefill --version --json` (null where it gave none) and
// the id the reasons name it by (the report id: a 12-digit SHA).
struct PlanBuild {
  nlohmann::json version;
  std::string id;
};

struct ParityRun {
  std::string check;      // the check's name
  std::string case_name;  // the case it reruns
  std::string gemm;       // --gemm value; "" = no flag (the build's default variant)
};

struct ParityPlan {
  std::vector<ParityRun> runs;                // in case order, the default variant first
  std::vector<Check> settled;                 // "gemm=<v>" checks decided without a run (above)
  std::vector<std::string> missing_variants;  // named in the profile, not offered by the candidate
  std::vector<std::string> dropped_variants;  // offered by the baseline, not by the candidate
  std::string note;                           // how the variants were chosen (for the evidence)
};

// `case_names`: the profile's parity cases in order (run/gate_context.h case_names). Throws
// pfx::Error naming the profile when gemm_variant_cases names a case that does not exist.
ParityPlan plan_parity_runs(const GateProfile& profile, const std::vector<std::string>& case_names,
                            const PlanBuild& candidate, const PlanBuild& baseline);

// What the parity gate asks of the candidate's `prefill logits` (gates.parity.backend, .path,
// .reference_path): `run` on the fast path with its GEMM variant ("" = the build's default), and
// the reference path each run is judged against. The gate calls with these; `landing import`
// checks the reports an imported result recorded against them (core/ran_as_asked.h).
AskedRun parity_ask(const GateProfile& profile, const ParityRun& run);
AskedRun parity_reference_ask(const GateProfile& profile);

// The check name of `case_name` on GEMM variant `gemm` ("" or the default: the case's own name).
std::string parity_check_name(const std::string& case_name, const std::string& gemm);

}  // namespace pfx::gates

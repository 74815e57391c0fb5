// Which runs the parity gate makes, from the profile and the candidate's `--version --json`: every
// case on the build's default fast path (check name = the case's name), and each case of
// gates.parity.gemm_variant_cases (empty: every case) again on each other GEMM variant of
// gates.parity.gemm_variants (["all"]: every name the candidate's capabilities.gemm_variants lists,
// the first being its default), check "<case> gemm=<variant>", run with `prefill logits --gemm`.
// `landing import` asks the same plan which checks an imported parity result must hold.
#pragma once
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "core/gate_profile.h"

namespace pfx::gates {

struct ParityRun {
  std::string check;      // the check's name
  std::string case_name;  // the case it reruns
  std::string gemm;       // --gemm value; "" = no flag (the build's default variant)
};

struct ParityPlan {
  std::vector<ParityRun> runs;                // in case order, the default variant first
  std::vector<std::string> missing_variants;  // named in the profile, not offered by the candidate
  std::string note;                           // how the variants were chosen (for the evidence)
};

// `case_names`: the profile's parity cases in order (run/gate_context.h case_names). Throws
// pfx::Error naming the profile when gemm_variant_cases names a case that does not exist.
ParityPlan plan_parity_runs(const GateProfile& profile, const std::vector<std::string>& case_names,
                            const nlohmann::json& candidate_version);

// The check name of `case_name` on GEMM variant `gemm` ("" or the default: the case's own name).
std::string parity_check_name(const std::string& case_name, const std::string& gemm);

}  // namespace pfx::gates

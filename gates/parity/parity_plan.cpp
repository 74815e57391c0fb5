// The parity gate's runs per case and GEMM variant (see parity_plan.h).
#include "parity/parity_plan.h"

#include <algorithm>

#include "contract/prefill_cli.h"
#include "util/error.h"

namespace pfx::gates {

using nlohmann::json;

std::string parity_check_name(const std::string& case_name, const std::string& gemm) {
  return gemm.empty() ? case_name : case_name + " gemm=" + gemm;
}

ParityPlan plan_parity_runs(const GateProfile& profile, const std::vector<std::string>& case_names, const json& version) {
  ParityPlan plan;
  for (const auto& c : case_names) plan.runs.push_back({c, c, ""});
  // The candidate's variants, its default first; none where it predates the capability.
  std::vector<std::string> offered;
  if (version.is_object() && version.contains("capabilities") && version["capabilities"].is_object()) {
    const json caps = version["capabilities"].value(contract::capability::kGemmVariants, json::array());
    for (const auto& v : caps.is_array() ? caps : json::array())
      if (v.is_string()) offered.push_back(v.get<std::string>());
  }
  const auto wanted_list = profile.strings("parity", "gemm_variants");
  const bool all = std::find(wanted_list.begin(), wanted_list.end(), "all") != wanted_list.end();
  std::vector<std::string> wanted = all ? offered : wanted_list;
  for (const auto& v : wanted_list)
    if (v != "all" && std::find(offered.begin(), offered.end(), v) == offered.end()) plan.missing_variants.push_back(v);
  std::vector<std::string> cases = profile.strings("parity", "gemm_variant_cases");
  for (const auto& c : cases)
    if (std::find(case_names.begin(), case_names.end(), c) == case_names.end())
      fail(profile.origin(), ": gates.parity.gemm_variant_cases: no parity case is named '", c, "'");
  if (cases.empty()) cases = case_names;
  std::vector<std::string> extra;
  for (const auto& v : wanted)
    if (!offered.empty() && v != offered.front() && std::find(offered.begin(), offered.end(), v) != offered.end())
      extra.push_back(v);
  for (const auto& v : extra)
    for (const auto& c : case_names)
      if (std::find(cases.begin(), cases.end(), c) != cases.end()) plan.runs.push_back({parity_check_name(c, v), c, v});
  std::stable_sort(plan.runs.begin(), plan.runs.end(), [&](const ParityRun& a, const ParityRun& b) {
    auto at = [&](const std::string& c) { return std::find(case_names.begin(), case_names.end(), c) - case_names.begin(); };
    return at(a.case_name) < at(b.case_name);
  });
  if (offered.empty()) {
    plan.note = "the candidate lists no gemm_variants: its one fast path only";
  } else {
    plan.note = "GEMM variants: " + offered.front() + " (default) on every case";
    for (const auto& v : extra) plan.note += ", " + v + " on " + std::to_string(cases.size()) + " cases";
  }
  return plan;
}

}  // namespace pfx::gates

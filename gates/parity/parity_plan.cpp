// The parity gate's runs per case and GEMM variant (see parity_plan.h).
#include "parity/parity_plan.h"

#include <algorithm>
#include <optional>

#include "contract/prefill_cli.h"
#include "util/error.h"

namespace pfx::gates {

using nlohmann::json;

namespace {

bool contains(const std::vector<std::string>& list, const std::string& v) {
  return std::find(list.begin(), list.end(), v) != list.end();
}

// capabilities.gemm_variants of a `--version --json` (its default first); nullopt where the build
// predates the capability or gave no `--version --json` at all.
std::optional<std::vector<std::string>> offered_variants(const json& version) {
  if (!version.is_object() || !version.contains("capabilities") || !version["capabilities"].is_object()) return std::nullopt;
  const json& caps = version["capabilities"];
  if (!caps.contains(contract::capability::kGemmVariants) || !caps[contract::capability::kGemmVariants].is_array())
    return std::nullopt;
  std::vector<std::string> out;
  for (const auto& v : caps[contract::capability::kGemmVariants])
    if (v.is_string()) out.push_back(v.get<std::string>());
  return out;
}

std::string joined(const std::vector<std::string>& list) {
  std::string out;
  for (const auto& v : list) out += (out.empty() ? "" : ", ") + v;
  return out;
}

// The one check of a variant the candidate cannot run.
Check unrunnable_check(const std::string& variant, Status status, std::string reason) {
  Check c;
  c.name = "gemm=" + variant;
  c.status = status;
  c.reason = std::move(reason);
  c.metrics = {{"gemm", variant}};
  return c;
}

// What the baseline asked of the plan, for its note ("the baseline 1a2b… offered fused, pipelined").
std::string baseline_note(const std::string& base_name, const json& version, const std::optional<std::vector<std::string>>& offered) {
  if (!version.is_object()) return base_name + " gave no --version --json: it requires no GEMM variant";
  if (!offered) return base_name + " lists no gemm_variants (it predates the capability): it requires no GEMM variant";
  return base_name + " offered " + (offered->empty() ? std::string("none") : joined(*offered));
}

}  // namespace

AskedRun parity_ask(const GateProfile& profile, const ParityRun& run) {
  return {"logits", profile.string("parity", "backend", "cuda"), profile.string("parity", "path", "fast"), run.gemm, ""};
}

AskedRun parity_reference_ask(const GateProfile& profile) {
  return {"logits", profile.string("parity", "backend", "cuda"), profile.string("parity", "reference_path", "generic"), "", ""};
}

std::string parity_check_name(const std::string& case_name, const std::string& gemm) {
  return gemm.empty() ? case_name : case_name + " gemm=" + gemm;
}

ParityPlan plan_parity_runs(const GateProfile& profile, const std::vector<std::string>& case_names, const PlanBuild& candidate,
                            const PlanBuild& baseline) {
  ParityPlan plan;
  for (const auto& c : case_names) plan.runs.push_back({c, c, ""});
  const std::vector<std::string> offered = offered_variants(candidate.version).value_or(std::vector<std::string>{});
  const auto from_baseline = offered_variants(baseline.version);

  // What must be covered: the profile's variants, then the baseline's (which the profile cannot drop).
  const auto wanted_list = profile.strings("parity", "gemm_variants");
  const bool all = contains(wanted_list, "all");
  std::vector<std::string> required = all ? offered : std::vector<std::string>{};
  for (const auto& v : wanted_list)
    if (v != "all" && !contains(required, v)) required.push_back(v);
  std::vector<std::string> kept_from_baseline;  // required only because the baseline offered them
  for (const auto& v : from_baseline.value_or(std::vector<std::string>{}))
    if (!contains(required, v)) {
      required.push_back(v);
      if (contains(offered, v) && v != offered.front()) kept_from_baseline.push_back(v);
    }

  const std::string base_name = "the baseline " + (baseline.id.empty() ? std::string("build") : baseline.id);
  const auto baseline_offered = [&](const std::string& v) { return from_baseline && contains(*from_baseline, v); };
  for (const auto& v : required) {
    if (contains(offered, v)) continue;
    if (contains(wanted_list, v)) {
      plan.missing_variants.push_back(v);
      plan.settled.push_back(unrunnable_check(
          v, Status::Fail,
          "gates.parity.gemm_variants names '" + v + "', which the candidate's capabilities.gemm_variants does not offer" +
              (baseline_offered(v) ? " (" + base_name + " offered it)" : "")));
    } else {
      plan.dropped_variants.push_back(v);
      Check c = unrunnable_check(
          v, Status::Inconclusive,
          "GEMM variant '" + v + "' offered by " + base_name + ", not by the candidate: no parity check of it can run. If the "
          "candidate retired it on purpose, a human must accept that retirement (this landing stays INCOMPLETE; the next "
          "landing's baseline no longer offers it); otherwise the candidate lost a variant the baseline had");
      c.waivable = false;  // nothing was measured to waive: accepting the retirement is a human's call
      plan.settled.push_back(c);
    }
  }

  std::vector<std::string> cases = profile.strings("parity", "gemm_variant_cases");
  for (const auto& c : cases)
    if (!contains(case_names, c)) fail(profile.origin(), ": gates.parity.gemm_variant_cases: no parity case is named '", c, "'");
  if (cases.empty()) cases = case_names;
  // The extra runs: each required variant the candidate offers, other than its default, in its order.
  std::vector<std::string> extra;
  for (size_t k = 1; k < offered.size(); ++k)
    if (contains(required, offered[k]) && !contains(extra, offered[k])) extra.push_back(offered[k]);
  for (const auto& v : extra)
    for (const auto& c : case_names)
      if (contains(cases, c)) plan.runs.push_back({parity_check_name(c, v), c, v});
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
  plan.note += "; " + baseline_note(base_name, baseline.version, from_baseline);
  if (!kept_from_baseline.empty())
    plan.note += "; checked although the candidate's gates.parity.gemm_variants leaves them out (the baseline offered them): " +
                 joined(kept_from_baseline);
  if (!plan.dropped_variants.empty())
    plan.note += "; not offered by the candidate: " + joined(plan.dropped_variants) +
                 " (INCONCLUSIVE until a human accepts the retirement)";
  return plan;
}

}  // namespace pfx::gates

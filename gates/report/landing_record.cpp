// Landing record (de)serialization and verdict (see landing_record.h).
#include "report/landing_record.h"

#include <algorithm>
#include <fstream>
#include <sstream>

#include "core/ids.h"
#include "util/atomic_file.h"
#include "util/error.h"
#include "util/json_array.h"

namespace pfx::gates {

using nlohmann::json;
namespace fs = std::filesystem;

const GateResult* LandingRecord::gate(const std::string& name) const {
  for (const auto& g : gates)
    if (g.gate == name) return &g;
  return nullptr;
}

void LandingRecord::put(const GateResult& r) {
  for (auto& g : gates)
    if (g.gate == r.gate) {
      g = r;
      return;
    }
  gates.push_back(r);
  // Report order: the pseudo-gate "build" first, then known_gates() order.
  auto rank = [](const std::string& n) {
    if (n == "build") return -1;
    const auto& k = known_gates();
    for (size_t i = 0; i < k.size(); ++i)
      if (k[i] == n) return static_cast<int>(i);
    return 100;
  };
  std::stable_sort(gates.begin(), gates.end(), [&](const GateResult& a, const GateResult& b) { return rank(a.gate) < rank(b.gate); });
}

void LandingRecord::recompute_verdict() {
  std::vector<GateOutcome> outcomes;
  for (const auto& g : gates) outcomes.push_back({g.gate, g.status, g.required});
  std::vector<std::string> missing;
  GateProfile prof;
  bool have_profile = false;
  try {
    prof = GateProfile::from_json(profile, profile_path);
    have_profile = true;
  } catch (const Error&) {
  }
  for (const auto& name : enabled_gates)
    if (!gate(name) && (!have_profile || prof.required(name))) missing.push_back(name);
  const auto v = combine(outcomes, missing);
  verdict = v.verdict;
  verdict_reason = v.reason;
  if (verdict == Verdict::Pass && harness.is_object() && !harness.value("pinned", false)) {
    verdict = Verdict::Incomplete;
    verdict_reason = "every required gate passed, but the harness that judged is not pinned: " +
                     harness.value("how", std::string("unknown"));
  }
}

std::vector<const Row*> LandingRecord::result_rows() const {
  std::vector<const GateResult*> order;
  for (const auto& g : gates) order.push_back(&g);
  auto rank = [](const GateResult* g) {
    const GateInfo* info = gate_info(g->gate);
    return info ? info->results_rank : 1000;
  };
  std::stable_sort(order.begin(), order.end(), [&](const GateResult* a, const GateResult* b) { return rank(a) < rank(b); });
  std::vector<const Row*> rows;
  for (const GateResult* g : order)
    for (const auto& row : g->rows) rows.push_back(&row);
  return rows;
}

const Row* LandingRecord::headline_row() const {
  for (const Row* row : result_rows())
    if (row->headline) return row;
  return nullptr;
}

json LandingRecord::headline() const {
  const Row* h = headline_row();
  if (!h) return nullptr;
  return {{"metric", h->metric}, {"before", h->baseline.value.value_or(0.0)}, {"after", h->candidate.value.value_or(0.0)},
          {"delta_pct", h->delta_pct.value_or(0.0)}};
}

std::vector<std::string> LandingRecord::failing_lines() const {
  std::vector<std::string> out;
  for (const auto& g : gates)
    if (g.status == Status::Fail) out.push_back(g.gate + ": " + g.reason.substr(0, 200));
  return out;
}

json to_json(const LandingRecord& r) {
  return {{"schema", kLandingSchema}, {"id", r.id}, {"candidate_id", r.candidate_id}, {"seq", r.seq},
          {"prev", r.prev}, {"next", r.next}, {"created", r.created}, {"repo", r.repo},
          {"baseline", r.baseline}, {"candidate", r.candidate}, {"environment", r.environment},
          {"profile", {{"path", r.profile_path}, {"candidate", r.profile}, {"baseline", r.baseline_profile},
                       {"baseline_note", r.baseline_profile_note}, {"changes", json_array(r.profile_changes)}}},
          {"enabled_gates", r.enabled_gates}, {"gates", json_array(r.gates)}, {"verdict", to_string(r.verdict)},
          {"verdict_reason", r.verdict_reason}, {"headline", r.headline()}, {"imports", r.imports},
          {"profile_sha256", r.profile_sha256}, {"harness", r.harness}, {"superseded", r.superseded}};
}

LandingRecord landing_record_from_json(const json& j, const std::string& where) {
  if (!j.is_object()) fail(where, ": expected a JSON object (a landing record)");
  if (j.value("schema", "") != kLandingSchema) fail(where, ": field 'schema' must be '", kLandingSchema, "'");
  LandingRecord r;
  try {
    r.id = j.at("id");
    r.candidate_id = j.at("candidate_id");
    require_report_id(r.id, where, "field 'id'");
    require_candidate_id(r.candidate_id, where, "field 'candidate_id'");
    r.seq = j.value("seq", 0);
    r.prev = j.value("prev", "");
    r.next = j.value("next", "");
    for (const auto* link : {&r.prev, &r.next})
      if (!link->empty()) require_report_id(*link, where, "ledger link");
    r.created = j.value("created", "");
    r.repo = j.value("repo", "");
    r.baseline = j.value("baseline", json::object());
    r.candidate = j.value("candidate", json::object());
    r.environment = j.value("environment", json::object());
    const auto& p = j.at("profile");
    r.profile_path = p.value("path", "");
    r.profile = p.value("candidate", json::object());
    r.baseline_profile = p.value("baseline", json());
    r.baseline_profile_note = p.value("baseline_note", "");
    for (const auto& c : p.value("changes", json::array())) r.profile_changes.push_back(profile_change_from_json(c));
    r.enabled_gates = j.value("enabled_gates", std::vector<std::string>{});
    const auto& g = j.at("gates");
    for (size_t i = 0; i < g.size(); ++i) r.gates.push_back(gate_result_from_json(g[i], where + ": gates[" + std::to_string(i) + "]"));
    r.verdict = parse_verdict(j.at("verdict").get<std::string>(), where);
    r.verdict_reason = j.value("verdict_reason", "");
    r.imports = j.value("imports", json::array());
    r.profile_sha256 = j.value("profile_sha256", "");
    r.harness = j.value("harness", json());
    r.superseded = j.value("superseded", json::array());
  } catch (const json::exception& e) {
    fail(where, ": malformed landing record: ", e.what());
  }
  return r;
}

LandingRecord read_landing_record(const fs::path& path) {
  std::ifstream in(path);
  if (!in) fail(path.string(), ": cannot open landing record");
  json j;
  try {
    j = json::parse(in);
  } catch (const json::exception& e) {
    fail(path.string(), ": not valid JSON: ", e.what());
  }
  return landing_record_from_json(j, path.string());
}

void write_text_atomic(const fs::path& path, const std::string& text) {
  if (path.has_parent_path()) fs::create_directories(path.parent_path());
  write_file_atomic(path, text);
}

}  // namespace pfx::gates

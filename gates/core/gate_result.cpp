// JSON (de)serialization and status settling of gate results (see gate_result.h).
#include "core/gate_result.h"

#include <chrono>
#include <ctime>
#include <map>

#include "core/ids.h"
#include "util/error.h"

namespace pfx::gates {

using nlohmann::json;

namespace {
template <class T>
T field(const json& j, const char* key, const std::string& where) {
  if (!j.contains(key)) fail(where, ": missing field '", key, "'");
  try {
    return j.at(key).get<T>();
  } catch (const json::exception& e) {
    fail(where, ": field '", key, "' has the wrong type (", e.what(), ")");
  }
}
template <class T>
T field_or(const json& j, const char* key, T dflt, const std::string& where) {
  if (!j.contains(key) || j.at(key).is_null()) return dflt;
  return field<T>(j, key, where);
}
std::map<std::string, LegacyOutputReader>& legacy_readers() {
  static std::map<std::string, LegacyOutputReader> readers;
  return readers;
}
}  // namespace

void register_legacy_output_reader(const std::string& gate, LegacyOutputReader reader) { legacy_readers()[gate] = reader; }

const Row* GateResult::headline() const {
  for (const auto& row : rows)
    if (row.headline) return &row;
  return nullptr;
}

json to_json(const Check& c) {
  json j = {{"name", c.name}, {"status", to_string(c.status)}, {"reason", c.reason},
            {"command", c.command}, {"waivable", c.waivable}, {"metrics", c.metrics}};
  if (!c.waiver.empty()) j["waiver"] = c.waiver;
  return j;
}

Check check_from_json(const json& j, const std::string& where) {
  Check c;
  c.name = field<std::string>(j, "name", where);
  c.status = parse_status(field<std::string>(j, "status", where), where + ": check " + c.name);
  c.reason = field_or<std::string>(j, "reason", "", where);
  c.command = field_or<std::string>(j, "command", "", where);
  c.waivable = field_or<bool>(j, "waivable", true, where);
  c.waiver = field_or<std::string>(j, "waiver", "", where);
  if (j.contains("metrics")) c.metrics = j.at("metrics");
  return c;
}

json to_json(const GateResult& r) {
  json checks = json::array();
  for (const auto& c : r.checks) checks.push_back(to_json(c));
  json rows = json::array();
  for (const auto& row : r.rows) rows.push_back(to_json(row));
  json tables = json::array();
  for (const auto& t : r.tables) tables.push_back(to_json(t));
  return {{"schema", kGateResultSchema}, {"gate", r.gate}, {"status", to_string(r.status)},
          {"reason", r.reason}, {"evidence", r.evidence}, {"command", r.command},
          {"required", r.required}, {"needs_gpu", r.needs_gpu}, {"candidate_id", r.candidate_id},
          {"baseline_id", r.baseline_id}, {"started", r.started}, {"duration_s", r.duration_s},
          {"host", r.host}, {"binding", r.binding}, {"details", r.details}, {"checks", checks}, {"rows", rows},
          {"tables", tables}};
}

GateResult gate_result_from_json(const json& j, const std::string& where) {
  if (!j.is_object()) fail(where, ": expected a JSON object (a gate result)");
  const auto schema = field<std::string>(j, "schema", where);
  const bool v1 = schema == kGateResultSchemaV1;
  if (schema != kGateResultSchema && !v1)
    fail(where, ": field 'schema' is '", schema, "', expected '", kGateResultSchema, "' (or '", kGateResultSchemaV1, "')");
  GateResult r;
  r.gate = field<std::string>(j, "gate", where);
  // The gate name names a file (reports/<id>/gates/<gate>.json): a plain word only.
  bool word = !r.gate.empty() && r.gate.size() <= 40 && r.gate[0] >= 'a' && r.gate[0] <= 'z';
  for (char ch : r.gate) word &= (ch >= 'a' && ch <= 'z') || (ch >= '0' && ch <= '9') || ch == '_' || ch == '-';
  if (!word) fail(where, ": field 'gate' '", r.gate, "' is not a gate name (lower-case letters, digits, '-', '_')");
  const std::string w = where + ": gate " + r.gate;
  r.status = parse_status(field<std::string>(j, "status", w), w);
  r.reason = field_or<std::string>(j, "reason", "", w);
  r.evidence = field_or<std::string>(j, "evidence", "", w);
  r.command = field_or<std::string>(j, "command", "", w);
  r.required = field_or<bool>(j, "required", true, w);
  r.needs_gpu = field_or<bool>(j, "needs_gpu", false, w);
  r.candidate_id = field_or<std::string>(j, "candidate_id", "", w);
  r.baseline_id = field_or<std::string>(j, "baseline_id", "", w);
  // Ids become paths (reports/<id>/): checked here, before anything reads them.
  if (!r.candidate_id.empty()) require_candidate_id(r.candidate_id, w, "field 'candidate_id'");
  if (!r.baseline_id.empty()) require_candidate_id(r.baseline_id, w, "field 'baseline_id'");
  r.started = field_or<std::string>(j, "started", "", w);
  r.duration_s = field_or<double>(j, "duration_s", 0.0, w);
  if (j.contains("host")) r.host = j.at("host");
  if (j.contains("binding")) {
    if (!j.at("binding").is_object()) fail(w, ": field 'binding' must be an object");
    r.binding = j.at("binding");
  }
  if (j.contains("details")) r.details = j.at("details");
  if (j.contains("checks")) {
    if (!j.at("checks").is_array()) fail(w, ": field 'checks' must be an array");
    for (size_t i = 0; i < j.at("checks").size(); ++i)
      r.checks.push_back(check_from_json(j.at("checks")[i], w + ": checks[" + std::to_string(i) + "]"));
  }
  for (const char* key : {"rows", "tables"})
    if (j.contains(key) && !j.at(key).is_array()) fail(w, ": field '", key, "' must be an array");
  if (j.contains("rows"))
    for (size_t i = 0; i < j.at("rows").size(); ++i)
      r.rows.push_back(row_from_json(j.at("rows")[i], w + ": rows[" + std::to_string(i) + "]"));
  if (j.contains("tables"))
    for (size_t i = 0; i < j.at("tables").size(); ++i)
      r.tables.push_back(table_from_json(j.at("tables")[i], w + ": tables[" + std::to_string(i) + "]"));
  if (v1)
    if (auto it = legacy_readers().find(r.gate); it != legacy_readers().end()) {
      try {
        it->second(r);
      } catch (const std::exception& e) {
        fail(w, ": details (", kGateResultSchemaV1, ") unreadable: ", e.what());
      }
      sync_verdicts(r);
    }
  return r;
}

void sync_verdicts(GateResult& r) {
  std::map<std::string, Status> by_name;
  for (const auto& c : r.checks) by_name.emplace(c.name, c.status);
  auto sync = [&](const std::string& check, std::optional<Status>& verdict) {
    if (check.empty()) return;
    if (auto it = by_name.find(check); it != by_name.end()) verdict = it->second;
  };
  for (auto& row : r.rows) sync(row.check, row.verdict);
  for (auto& t : r.tables)
    for (auto& row : t.rows) sync(row.check, row.verdict);
}

void settle_from_checks(GateResult& r) {
  int n_fail = 0, n_inc = 0, n_skip = 0, n_waived = 0, n_pass = 0;
  const Check* first_fail = nullptr;
  const Check* first_other = nullptr;
  for (const auto& c : r.checks) {
    switch (c.status) {
      case Status::Fail: ++n_fail; if (!first_fail) first_fail = &c; break;
      case Status::Inconclusive: ++n_inc; if (!first_other) first_other = &c; break;
      case Status::Skipped: ++n_skip; if (!first_other) first_other = &c; break;
      case Status::Waived: ++n_waived; break;
      case Status::Pass: ++n_pass; break;
    }
  }
  const int n = static_cast<int>(r.checks.size());
  std::string reason;
  if (n == 0) {
    r.status = Status::Fail;
    reason = "checked nothing (no cases, kernels or tests): a gate that checks nothing fails";
  } else if (n_fail) {
    r.status = Status::Fail;
    reason = std::to_string(n_fail) + " of " + std::to_string(n) + " checks failed; first: " + first_fail->name +
             ": " + first_fail->reason;
  } else if (n_inc) {
    r.status = Status::Inconclusive;
    reason = std::to_string(n_inc) + " of " + std::to_string(n) + " checks inconclusive: " + first_other->name +
             ": " + first_other->reason;
  } else if (n_skip) {
    r.status = Status::Skipped;
    reason = std::to_string(n_skip) + " of " + std::to_string(n) + " checks skipped: " + first_other->reason;
  } else if (n_waived) {
    r.status = Status::Waived;
    reason = std::to_string(n_waived) + " of " + std::to_string(n) + " checks failed but are waived in the candidate's gate profile";
  } else {
    r.status = Status::Pass;
    reason = n == 1 ? r.checks.front().reason : "all " + std::to_string(n_pass) + " checks passed";
  }
  if (r.reason.empty()) r.reason = reason;
  sync_verdicts(r);
}

GateResult skipped_result(const std::string& gate, const std::string& reason) {
  GateResult r;
  r.gate = gate;
  r.status = Status::Skipped;
  r.reason = reason;
  r.started = utc_now_iso8601();
  return r;
}

std::string utc_now_iso8601() {
  const auto now = std::chrono::system_clock::now();
  const std::time_t t = std::chrono::system_clock::to_time_t(now);
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

}  // namespace pfx::gates

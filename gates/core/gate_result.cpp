// JSON (de)serialization and status settling of gate results (see gate_result.h).
#include "core/gate_result.h"

#include <chrono>
#include <ctime>
#include <map>

#include "core/ids.h"
#include "util/error.h"
#include "util/json_array.h"
#include "util/json_read.h"

namespace pfx::gates {

using nlohmann::json;

namespace {
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

Check hard_failure(std::string name, std::string reason, std::string command) {
  Check c;
  c.name = std::move(name);
  c.command = std::move(command);
  fail_hard(c, std::move(reason));
  return c;
}

void fail_hard(Check& c, std::string reason) {
  c.status = Status::Fail;
  c.waivable = false;
  c.reason = std::move(reason);
}

json to_json(const Check& c) {
  json j = {{"name", c.name}, {"status", to_string(c.status)}, {"reason", c.reason},
            {"command", c.command}, {"waivable", c.waivable}, {"metrics", c.metrics}};
  if (!c.waiver.empty()) j["waiver"] = c.waiver;
  return j;
}

Check check_from_json(const json& j, const std::string& where) {
  const FieldReader f(j, where);
  Check c;
  c.name = f.str("name");
  c.status = parse_status(f.str("status"), where + ": check " + c.name);
  c.reason = f.str_or("reason");
  c.command = f.str_or("command");
  c.waivable = f.bool_or("waivable", true);
  c.waiver = f.str_or("waiver");
  if (const json* m = f.optional("metrics")) c.metrics = *m;
  return c;
}

json to_json(const GateResult& r) {
  return {{"schema", kGateResultSchema}, {"gate", r.gate}, {"status", to_string(r.status)},
          {"reason", r.reason}, {"evidence", r.evidence}, {"command", r.command},
          {"required", r.required}, {"needs_gpu", r.needs_gpu}, {"candidate_id", r.candidate_id},
          {"baseline_id", r.baseline_id}, {"started", r.started}, {"duration_s", r.duration_s},
          {"host", r.host}, {"binding", r.binding}, {"details", r.details}, {"checks", json_array(r.checks)},
          {"rows", json_array(r.rows)}, {"tables", json_array(r.tables)}};
}

// The entries of array field `key` (absent: none), each read by `read` at "<where>: key[i]".
template <class T, class Read>
void read_list(const FieldReader& f, const char* key, const std::string& where, std::vector<T>& out, Read read) {
  const json* list = f.optional(key);
  if (!list) return;
  if (!list->is_array()) fail(where, ": field '", key, "' must be an array");
  for (size_t i = 0; i < list->size(); ++i) out.push_back(read((*list)[i], where + ": " + key + "[" + std::to_string(i) + "]"));
}

GateResult gate_result_from_json(const json& j, const std::string& where) {
  if (!j.is_object()) fail(where, ": expected a JSON object (a gate result)");
  const FieldReader top(j, where + ": ");
  const std::string schema = top.str("schema");
  const bool v1 = schema == kGateResultSchemaV1;
  if (schema != kGateResultSchema && !v1)
    fail(where, ": field 'schema' is '", schema, "', expected '", kGateResultSchema, "' (or '", kGateResultSchemaV1, "')");
  GateResult r;
  r.gate = top.str("gate");
  // The gate name names a file (reports/<id>/gates/<gate>.json): a plain word only.
  bool word = !r.gate.empty() && r.gate.size() <= 40 && r.gate[0] >= 'a' && r.gate[0] <= 'z';
  for (char ch : r.gate) word &= (ch >= 'a' && ch <= 'z') || (ch >= '0' && ch <= '9') || ch == '_' || ch == '-';
  if (!word) fail(where, ": field 'gate' '", r.gate, "' is not a gate name (lower-case letters, digits, '-', '_')");
  const std::string w = where + ": gate " + r.gate;
  const FieldReader f(j, w + ": ");
  r.status = parse_status(f.str("status"), w);
  r.reason = f.str_or("reason");
  r.evidence = f.str_or("evidence");
  r.command = f.str_or("command");
  r.required = f.bool_or("required", true);
  r.needs_gpu = f.bool_or("needs_gpu", false);
  r.candidate_id = f.str_or("candidate_id");
  r.baseline_id = f.str_or("baseline_id");
  // Ids become paths (reports/<id>/): checked here, before anything reads them.
  if (!r.candidate_id.empty()) require_candidate_id(r.candidate_id, w, "field 'candidate_id'");
  if (!r.baseline_id.empty()) require_candidate_id(r.baseline_id, w, "field 'baseline_id'");
  r.started = f.str_or("started");
  r.duration_s = f.number_or_null("duration_s").value_or(0.0);
  if (const json* h = f.optional("host")) r.host = *h;
  if (const json* b = f.optional("binding")) {
    if (!b->is_object()) fail(w, ": field 'binding' must be an object");
    r.binding = *b;
  }
  if (const json* d = f.optional("details")) r.details = *d;
  read_list(f, "checks", w, r.checks, check_from_json);
  read_list(f, "rows", w, r.rows, row_from_json);
  read_list(f, "tables", w, r.tables, table_from_json);
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

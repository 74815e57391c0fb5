// The timing gate's typed figures (see timing_report.h).
#include "timing/timing_report.h"

#include <algorithm>
#include <array>
#include <map>

#include "util/text_format.h"

#include "util/error.h"

namespace pfx::gates {

using nlohmann::json;
using pfx::trace::DiffRow;

namespace {

using pfx::trace::kGateDiffKeys;
using pfx::trace::status_name;

std::string per_what(const TimingModel& m) {
  return m.diff.per_pass ? "per '" + m.diff.busy_range + "' pass" : "totals over each trace";
}

Cell delta_cell(const DiffRow& d) { return d.delta_percent ? number_cell(*d.delta_percent) : text_cell(status_name(d.status)); }

Row ns_row(const std::string& label, const DiffRow& d) {
  Row row;
  row.metric = d.key;
  row.label = label + " " + d.key + " (ns)";
  row.unit = "ns";
  row.format = kGrouped;
  row.baseline = number_cell(d.a_ns);
  row.candidate = number_cell(d.b_ns);
  row.delta = d.delta_ns;
  row.delta_pct = d.delta_percent;
  if (!d.delta_percent) row.note = status_name(d.status);
  row.noise_pct = d.noise_percent;
  return row;
}

// A row's judgement (timing_judge.h), where the model was judged; null otherwise.
using Judged = std::map<std::string, json>;
Judged judged_rows(const json& model, const char* list) {
  Judged out;
  for (const auto& row : model.value(list, json::array()))
    if (row.is_object() && row.contains("key") && row["key"].is_string()) out[row["key"].get<std::string>()] = row;
  return out;
}
const json* judged(const Judged* j, const std::string& key) {
  if (!j) return nullptr;
  auto it = j->find(key);
  return it == j->end() ? nullptr : &it->second;
}
Cell p_cell(const json* j) {
  return j && j->contains("p_value") && (*j)["p_value"].is_number() ? number_cell((*j)["p_value"].get<double>()) : Cell{};
}
Cell verdict_cell(const json* j) { return j ? text_cell(j->value("verdict", std::string("?"))) : Cell{}; }
std::optional<std::array<double, 2>> ci_of(const json* j) {
  if (!j || !j->contains("ci_pct") || !(*j)["ci_pct"].is_array() || (*j)["ci_pct"].size() != 2) return std::nullopt;
  return std::array<double, 2>{(*j)["ci_pct"][0].get<double>(), (*j)["ci_pct"][1].get<double>()};
}
bool significant(const json* j) {
  const std::string v = j ? j->value("verdict", std::string()) : "";
  return v == "SLOWER" || v == "FASTER";
}

Table kernel_table(const TimingModel& m, std::size_t index, const Judged* jk) {
  Table t;
  t.id = "kernels-" + std::to_string(index);
  t.title = "Per-kernel GPU time, " + m.model + " (median of " + std::to_string(m.diff.repetitions) + " traced runs each; " +
            (jk ? "significant movers first" : "top movers first") + ")";
  t.columns = {{"kernel", "", {}}, {"baseline", "ns", kGrouped}, {"candidate", "ns", kGrouped}, {"Δ", "", kSignedPercent},
               {"noise", "%", fixed_format(1)}};
  if (jk) t.columns.insert(t.columns.end(), {{"p", "", kSci}, {"verdict", "", {}}});
  std::vector<const DiffRow*> order;
  for (const auto& k : m.diff.kernels) order.push_back(&k);
  // Judged: significant rows first, each group by |Δns| (the combined diff's order).
  std::stable_partition(order.begin(), order.end(), [&](const DiffRow* k) { return significant(judged(jk, k->key)); });
  for (const DiffRow* k : order) {
    TableRow row{{text_cell(k->key), number_cell(k->a_ns), number_cell(k->b_ns), delta_cell(*k), number_cell(k->noise_percent)}};
    if (jk) row.cells.insert(row.cells.end(), {p_cell(judged(jk, k->key)), verdict_cell(judged(jk, k->key))});
    t.rows.push_back(row);
  }
  t.chart = {Chart::Kind::bars, "kernel", "baseline", "candidate", "Δ", "", "", "", "", 15};
  return t;
}

Table role_table(const TimingModel& m, std::size_t index, const Judged* jr) {
  Table t;
  t.id = "roles-" + std::to_string(index);
  t.title = "Per-role GPU time, " + m.model + " (median of " + std::to_string(m.diff.repetitions) + " traced runs, " +
            per_what(m) + ")";
  t.columns = {{"role", "", {}},
               {"baseline", "ns", kGrouped},
               {"candidate", "ns", kGrouped},
               {"Δ", "", kSignedPercent},
               {"noise", "%", fixed_format(1)}};
  if (jr) t.columns.insert(t.columns.end(), {{"CI low", "%", fixed_format(1)}, {"CI high", "%", fixed_format(1)}, {"verdict", "", {}}});
  t.columns.insert(t.columns.end(), {{"baseline", "TFLOP/s", fixed_format(1)},
                                     {"candidate", "TFLOP/s", fixed_format(1)},
                                     {"baseline", "GB/s", fixed_format(0)},
                                     {"candidate", "GB/s", fixed_format(0)}});
  auto opt_cell = [](const std::optional<double>& v) { return v ? number_cell(*v) : Cell{}; };
  for (const auto& d : m.diff.roles) {
    TableRow row{{text_cell(d.key), number_cell(d.a_ns), number_cell(d.b_ns), delta_cell(d), number_cell(d.noise_percent)}};
    if (jr) {
      const json* j = judged(jr, d.key);
      const auto ci = ci_of(j);
      row.cells.insert(row.cells.end(), {ci ? number_cell((*ci)[0]) : Cell{}, ci ? number_cell((*ci)[1]) : Cell{}, verdict_cell(j)});
    }
    row.cells.insert(row.cells.end(), {opt_cell(d.a_tflops()), opt_cell(d.b_tflops()), opt_cell(d.a_gbps()), opt_cell(d.b_gbps())});
    row.check = role_check_name(m.model, d.key);
    t.rows.push_back(row);
  }
  t.in_markdown = true;
  return t;
}

Row total_row(const TimingModel& m) {
  const auto& d = m.diff;
  Row total;
  total.metric = m.model + " GPU kernel time";
  total.label = total.metric + " (ns)";
  total.unit = "ns";
  total.format = kGrouped;
  total.baseline = number_cell(d.a_kernel_ns);
  total.candidate = number_cell(d.b_kernel_ns);
  total.delta = d.b_kernel_ns - d.a_kernel_ns;
  if (d.a_kernel_ns > 0) total.delta_pct = (d.b_kernel_ns / d.a_kernel_ns - 1) * 100;
  else total.note = "n/a";
  return total;
}

}  // namespace

std::string role_check_name(const std::string& model, const std::string& role) { return model + " role " + role; }

json to_json(const TimingModel& m) {
  json kernels = json::array(), roles = json::array();
  for (const auto& k : m.diff.kernels) kernels.push_back(json(pfx::trace::diff_row_to_json(k, kGateDiffKeys, false)));
  for (const auto& k : m.diff.roles) roles.push_back(json(pfx::trace::diff_row_to_json(k, kGateDiffKeys, true)));
  return {{"model", m.model}, {"kernels", kernels}, {"roles", roles}, {"baseline_kernel_ns", m.diff.a_kernel_ns},
          {"candidate_kernel_ns", m.diff.b_kernel_ns}, {"baseline_busy_ns", m.diff.a_busy_ns}, {"candidate_busy_ns", m.diff.b_busy_ns},
          {"reps", m.diff.repetitions}, {"prompt_tokens", m.prompt_tokens}, {"per_pass", m.diff.per_pass},
          {"busy_range", m.diff.busy_range}};
}

TimingModel timing_model_from_json(const json& j, const std::string& where) {
  if (!j.is_object()) fail(where, ": expected an object (one model's timing)");
  TimingModel m;
  try {
    m.model = j.value("model", std::string());
    m.prompt_tokens = j.value("prompt_tokens", 0);
    m.diff.a_kernel_ns = j.value("baseline_kernel_ns", 0.0);
    m.diff.b_kernel_ns = j.value("candidate_kernel_ns", 0.0);
    m.diff.a_busy_ns = j.value("baseline_busy_ns", 0.0);
    m.diff.b_busy_ns = j.value("candidate_busy_ns", 0.0);
    m.diff.repetitions = j.value("reps", std::size_t{0});
    m.diff.per_pass = j.value("per_pass", false);
    m.diff.busy_range = j.value("busy_range", std::string("prefill"));
  } catch (const json::exception& e) {
    fail(where, ": ", e.what());
  }
  for (const char* key : {"kernels", "roles"}) {
    const json rows = j.value(key, json::array());
    if (!rows.is_array()) fail(where, ": field '", key, "' must be an array");
    auto& out = std::string(key) == "kernels" ? m.diff.kernels : m.diff.roles;
    for (size_t i = 0; i < rows.size(); ++i) out.push_back(pfx::trace::diff_row_from_json(rows[i], kGateDiffKeys, where + "." + key + "[" + std::to_string(i) + "]"));
  }
  return m;
}

void add_timing_output(GateResult& r, const json& jm, std::size_t index) {
  const std::string where = "details.models[" + std::to_string(index) + "]";
  const TimingModel m = timing_model_from_json(jm, where);
  const Judged jk = judged_rows(jm, "kernels"), jr = judged_rows(jm, "roles");
  r.rows.push_back(total_row(m));
  // Kernels: the movers in their significance order (timing_judge.h), never a noisy |Δ| ranking.
  std::map<std::string, const DiffRow*> by_key;
  for (const auto& k : m.diff.kernels) by_key[k.key] = &k;
  size_t shown = 0;
  for (const auto& mover : jm.value("movers", json::array())) {
    const auto it = by_key.find(mover.value("key", std::string()));
    if (it == by_key.end() || shown == 5) continue;
    Row row = ns_row("kernel", *it->second);
    row.label += " " + mover.value("verdict", std::string()) + ", p " + sci(mover.value("p_value", 1.0));
    r.rows.push_back(row);
    ++shown;
  }
  if (shown == 0) {
    Row none;
    none.metric = m.model + " kernel movers";
    none.baseline = text_cell("");
    none.candidate = text_cell("no significant change (α " + fixed(jm.value("alpha", 0.05), 2) + ", " +
                               std::to_string(m.diff.repetitions) + " reps)");
    r.rows.push_back(none);
  }
  shown = 0;
  for (const auto& d : m.diff.roles) {
    const json* j = judged(&jr, d.key);
    if (!significant(j) || shown == 5) continue;
    Row row = ns_row("role", d);
    row.ci_pct = ci_of(j);
    row.check = role_check_name(m.model, d.key);
    r.rows.push_back(row);
    ++shown;
  }
  r.tables.push_back(kernel_table(m, index, &jk));
  r.tables.push_back(role_table(m, index, &jr));
}

void add_timing_output(GateResult& r, const TimingModel& m, std::size_t index) {
  const auto& d = m.diff;
  r.rows.push_back(total_row(m));
  for (size_t i = 0; i < d.kernels.size() && i < 5; ++i) r.rows.push_back(ns_row("kernel", d.kernels[i]));
  for (size_t i = 0; i < d.roles.size() && i < 5; ++i) {
    Row row = ns_row("role", d.roles[i]);
    row.check = role_check_name(m.model, d.roles[i].key);
    r.rows.push_back(row);
  }
  r.tables.push_back(kernel_table(m, index, nullptr));
  r.tables.push_back(role_table(m, index, nullptr));
}

void read_legacy_timing_output(GateResult& r) {
  if (!r.details.contains("models") || !r.details["models"].is_array()) return;
  const auto& models = r.details["models"];
  for (size_t i = 0; i < models.size(); ++i)
    add_timing_output(r, timing_model_from_json(models[i], "details.models[" + std::to_string(i) + "]"), i);
}

}  // namespace pfx::gates

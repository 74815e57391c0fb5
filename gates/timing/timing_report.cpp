// The timing gate's typed figures (see timing_report.h).
#include "timing/timing_report.h"

#include <algorithm>

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

Table kernel_table(const TimingModel& m, std::size_t index) {
  Table t;
  t.id = "kernels-" + std::to_string(index);
  t.title = "Per-kernel GPU time, " + m.model + " (median of " + std::to_string(m.diff.repetitions) +
            " traced runs each; top movers first)";
  t.columns = {{"kernel", "", {}}, {"baseline", "ns", kGrouped}, {"candidate", "ns", kGrouped}, {"Δ", "", kSignedPercent},
               {"noise", "%", fixed_format(1)}};
  for (const auto& k : m.diff.kernels)
    t.rows.push_back({{text_cell(k.key), number_cell(k.a_ns), number_cell(k.b_ns), delta_cell(k), number_cell(k.noise_percent)}});
  t.chart = {Chart::Kind::bars, "kernel", "baseline", "candidate", "Δ", "", "", "", "", 15};
  return t;
}

Table role_table(const TimingModel& m, std::size_t index) {
  Table t;
  t.id = "roles-" + std::to_string(index);
  t.title = "Per-role GPU time, " + m.model + " (median of " + std::to_string(m.diff.repetitions) + " traced runs, " +
            per_what(m) + ")";
  t.columns = {{"role", "", {}},
               {"baseline", "ns", kGrouped},
               {"candidate", "ns", kGrouped},
               {"Δ", "", kSignedPercent},
               {"noise", "%", fixed_format(1)},
               {"baseline", "TFLOP/s", fixed_format(1)},
               {"candidate", "TFLOP/s", fixed_format(1)},
               {"baseline", "GB/s", fixed_format(0)},
               {"candidate", "GB/s", fixed_format(0)}};
  auto opt_cell = [](const std::optional<double>& v) { return v ? number_cell(*v) : Cell{}; };
  for (const auto& d : m.diff.roles) {
    TableRow row{{text_cell(d.key), number_cell(d.a_ns), number_cell(d.b_ns), delta_cell(d), number_cell(d.noise_percent),
                  opt_cell(d.a_tflops()), opt_cell(d.b_tflops()), opt_cell(d.a_gbps()), opt_cell(d.b_gbps())}};
    row.check = role_check_name(m.model, d.key);
    t.rows.push_back(row);
  }
  t.in_markdown = true;
  return t;
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

void add_timing_output(GateResult& r, const TimingModel& m, std::size_t index) {
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
  r.rows.push_back(total);
  for (size_t i = 0; i < d.kernels.size() && i < 5; ++i) r.rows.push_back(ns_row("kernel", d.kernels[i]));
  for (size_t i = 0; i < d.roles.size() && i < 5; ++i) {
    Row row = ns_row("role", d.roles[i]);
    row.check = role_check_name(m.model, d.roles[i].key);
    r.rows.push_back(row);
  }
  r.tables.push_back(kernel_table(m, index));
  r.tables.push_back(role_table(m, index));
}

void read_legacy_timing_output(GateResult& r) {
  if (!r.details.contains("models") || !r.details["models"].is_array()) return;
  const auto& models = r.details["models"];
  for (size_t i = 0; i < models.size(); ++i)
    add_timing_output(r, timing_model_from_json(models[i], "details.models[" + std::to_string(i) + "]"), i);
}

}  // namespace pfx::gates

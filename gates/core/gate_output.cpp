// Text forms and the one JSON mapping of gate rows and tables (see gate_output.h and
// docs/schemas/gate-result.md).
#include "core/gate_output.h"

#include <cmath>

#include "util/error.h"
#include "util/json_read.h"
#include "util/text_format.h"

namespace pfx::gates {

using nlohmann::json;

int Table::column(const std::string& name) const {
  for (size_t i = 0; i < columns.size(); ++i)
    if (columns[i].name == name) return static_cast<int>(i);
  return -1;
}

std::string format_number(double v, const NumberFormat& f) {
  switch (f.style) {
    case NumberFormat::Style::grouped: return grouped(std::llround(v));
    case NumberFormat::Style::integer: return std::to_string(std::llround(v));
    case NumberFormat::Style::fixed: return fixed(v, f.decimals);
    case NumberFormat::Style::sci: return sci(v);
    case NumberFormat::Style::fraction: return percent(v);
    case NumberFormat::Style::signed_percent: return signed_percent(v);
  }
  return fixed(v, f.decimals);
}

std::string cell_text(const Cell& c, const NumberFormat& f) {
  if (!c.text.empty()) return c.text;
  auto one = [&](const std::optional<double>& v) { return v ? format_number(*v, f) : std::string("?"); };
  if (c.compared) return c.before == c.value ? one(c.value) : one(c.before) + " → " + one(c.value);
  return c.value ? format_number(*c.value, f) : std::string();
}

std::string delta_text(const Row& r) {
  if (!r.note.empty()) return r.note;
  if (r.delta_pct) return signed_percent(*r.delta_pct);
  return "";
}

std::string column_header(const Column& c) { return c.unit.empty() ? c.name : c.name + " " + c.unit; }

namespace {

const char* style_name(NumberFormat::Style s) {
  switch (s) {
    case NumberFormat::Style::grouped: return "grouped";
    case NumberFormat::Style::integer: return "integer";
    case NumberFormat::Style::fixed: return "fixed";
    case NumberFormat::Style::sci: return "sci";
    case NumberFormat::Style::fraction: return "fraction";
    case NumberFormat::Style::signed_percent: return "signed_percent";
  }
  return "fixed";
}

const char* chart_kind_name(Chart::Kind k) {
  switch (k) {
    case Chart::Kind::none: return "none";
    case Chart::Kind::bars: return "bars";
    case Chart::Kind::points: return "points";
  }
  return "none";
}

// The chart's column names and its value unit, by JSON key (both directions use this list).
constexpr std::pair<const char*, std::string Chart::*> kChartColumns[] = {
    {"label", &Chart::label}, {"baseline", &Chart::baseline}, {"candidate", &Chart::candidate}, {"delta", &Chart::delta},
    {"value", &Chart::value}, {"series", &Chart::series}, {"flag", &Chart::flag}, {"value_unit", &Chart::value_unit}};

json opt(const std::optional<double>& v) { return v ? json(*v) : json(nullptr); }

NumberFormat format_from_json(const json& j, const std::string& where) {
  const FieldReader r(j, where);
  NumberFormat f;
  const std::string s = r.str_or("style", "fixed");
  if (s == "grouped") f.style = NumberFormat::Style::grouped;
  else if (s == "integer") f.style = NumberFormat::Style::integer;
  else if (s == "fixed") f.style = NumberFormat::Style::fixed;
  else if (s == "sci") f.style = NumberFormat::Style::sci;
  else if (s == "fraction") f.style = NumberFormat::Style::fraction;
  else if (s == "signed_percent") f.style = NumberFormat::Style::signed_percent;
  else fail(where, ".style: '", s, "' is not one of grouped, integer, fixed, sci, fraction, signed_percent");
  f.decimals = static_cast<int>(r.number_or_null("decimals").value_or(1));
  return f;
}

Cell cell_from_json(const json& j, const std::string& where) {
  if (j.is_null()) return {};
  if (j.is_number()) return number_cell(j.get<double>());
  if (j.is_string()) return text_cell(j.get<std::string>());
  const FieldReader r(j, where);
  Cell c;
  c.value = r.number_or_null("value");
  c.compared = r.bool_or("compared", false);
  c.before = r.number_or_null("before");
  c.text = r.str_or("text");
  c.note = r.str_or("note");
  c.hint = r.str_or("hint");
  return c;
}

std::optional<Status> verdict_from(const FieldReader& r, const char* key, const std::string& where) {
  const std::string s = r.str_or(key);  // absent or null: no verdict of its own
  if (s.empty()) return std::nullopt;
  return parse_status(s, where);
}

Chart chart_from_json(const json& j, const std::string& where) {
  Chart c;
  if (j.is_null()) return c;
  const FieldReader r(j, where);
  const std::string kind = r.str_or("kind", "none");
  if (kind == "bars") c.kind = Chart::Kind::bars;
  else if (kind == "points") c.kind = Chart::Kind::points;
  else if (kind != "none") fail(where, ".kind: '", kind, "' is not one of none, bars, points");
  for (const auto& [key, member] : kChartColumns) c.*member = r.str_or(key);
  c.max_rows = static_cast<std::size_t>(r.number_or_null("max_rows").value_or(0));
  return c;
}

}  // namespace

json to_json(const NumberFormat& f) { return {{"style", style_name(f.style)}, {"decimals", f.decimals}}; }

json to_json(const Cell& c) {
  const bool plain = !c.compared && c.note.empty() && c.hint.empty();
  if (plain && c.text.empty()) return opt(c.value);
  if (plain && !c.value) return c.text;
  json j = json::object();
  if (c.value) j["value"] = *c.value;
  if (c.compared) {
    j["compared"] = true;
    j["before"] = opt(c.before);
  }
  if (!c.text.empty()) j["text"] = c.text;
  if (!c.note.empty()) j["note"] = c.note;
  if (!c.hint.empty()) j["hint"] = c.hint;
  return j;
}

json to_json(const Row& r) {
  json j = {{"metric", r.metric}, {"unit", r.unit}, {"format", to_json(r.format)}, {"baseline", to_json(r.baseline)},
            {"candidate", to_json(r.candidate)}, {"delta", opt(r.delta)}, {"delta_pct", opt(r.delta_pct)},
            {"noise_pct", opt(r.noise_pct)}, {"ci_pct", r.ci_pct ? json{(*r.ci_pct)[0], (*r.ci_pct)[1]} : json(nullptr)},
            {"verdict", r.verdict ? json(to_string(*r.verdict)) : json(nullptr)}, {"headline", r.headline}};
  if (!r.label.empty()) j["label"] = r.label;
  if (!r.note.empty()) j["note"] = r.note;
  if (!r.check.empty()) j["check"] = r.check;
  return j;
}

json to_json(const Table& t) {
  json cols = json::array();
  for (const auto& c : t.columns) cols.push_back({{"name", c.name}, {"unit", c.unit}, {"format", to_json(c.format)}});
  json rows = json::array();
  for (const auto& row : t.rows) {
    json cells = json::array();
    for (const auto& c : row.cells) cells.push_back(to_json(c));
    json jr = {{"cells", cells}};
    if (!row.check.empty()) jr["check"] = row.check;
    if (row.verdict) jr["verdict"] = to_string(*row.verdict);
    rows.push_back(jr);
  }
  json j = {{"id", t.id}, {"title", t.title}, {"columns", cols}, {"rows", rows}, {"in_markdown", t.in_markdown}};
  if (!t.note.empty()) j["note"] = t.note;
  if (t.chart.kind != Chart::Kind::none) {
    json c = {{"kind", chart_kind_name(t.chart.kind)}};
    for (const auto& [key, member] : kChartColumns)
      if (!(t.chart.*member).empty()) c[key] = t.chart.*member;
    if (t.chart.max_rows) c["max_rows"] = t.chart.max_rows;
    j["chart"] = c;
  }
  return j;
}

Row row_from_json(const json& j, const std::string& where) {
  const FieldReader r(j, where);
  Row row;
  r.read_present({{"metric", &row.metric}, {"label", &row.label}, {"unit", &row.unit}});
  if (const json* f = r.optional("format")) row.format = format_from_json(*f, r.path("format"));
  row.baseline = cell_from_json(j.value("baseline", json()), r.path("baseline"));
  row.candidate = cell_from_json(j.value("candidate", json()), r.path("candidate"));
  row.delta = r.number_or_null("delta");
  row.delta_pct = r.number_or_null("delta_pct");
  row.noise_pct = r.number_or_null("noise_pct");
  if (const json* ci = r.optional("ci_pct")) {
    if (!ci->is_array() || ci->size() != 2 || !(*ci)[0].is_number() || !(*ci)[1].is_number())
      fail(r.path("ci_pct"), ": expected [low, high]");
    row.ci_pct = std::array<double, 2>{(*ci)[0].get<double>(), (*ci)[1].get<double>()};
  }
  r.read_present({{"note", &row.note}, {"check", &row.check}});
  row.verdict = verdict_from(r, "verdict", r.path("verdict"));
  row.headline = r.bool_or("headline", false);
  return row;
}

Table table_from_json(const json& j, const std::string& where) {
  const FieldReader r(j, where);
  Table t;
  r.read_present({{"id", &t.id}, {"title", &t.title}, {"note", &t.note}, {"in_markdown", &t.in_markdown}});
  const json* cols = r.optional("columns");
  if (!cols || !cols->is_array()) fail(where, ": field 'columns' must be an array");
  for (size_t i = 0; i < cols->size(); ++i) {
    const std::string w = r.path("columns[" + std::to_string(i) + "]");
    const FieldReader c((*cols)[i], w);
    Column col{c.str_or("name"), c.str_or("unit")};
    if (const json* f = c.optional("format")) col.format = format_from_json(*f, w + ".format");
    t.columns.push_back(col);
  }
  const json* rows = r.optional("rows");
  if (!rows || !rows->is_array()) fail(where, ": field 'rows' must be an array");
  for (size_t i = 0; i < rows->size(); ++i) {
    const std::string w = r.path("rows[" + std::to_string(i) + "]");
    const FieldReader rr((*rows)[i], w);
    const json* cells = rr.optional("cells");
    if (!cells || !cells->is_array() || cells->size() != t.columns.size())
      fail(w, ": field 'cells' must be an array of ", t.columns.size(), " cells (one per column)");
    TableRow row;
    for (size_t k = 0; k < cells->size(); ++k) row.cells.push_back(cell_from_json((*cells)[k], w + ".cells[" + std::to_string(k) + "]"));
    row.check = rr.str_or("check");
    row.verdict = verdict_from(rr, "verdict", w + ".verdict");
    t.rows.push_back(std::move(row));
  }
  if (const json* c = r.optional("chart")) t.chart = chart_from_json(*c, r.path("chart"));
  return t;
}

}  // namespace pfx::gates

// Text forms and the one JSON mapping of gate rows and tables (see gate_output.h and
// docs/schemas/gate-result.md).
#include "core/gate_output.h"

#include <cmath>

#include "core/format.h"
#include "util/error.h"

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
    case NumberFormat::Style::fraction: return pct(v);
    case NumberFormat::Style::signed_percent: return signed_pct(v);
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
  if (r.delta_pct) return signed_pct(*r.delta_pct);
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

json opt(const std::optional<double>& v) { return v ? json(*v) : json(nullptr); }

// Typed reads of one object's fields; every error names where + the key.
class Reader {
 public:
  Reader(const json& j, std::string where) : j_(j), where_(std::move(where)) {
    if (!j_.is_object()) fail(where_, ": expected an object");
  }
  std::string str(const char* key, std::string dflt = "") const {
    if (!j_.contains(key) || j_[key].is_null()) return dflt;
    if (!j_[key].is_string()) fail(where_, ": field '", key, "' must be a string");
    return j_[key].get<std::string>();
  }
  std::optional<double> number(const char* key) const {
    if (!j_.contains(key) || j_[key].is_null()) return std::nullopt;
    if (!j_[key].is_number()) fail(where_, ": field '", key, "' must be a number or null");
    return j_[key].get<double>();
  }
  bool flag(const char* key) const {
    if (!j_.contains(key) || j_[key].is_null()) return false;
    if (!j_[key].is_boolean()) fail(where_, ": field '", key, "' must be true or false");
    return j_[key].get<bool>();
  }
  const json* get(const char* key) const { return j_.contains(key) && !j_[key].is_null() ? &j_[key] : nullptr; }
  std::string at(const std::string& key) const { return where_ + "." + key; }

 private:
  const json& j_;
  std::string where_;
};

NumberFormat format_from_json(const json& j, const std::string& where) {
  const Reader r(j, where);
  NumberFormat f;
  const std::string s = r.str("style", "fixed");
  if (s == "grouped") f.style = NumberFormat::Style::grouped;
  else if (s == "integer") f.style = NumberFormat::Style::integer;
  else if (s == "fixed") f.style = NumberFormat::Style::fixed;
  else if (s == "sci") f.style = NumberFormat::Style::sci;
  else if (s == "fraction") f.style = NumberFormat::Style::fraction;
  else if (s == "signed_percent") f.style = NumberFormat::Style::signed_percent;
  else fail(where, ".style: '", s, "' is not one of grouped, integer, fixed, sci, fraction, signed_percent");
  f.decimals = static_cast<int>(r.number("decimals").value_or(1));
  return f;
}

Cell cell_from_json(const json& j, const std::string& where) {
  if (j.is_null()) return {};
  if (j.is_number()) return number_cell(j.get<double>());
  if (j.is_string()) return text_cell(j.get<std::string>());
  const Reader r(j, where);
  Cell c;
  c.value = r.number("value");
  c.compared = r.flag("compared");
  c.before = r.number("before");
  c.text = r.str("text");
  c.note = r.str("note");
  c.hint = r.str("hint");
  return c;
}

std::optional<Status> verdict_from(const Reader& r, const char* key, const std::string& where) {
  const std::string s = r.str(key);
  if (s.empty()) return std::nullopt;
  return parse_status(s, where);
}

Chart chart_from_json(const json& j, const std::string& where) {
  Chart c;
  if (j.is_null()) return c;
  const Reader r(j, where);
  const std::string kind = r.str("kind", "none");
  if (kind == "bars") c.kind = Chart::Kind::bars;
  else if (kind == "points") c.kind = Chart::Kind::points;
  else if (kind != "none") fail(where, ".kind: '", kind, "' is not one of none, bars, points");
  c.label = r.str("label");
  c.baseline = r.str("baseline");
  c.candidate = r.str("candidate");
  c.delta = r.str("delta");
  c.value = r.str("value");
  c.series = r.str("series");
  c.flag = r.str("flag");
  c.value_unit = r.str("value_unit");
  c.max_rows = static_cast<std::size_t>(r.number("max_rows").value_or(0));
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
    for (const auto& [k, v] : {std::pair<const char*, const std::string*>{"label", &t.chart.label}, {"baseline", &t.chart.baseline},
                               {"candidate", &t.chart.candidate}, {"delta", &t.chart.delta}, {"value", &t.chart.value},
                               {"series", &t.chart.series}, {"flag", &t.chart.flag}, {"value_unit", &t.chart.value_unit}})
      if (!v->empty()) c[k] = *v;
    if (t.chart.max_rows) c["max_rows"] = t.chart.max_rows;
    j["chart"] = c;
  }
  return j;
}

Row row_from_json(const json& j, const std::string& where) {
  const Reader r(j, where);
  Row row;
  row.metric = r.str("metric");
  row.label = r.str("label");
  row.unit = r.str("unit");
  if (const json* f = r.get("format")) row.format = format_from_json(*f, r.at("format"));
  row.baseline = cell_from_json(j.value("baseline", json()), r.at("baseline"));
  row.candidate = cell_from_json(j.value("candidate", json()), r.at("candidate"));
  row.delta = r.number("delta");
  row.delta_pct = r.number("delta_pct");
  row.noise_pct = r.number("noise_pct");
  if (const json* ci = r.get("ci_pct")) {
    if (!ci->is_array() || ci->size() != 2 || !(*ci)[0].is_number() || !(*ci)[1].is_number())
      fail(r.at("ci_pct"), ": expected [low, high]");
    row.ci_pct = std::array<double, 2>{(*ci)[0].get<double>(), (*ci)[1].get<double>()};
  }
  row.note = r.str("note");
  row.check = r.str("check");
  row.verdict = verdict_from(r, "verdict", r.at("verdict"));
  row.headline = r.flag("headline");
  return row;
}

Table table_from_json(const json& j, const std::string& where) {
  const Reader r(j, where);
  Table t;
  t.id = r.str("id");
  t.title = r.str("title");
  t.note = r.str("note");
  t.in_markdown = r.flag("in_markdown");
  const json* cols = r.get("columns");
  if (!cols || !cols->is_array()) fail(where, ": field 'columns' must be an array");
  for (size_t i = 0; i < cols->size(); ++i) {
    const std::string w = r.at("columns[" + std::to_string(i) + "]");
    const Reader c((*cols)[i], w);
    Column col{c.str("name"), c.str("unit")};
    if (const json* f = c.get("format")) col.format = format_from_json(*f, w + ".format");
    t.columns.push_back(col);
  }
  const json* rows = r.get("rows");
  if (!rows || !rows->is_array()) fail(where, ": field 'rows' must be an array");
  for (size_t i = 0; i < rows->size(); ++i) {
    const std::string w = r.at("rows[" + std::to_string(i) + "]");
    const Reader rr((*rows)[i], w);
    const json* cells = rr.get("cells");
    if (!cells || !cells->is_array() || cells->size() != t.columns.size())
      fail(w, ": field 'cells' must be an array of ", t.columns.size(), " cells (one per column)");
    TableRow row;
    for (size_t k = 0; k < cells->size(); ++k) row.cells.push_back(cell_from_json((*cells)[k], w + ".cells[" + std::to_string(k) + "]"));
    row.check = rr.str("check");
    row.verdict = verdict_from(rr, "verdict", w + ".verdict");
    t.rows.push_back(std::move(row));
  }
  if (const json* c = r.get("chart")) t.chart = chart_from_json(*c, r.at("chart"));
  return t;
}

}  // namespace pfx::gates

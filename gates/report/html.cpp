// HTML + SVG rendering of a landing record (see html.h).
#include "report/html.h"

#include <algorithm>
#include <cmath>
#include <sstream>

#include "junit/xml.h"
#include "report/markdown.h"
#include "report/table_columns.h"
#include "util/text_format.h"

namespace pfx::gates {

using nlohmann::json;

namespace {

std::string esc(const std::string& s) { return xml_escape(s); }

std::string css_class(Status s) {
  switch (s) {
    case Status::Pass: return "pass";
    case Status::Fail: return "fail";
    case Status::Skipped: return "skip";
    case Status::Inconclusive: return "inc";
    case Status::Waived: return "waived";
  }
  return "";
}

std::string verdict_class(Verdict v) { return v == Verdict::Pass ? "pass" : (v == Verdict::Fail ? "fail" : "inc"); }

std::string empty_chart(const std::string& id, const std::string& title, const std::string& why) {
  std::ostringstream o;
  o << "<figure><figcaption>" << esc(title) << "</figcaption><svg class=\"chart\" id=\"" << id
    << "\" data-empty=\"1\" width=\"640\" height=\"60\" viewBox=\"0 0 640 60\" role=\"img\"><text x=\"10\" y=\"35\" class=\"muted\">"
    << esc(why.size() > 100 ? why.substr(0, 97) + "..." : why) << "</text><title>" << esc(why) << "</title></svg></figure>\n";
  return o.str();
}

const Cell* cell_at(const Table& t, const TableRow& row, const std::string& column) {
  const int i = t.column(column);
  return i >= 0 && static_cast<size_t>(i) < row.cells.size() ? &row.cells[static_cast<size_t>(i)] : nullptr;
}
double number_at(const Table& t, const TableRow& row, const std::string& column) {
  const Cell* c = cell_at(t, row, column);
  return c && c->value ? *c->value : 0.0;
}
std::string text_at(const Table& t, const TableRow& row, const std::string& column) {
  const Cell* c = cell_at(t, row, column);
  return c ? cell_text(*c, t.columns[static_cast<size_t>(t.column(column))].format) : std::string();
}
std::string unit_of(const Table& t, const std::string& column) {
  const int i = t.column(column);
  return i >= 0 ? t.columns[static_cast<size_t>(i)].unit : std::string();
}

// Horizontal grouped bars: per row, the baseline bar (grey) over the candidate bar (blue), with Δ.
std::string bars_chart(const Table& t) {
  std::vector<const TableRow*> rows;
  for (const auto& row : t.rows)
    if (!t.chart.max_rows || rows.size() < t.chart.max_rows) rows.push_back(&row);
  double vmax = 1;
  for (const TableRow* row : rows)
    vmax = std::max({vmax, number_at(t, *row, t.chart.baseline), number_at(t, *row, t.chart.candidate)});
  const int label_w = 260, bar_w = 300, row_h = 30;
  const int h = static_cast<int>(rows.size()) * row_h + 30;
  const std::string unit = unit_of(t, t.chart.baseline);
  std::ostringstream o;
  o << "<figure><figcaption>" << esc(t.title) << "</figcaption>\n<svg class=\"chart\" id=\"chart-" << esc(t.id) << "\" width=\"720\" height=\""
    << h << "\" viewBox=\"0 0 720 " << h << "\" role=\"img\">\n";
  int y = 10;
  for (const TableRow* row : rows) {
    const double a = number_at(t, *row, t.chart.baseline), b = number_at(t, *row, t.chart.candidate);
    const int wa = static_cast<int>(std::round(a / vmax * bar_w)), wb = static_cast<int>(std::round(b / vmax * bar_w));
    std::string key = text_at(t, *row, t.chart.label);
    if (key.size() > 38) key = key.substr(0, 36) + "…";
    o << "<text x=\"" << label_w - 6 << "\" y=\"" << y + 15 << "\" text-anchor=\"end\">" << esc(key) << "</text>";
    o << "<rect class=\"bar base\" x=\"" << label_w << "\" y=\"" << y << "\" width=\"" << std::max(1, wa) << "\" height=\"11\"><title>baseline "
      << text_at(t, *row, t.chart.baseline) << " " << esc(unit) << "</title></rect>";
    o << "<rect class=\"bar cand\" x=\"" << label_w << "\" y=\"" << y + 12 << "\" width=\"" << std::max(1, wb)
      << "\" height=\"11\"><title>candidate " << text_at(t, *row, t.chart.candidate) << " " << esc(unit) << "</title></rect>";
    // Whiskers: ± the row's run-to-run spread (its "noise" column, % from the repetitions' samples).
    int reach = std::max(wa, wb);
    if (t.column("noise") >= 0 && number_at(t, *row, "noise") > 0) {
      const double n = number_at(t, *row, "noise") / 100.0;
      for (const auto& [v, top] : {std::pair{a, y}, std::pair{b, y + 12}}) {
        const double lo = v * (1 - n) / vmax * bar_w, hi = v * (1 + n) / vmax * bar_w;
        o << "<line class=\"whisker\" x1=\"" << fixed(label_w + lo, 1) << "\" x2=\"" << fixed(label_w + hi, 1) << "\" y1=\"" << top + 5.5
          << "\" y2=\"" << top + 5.5 << "\"><title>±" << fixed(n * 100, 1) << "% run-to-run</title></line>";
        reach = std::max(reach, static_cast<int>(std::ceil(hi)));
      }
    }
    o << "<text x=\"" << label_w + reach + 6 << "\" y=\"" << y + 17 << "\" class=\"delta\">" << esc(text_at(t, *row, t.chart.delta))
      << "</text>\n";
    y += row_h;
  }
  o << "<rect class=\"bar base\" x=\"10\" y=\"" << h - 14 << "\" width=\"10\" height=\"10\"/><text x=\"24\" y=\"" << h - 5
    << "\">baseline</text><rect class=\"bar cand\" x=\"100\" y=\"" << h - 14 << "\" width=\"10\" height=\"10\"/><text x=\"114\" y=\""
    << h - 5 << "\">candidate</text></svg></figure>\n";
  return o.str();
}

// A judged before → after table (timing's per-role GPU time) as two stacked bars, baseline over
// candidate, one segment per row (colour = row; the largest 9 named, the rest "other"). A row as
// large as (90% or more of) all the other rows together is an enclosing range (the whole
// "prefill"), not a part: it is left out of the stack and named under it.
std::string stacked_chart(const Table& t) {
  const auto pair = before_after_columns(t);
  if (!pair) return "";
  struct Part {
    std::string label;
    double a = 0, b = 0;
  };
  std::vector<Part> parts;
  for (const auto& row : t.rows) {
    if (row.check.empty() || row.cells.size() <= std::max(pair->first, pair->second) || row.cells.empty()) continue;
    const Cell &a = row.cells[pair->first], &b = row.cells[pair->second];
    if (!a.value && !b.value) continue;
    parts.push_back({cell_text(row.cells[0], t.columns[0].format), a.value.value_or(0), b.value.value_or(0)});
  }
  if (parts.size() < 2) return "";
  double sa = 0, sb = 0;
  for (const auto& p : parts) sa += p.a, sb += p.b;
  std::vector<std::string> enclosing;
  std::vector<Part> kept;
  for (const auto& p : parts) {
    if (p.a >= 0.9 * (sa - p.a) || p.b >= 0.9 * (sb - p.b)) enclosing.push_back(p.label);
    else kept.push_back(p);
  }
  std::stable_sort(kept.begin(), kept.end(), [](const Part& x, const Part& y) { return x.b > y.b; });
  if (kept.size() > 10) {
    Part other{"other (" + std::to_string(kept.size() - 9) + ")"};
    for (size_t i = 9; i < kept.size(); ++i) other.a += kept[i].a, other.b += kept[i].b;
    kept.resize(9);
    kept.push_back(other);
  }
  double ta = 0, tb = 0;
  for (const auto& p : kept) ta += p.a, tb += p.b;
  const double vmax = std::max({ta, tb, 1.0});
  static const char* kPalette[] = {"#0969da", "#bf8700", "#1a7f37", "#cf222e", "#8250df", "#1b7c83", "#bc4c00", "#6e7781", "#953800", "#a5b4c4"};
  const std::string unit = t.columns[pair->first].unit;
  const int label_w = 90, bar_w = 500, legend_rows = static_cast<int>((kept.size() + 2) / 3);
  const int h = 20 + 2 * 34 + 10 + legend_rows * 18 + (enclosing.empty() ? 0 : 18);
  std::ostringstream o;
  o << "<figure><figcaption>" << esc(t.title) << " — stacked</figcaption>\n<svg class=\"chart stacked\" id=\"chart-" << esc(t.id)
    << "-stacked\" width=\"720\" height=\"" << h << "\" viewBox=\"0 0 720 " << h << "\" role=\"img\">\n";
  int y = 12;
  for (const auto& [side, total] : {std::pair{"baseline", ta}, std::pair{"candidate", tb}}) {
    o << "<text x=\"" << label_w - 6 << "\" y=\"" << y + 17 << "\" text-anchor=\"end\">" << side << "</text>";
    double x = label_w;
    for (size_t i = 0; i < kept.size(); ++i) {
      const double v = side[0] == 'b' ? kept[i].a : kept[i].b, w = v / vmax * bar_w;
      o << "<rect class=\"seg\" x=\"" << fixed(x, 1) << "\" y=\"" << y << "\" width=\"" << fixed(std::max(w, 0.0), 1)
        << "\" height=\"26\" fill=\"" << kPalette[i % 10] << "\"><title>" << esc(kept[i].label) << ": " << format_number(v, kGrouped) << " "
        << esc(unit) << " (" << side << ")</title></rect>";
      x += w;
    }
    o << "<text x=\"" << fixed(x + 6, 1) << "\" y=\"" << y + 17 << "\">" << format_number(total, kGrouped) << " " << esc(unit) << "</text>\n";
    y += 34;
  }
  y += 10;
  for (size_t i = 0; i < kept.size(); ++i) {
    const int lx = 10 + static_cast<int>(i % 3) * 236, ly = y + static_cast<int>(i / 3) * 18;
    std::string name = kept[i].label.size() > 30 ? kept[i].label.substr(0, 28) + "…" : kept[i].label;
    o << "<rect x=\"" << lx << "\" y=\"" << ly << "\" width=\"10\" height=\"10\" fill=\"" << kPalette[i % 10] << "\"/><text x=\"" << lx + 14
      << "\" y=\"" << ly + 9 << "\">" << esc(name) << "</text>";
  }
  if (!enclosing.empty()) {
    std::string names;
    for (const auto& e : enclosing) names += (names.empty() ? "" : ", ") + e;
    o << "<text x=\"10\" y=\"" << h - 6 << "\" class=\"muted\">not stacked (encloses the others): " << esc(names) << "</text>";
  }
  o << "\n</svg></figure>\n";
  return o.str();
}

// Samples as dots in row order: series "aa" (A/A), "baseline", "candidate"; flagged ones hollow.
std::string points_chart(const Table& t) {
  struct Pt {
    double v;
    std::string cls, label;
    bool flagged;
  };
  std::vector<Pt> pts;
  for (const auto& row : t.rows) {
    const std::string series = text_at(t, row, t.chart.series);
    pts.push_back({number_at(t, row, t.chart.value), series == "aa" ? "aa" : series == "baseline" ? "base" : "cand",
                   text_at(t, row, t.chart.label), number_at(t, row, t.chart.flag) != 0});
  }
  double lo = 1e300, hi = 0;
  for (const auto& p : pts) {
    lo = std::min(lo, p.v);
    hi = std::max(hi, p.v);
  }
  if (hi <= lo) hi = lo + 1;
  const double pad = (hi - lo) * 0.1;
  lo -= pad;
  hi += pad;
  const std::string unit = t.chart.value_unit;
  const int W = 720, H = 260, x0 = 70, y0 = 20, pw = W - x0 - 20, ph = H - y0 - 50;
  std::ostringstream o;
  o << "<figure><figcaption>" << esc(t.title) << "</figcaption>\n<svg class=\"chart\" id=\"chart-" << esc(t.id) << "\" width=\"" << W
    << "\" height=\"" << H << "\" viewBox=\"0 0 " << W << " " << H << "\" role=\"img\">\n";
  o << "<line class=\"axis\" x1=\"" << x0 << "\" y1=\"" << y0 << "\" x2=\"" << x0 << "\" y2=\"" << y0 + ph << "\"/>";
  o << "<line class=\"axis\" x1=\"" << x0 << "\" y1=\"" << y0 + ph << "\" x2=\"" << x0 + pw << "\" y2=\"" << y0 + ph << "\"/>";
  for (int k = 0; k <= 4; ++k) {
    const double v = lo + (hi - lo) * k / 4;
    const int y = y0 + ph - static_cast<int>(ph * k / 4.0);
    o << "<text x=\"" << x0 - 6 << "\" y=\"" << y + 4 << "\" text-anchor=\"end\">" << fixed(v, 1) << "</text>";
  }
  for (size_t i = 0; i < pts.size(); ++i) {
    const double x = x0 + (pts.size() == 1 ? pw / 2.0 : pw * double(i) / double(pts.size() - 1));
    const double y = y0 + ph - (pts[i].v - lo) / (hi - lo) * ph;
    o << "<circle class=\"pt " << pts[i].cls << (pts[i].flagged ? " throttled" : "") << "\" cx=\"" << fixed(x, 1) << "\" cy=\""
      << fixed(y, 1) << "\" r=\"4\"><title>" << esc(pts[i].label) << " " << fixed(pts[i].v, 2) << " " << esc(unit) << "</title></circle>";
  }
  o << "\n<circle class=\"pt aa\" cx=\"80\" cy=\"" << H - 12 << "\" r=\"4\"/><text x=\"90\" y=\"" << H - 8
    << "\">A/A (baseline twice)</text><circle class=\"pt base\" cx=\"260\" cy=\"" << H - 12 << "\" r=\"4\"/><text x=\"270\" y=\"" << H - 8
    << "\">baseline</text><circle class=\"pt cand\" cx=\"380\" cy=\"" << H - 12 << "\" r=\"4\"/><text x=\"390\" y=\"" << H - 8
    << "\">candidate</text><text x=\"" << x0 << "\" y=\"12\">" << esc(unit) << "</text></svg></figure>\n";
  return o.str();
}

// A row whose compared cells (baseline → candidate in one column) all agree; false for a row
// without any compared cell (nothing to call unchanged).
bool unchanged(const TableRow& row) {
  bool compared = false;
  for (const auto& c : row.cells) {
    if (!c.compared) continue;
    compared = true;
    if (!c.value || !c.before || *c.value != *c.before) return false;
  }
  return compared;
}

// A gate's table; rows a check judged are coloured by its status, which a last column also names.
std::string html_table(const Table& t) {
  const bool judged = std::any_of(t.rows.begin(), t.rows.end(), [](const TableRow& row) { return row.verdict.has_value(); });
  std::ostringstream o;
  o << "<h3>" << esc(t.title) << "</h3>\n<table class=\"" << esc(t.id) << "\"><tr>";
  for (const auto& c : t.columns) o << "<th>" << esc(column_header(c)) << "</th>";
  if (judged) o << "<th>verdict</th>";
  o << "</tr>\n";
  auto header = [&](std::ostringstream& out) {
    out << "<tr>";
    for (const auto& c : t.columns) out << "<th>" << esc(column_header(c)) << "</th>";
    if (judged) out << "<th>verdict</th>";
    out << "</tr>\n";
  };
  auto print_row = [&](std::ostringstream& out, const TableRow& row) {
    out << "<tr" << (row.verdict ? " class=\"" + css_class(*row.verdict) + "\"" : std::string()) << ">";
    for (size_t i = 0; i < t.columns.size() && i < row.cells.size(); ++i) {
      const Cell& c = row.cells[i];
      out << "<td" << (c.hint.empty() ? std::string() : " title=\"" + esc(c.hint) + "\"") << ">" << esc(cell_text(c, t.columns[i].format))
          << (c.note.empty() ? std::string() : " <em>(" + esc(c.note) + ")</em>") << "</td>";
    }
    if (judged) out << "<td>" << (row.verdict ? to_string(*row.verdict) : "") << "</td>";
    out << "</tr>\n";
  };
  // A table of compared cells (ptxas: "85 → 87") shows the rows that changed, or that a check did
  // not pass; the unchanged rest is folded below it.
  std::ostringstream folded;
  size_t n_folded = 0;
  for (const auto& row : t.rows) {
    if (unchanged(row) && (!row.verdict || *row.verdict == Status::Pass)) {
      print_row(folded, row);
      ++n_folded;
    } else {
      print_row(o, row);
    }
  }
  o << "</table>\n";
  if (n_folded) {
    o << "<details class=\"unchanged\"><summary>" << n_folded << " unchanged rows</summary>\n<table class=\"" << esc(t.id) << " folded\">";
    header(o);
    o << folded.str() << "</table></details>\n";
  }
  if (!t.note.empty()) o << "<p>" << esc(t.note) << "</p>\n";
  return o.str();
}

bool declares(const DeclaredFigure& f, const Table& t) { return t.id == f.id || t.id.rfind(f.id + "-", 0) == 0; }

// What the gate's declared figure would show, and why it does not: "no kernel timing: timing gate
// SKIPPED — no GPU" / "… not run".
std::string missing_reason(const DeclaredFigure& f, const std::string& gate, const GateResult* g) {
  return f.missing + ": " + gate + " gate " + (g ? std::string(to_string(g->status)) + " — " + g->reason : std::string("not run"));
}

// Figures first (every chart, in gate order, a placeholder where a declared one is missing), then
// the gates' tables in gate order.
std::string gate_figures(const LandingRecord& r) {
  std::ostringstream figures, tables;
  std::vector<const GateResult*> order;
  for (const auto& info : gate_catalog()) order.push_back(r.gate(info.name));
  for (const auto& g : r.gates)
    if (!gate_info(g.gate)) order.push_back(&g);
  size_t k = 0;
  for (const GateResult* g : order) {
    const GateInfo* info = k < gate_catalog().size() ? &gate_catalog()[k] : nullptr;
    ++k;
    const std::string name = info ? info->name : g->gate;
    for (const auto& f : info ? info->figures : std::vector<DeclaredFigure>{}) {
      bool drawn = false;
      for (const auto& t : g ? g->tables : std::vector<Table>{}) drawn |= declares(f, t) && (t.chart.kind != Chart::Kind::none) == f.chart;
      if (drawn) continue;
      if (f.chart) figures << empty_chart("chart-" + f.id, f.title, missing_reason(f, name, g));
      else tables << "<h3>" << esc(f.title) << "</h3>\n<p class=\"muted\">" << esc(missing_reason(f, name, g)) << "</p>\n";
    }
    if (!g) continue;
    for (const auto& t : g->tables) {
      if (t.chart.kind == Chart::Kind::bars) figures << bars_chart(t);
      else if (t.chart.kind == Chart::Kind::points) figures << points_chart(t);
      else {
        // A judged before → after table gets its stacked bars too (timing's per-role GPU time).
        if (const auto chart = stacked_chart(t); !chart.empty()) figures << chart;
        tables << html_table(t);
      }
    }
  }
  return figures.str() + tables.str();
}

const char* kStyle = R"(
body{font:14px/1.45 system-ui,-apple-system,"Segoe UI",sans-serif;margin:24px auto;max-width:1000px;color:#1b1f24;padding:0 16px}
h1{font-size:22px}h2{font-size:17px;margin-top:28px;border-bottom:1px solid #d0d7de}
.badge{display:inline-block;padding:2px 10px;border-radius:10px;font-weight:600;color:#fff}
.badge.pass{background:#1a7f37}.badge.fail{background:#cf222e}.badge.inc{background:#9a6700}.badge.skip{background:#6e7781}.badge.waived{background:#8250df}
table{border-collapse:collapse;margin:8px 0;font-size:13px}td,th{border:1px solid #d0d7de;padding:3px 8px;text-align:left;vertical-align:top}
tr.fail td{background:#ffebe9}tr.waived td{background:#fbefff}tr.skip td,tr.inc td{background:#fff8c5}
tr.loosened td{background:#ffebe9;font-weight:600}
.muted{color:#6e7781}code,pre{font-family:ui-monospace,monospace;font-size:12px}pre{background:#f6f8fa;padding:8px;overflow:auto}
svg.chart text{font-size:11px;fill:#1b1f24}svg.chart text.muted{fill:#6e7781;font-size:13px}
.bar.base{fill:#8c959f}.bar.cand{fill:#0969da}.axis{stroke:#57606a}.delta{fill:#57606a}
.whisker{stroke:#1b1f24;stroke-width:1.2}.pt.base{fill:#8c959f}.pt.cand{fill:#0969da}.pt.aa{fill:#bf8700}.pt.throttled{fill:none;stroke:#cf222e;stroke-width:1.5}
figure{margin:12px 0}figcaption{font-weight:600;margin-bottom:4px}nav{margin:6px 0 14px}
)";

// Marks the page as rendered once every chart has laid out with a real size, and reports any
// chart that did not (the headless-browser test reads data-rendered and the console).
const char* kCheckScript = R"(
(function(){
  var charts=document.querySelectorAll('svg.chart'),ok=0,bad=[];
  charts.forEach(function(c){var b=c.getBBox();if(b.width>0&&b.height>0){ok++;}else{bad.push(c.id);}});
  document.documentElement.setAttribute('data-charts',String(charts.length));
  document.documentElement.setAttribute('data-rendered',bad.length===0&&charts.length>0?'ok':'missing:'+bad.join(','));
  if(bad.length){console.error('charts without layout: '+bad.join(','));}
})();
)";

}  // namespace

std::string render_html(const LandingRecord& r) {
  std::ostringstream o;
  const std::string cand = r.candidate.value("id", std::string()), base = r.baseline.value("id", std::string());
  o << "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n<title>" << r.seq << " · landing " << esc(cand) << " vs "
    << esc(base) << " — " << to_string(r.verdict) << "</title>\n<style>" << kStyle << "</style></head>\n<body>\n";
  o << "<h1>" << r.seq << " · landing " << esc(cand) << " vs " << esc(base) << " <span class=\"badge " << verdict_class(r.verdict) << "\">"
    << to_string(r.verdict) << "</span></h1>\n";
  o << "<nav>" << (r.prev.empty() ? std::string("(first)") : "<a href=\"../" + esc(r.prev) + "/landing.html\">← " + esc(r.prev) + "</a>")
    << " · <a href=\"../index.html\">Index</a> (<a href=\"../index.md\">list</a>) · "
    << (r.next.empty() ? std::string("(newest when written)") : "<a href=\"../" + esc(r.next) + "/landing.html\">" + esc(r.next) + " →</a>") << "</nav>\n";
  o << "<p><strong>Verdict: " << to_string(r.verdict) << "</strong> — " << esc(r.verdict_reason) << "</p>\n";

  o << "<h2>1. Verification</h2>\n<table><tr><th>gate</th><th>status</th><th>evidence</th><th>reason</th></tr>\n";
  for (const auto& g : r.gates)
    o << "<tr class=\"" << css_class(g.status) << "\"><td>" << esc(g.gate) << (g.required ? "" : " <em>(optional)</em>") << "</td><td><span class=\"badge "
      << css_class(g.status) << "\">" << to_string(g.status) << "</span></td><td>" << esc(g.evidence) << "</td><td>" << esc(g.reason)
      << (g.command.empty() ? "" : "<br><code>" + esc(g.command) + "</code>") << "</td></tr>\n";
  for (const auto& name : r.enabled_gates)
    if (!r.gate(name)) o << "<tr class=\"inc\"><td>" << esc(name) << "</td><td>NOT RUN</td><td></td><td>no result yet</td></tr>\n";
  o << "</table>\n";
  if (const auto* b = r.gate("build"); b && b->details.contains("errors"))
    for (const auto& [side, text] : b->details["errors"].items())
      o << "<p>" << esc(side) << " build error:</p><pre>" << esc(text.get<std::string>()) << "</pre>\n";

  o << "<h2>2. Results</h2>\n";
  const auto rows = r.result_rows();
  if (rows.empty()) o << "<p class=\"muted\">No before → after figures: the measuring gates did not run here.</p>\n";
  else {
    o << "<table><tr><th>metric</th><th>before</th><th>after</th><th>Δ</th></tr>\n";
    for (const Row* row : rows)
      o << "<tr><td>" << esc(row->shown_label()) << "</td><td>" << esc(cell_text(row->baseline, row->format)) << "</td><td>"
        << esc(cell_text(row->candidate, row->format)) << "</td><td>" << esc(delta_text(*row)) << "</td></tr>\n";
    o << "</table>\n";
  }
  o << "<h2>3. Figures</h2>\n" << gate_figures(r);

  o << "<h2>4. Gate profile</h2>\n<p>Candidate's <code>" << esc(r.profile_path) << "</code> governs this landing. "
    << esc(r.baseline_profile_note) << "</p>\n";
  if (r.profile_changes.empty()) o << "<p>No difference from the baseline's profile.</p>\n";
  else {
    o << "<table><tr><th>key</th><th>baseline</th><th>candidate</th><th>note</th></tr>\n";
    for (const auto& c : r.profile_changes)
      o << "<tr" << (c.loosened ? " class=\"loosened\"" : "") << "><td>" << esc(c.key) << "</td><td>" << esc(c.before.empty() ? "—" : c.before)
        << "</td><td>" << esc(c.after.empty() ? "—" : c.after) << "</td><td>" << (c.loosened ? "⚠ LOOSENED: " + esc(c.note) : esc(c.kind))
        << "</td></tr>\n";
    o << "</table>\n";
  }

  o << "<h2>5. Environment</h2>\n<table>\n";
  const auto& e = r.environment;
  auto row = [&](const std::string& k, const std::string& v) { o << "<tr><th>" << esc(k) << "</th><td>" << esc(v) << "</td></tr>\n"; };
  row("host", e.value("host", std::string("?")) + " — " + e.value("cpu", std::string("?")));
  row("OS", e.value("os", std::string("?")));
  if (e.contains("gpu") && e["gpu"].is_object()) {
    const auto& g = e["gpu"];
    row("GPU", g.value("name", std::string("?")) + ", driver " + g.value("driver_version", std::string("?")) + ", CUDA (driver) " +
                   g.value("cuda_driver_version", std::string("?")) + " (via " + g.value("source", std::string("?")) + ")");
  } else {
    row("GPU", "none: " + e.value("gpu_unavailable_reason", std::string("no GPU")));
  }
  row("CUDA toolkit", e.value("nvcc", std::string("?")));
  row("baseline", r.baseline.value("sha", std::string()) + " (" + r.baseline.value("rev", std::string()) + ")");
  row("candidate", r.candidate.value("sha", std::string()) + " (" + r.candidate.value("rev", std::string()) + ")" +
                       (r.candidate.value("worktree", false) ? " + uncommitted change" : ""));
  row("time", r.created);
  for (const auto& g : r.gates)
    if (g.host.is_object() && g.host.value("host", std::string()) != e.value("host", std::string()) && g.host.contains("host"))
      row(g.gate + " ran on", g.host.value("host", std::string()));
  o << "</table>\n<p class=\"muted\">Every number and raw sample: landing.json (schema " << kLandingSchema << ").</p>\n";
  o << "<script>" << kCheckScript << "</script>\n</body></html>\n";
  return relative_paths(o.str(), r.repo);  // reproduce commands as a reader types them in their checkout
}

}  // namespace pfx::gates

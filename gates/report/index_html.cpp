// reports/index.html: the ledger as one self-contained page (see index_html.h). Inline SVG, no
// scripts or fonts from the network; a small inline script only checks that every chart laid out
// (data-rendered / data-charts on <body>, what the Chromium test reads; charts folded in a closed
// <details> have no size and are not asked to).
#include "report/index_html.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <sstream>

namespace pfx::gates {

namespace {

std::string esc(const std::string& s) {
  std::string o;
  for (char c : s) {
    switch (c) {
      case '&': o += "&amp;"; break;
      case '<': o += "&lt;"; break;
      case '>': o += "&gt;"; break;
      case '"': o += "&quot;"; break;
      default: o += c;
    }
  }
  return o;
}

std::string num(double v) {
  char buf[64];
  const double a = std::fabs(v);
  if (a >= 1e3) std::snprintf(buf, sizeof buf, "%.0f", v);
  else if (a >= 100) std::snprintf(buf, sizeof buf, "%.1f", v);
  else if (a >= 1) std::snprintf(buf, sizeof buf, "%.3g", v);
  else std::snprintf(buf, sizeof buf, "%.3g", v);
  std::string s = buf;
  // Thousands separators for big integers ("27,407").
  if (a >= 1e4 && s.find('.') == std::string::npos) {
    std::string g;
    const size_t start = s[0] == '-' ? 1 : 0;
    for (size_t i = start; i < s.size(); ++i) {
      if (i > start && (s.size() - i) % 3 == 0) g += ',';
      g += s[i];
    }
    s = (start ? "-" : "") + g;
  }
  return s;
}

std::string coord(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f", v);
  return buf;
}

// "Nice" axis ticks covering [lo, hi].
std::vector<double> ticks(double lo, double hi, int want = 4) {
  if (!(hi > lo)) {
    const double pad = std::fabs(lo) > 0 ? std::fabs(lo) * 0.01 : 1.0;
    lo -= pad;
    hi += pad;
  }
  const double raw = (hi - lo) / want;
  const double mag = std::pow(10.0, std::floor(std::log10(raw)));
  double step = mag;
  for (double m : {1.0, 2.0, 2.5, 5.0, 10.0})
    if (m * mag >= raw) {
      step = m * mag;
      break;
    }
  std::vector<double> t;
  for (double v = std::floor(lo / step) * step; v <= hi + step * 0.5; v += step) t.push_back(v);
  return t;
}

constexpr double kWidth = 760, kHeight = 250, kLeft = 70, kRight = 60, kTop = 22, kBottom = 58;

std::string chart(const History& h, const HistorySeries& s, size_t index) {
  // x: the series' commits in ledger commit order; y: every value and sample.
  std::vector<double> all;
  for (const auto& p : s.points)
    for (const auto& m : p.measurements) {
      all.push_back(m.value);
      all.insert(all.end(), m.samples.begin(), m.samples.end());
    }
  if (all.empty()) return "";
  const auto [mn, mx] = std::minmax_element(all.begin(), all.end());
  const auto ty = ticks(*mn, *mx);
  const double y0 = ty.front(), y1 = ty.back();
  const double plot_w = kWidth - kLeft - kRight, plot_h = kHeight - kTop - kBottom;
  auto X = [&](size_t i) { return kLeft + (s.points.size() == 1 ? plot_w / 2 : plot_w * static_cast<double>(i) / static_cast<double>(s.points.size() - 1)); };
  auto Y = [&](double v) { return kTop + plot_h * (1.0 - (v - y0) / (y1 - y0)); };
  std::ostringstream o;
  o << "<figure class=\"trend\" id=\"series-" << index << "\"><figcaption>" << esc(s.key)
    << (s.unit.empty() ? "" : " <span class=\"unit\">(" + esc(s.unit) + ")</span>") << (s.headline ? " <span class=\"tag\">headline</span>" : "")
    << "</figcaption>\n<svg class=\"chart\" viewBox=\"0 0 " << kWidth << " " << kHeight << "\" width=\"" << kWidth << "\" height=\"" << kHeight
    << "\" role=\"img\" aria-label=\"" << esc(s.key) << " per commit\">\n";
  for (double t : ty)
    o << "<line class=\"grid\" x1=\"" << kLeft << "\" x2=\"" << kWidth - kRight << "\" y1=\"" << coord(Y(t)) << "\" y2=\"" << coord(Y(t))
      << "\"/><text class=\"ytick\" x=\"" << kLeft - 6 << "\" y=\"" << coord(Y(t) + 4) << "\">" << num(t) << "</text>\n";
  // Change points: a dashed line between the last commit before the shift and the first after it.
  for (const auto& c : s.changes) {
    const double x = c.index > 0 ? (X(c.index - 1) + X(c.index)) / 2 : X(c.index);
    o << "<g class=\"change\"><line x1=\"" << coord(x) << "\" x2=\"" << coord(x) << "\" y1=\"" << kTop << "\" y2=\"" << kTop + plot_h
      << "\"/><text x=\"" << coord(x + 4) << "\" y=\"" << kTop + 10 << "\">shift " << num(c.before) << " → " << num(c.after)
      << " (U test p=" << (c.p < 0.001 ? std::string("<0.001") : num(c.p)) << ")</text><title>change point: median "
      << num(c.before) << " → " << num(c.after) << ", windowed Mann-Whitney U p=" << c.p << "</title></g>\n";
  }
  // The median per commit, joined.
  o << "<polyline class=\"trendline\" points=\"";
  for (size_t i = 0; i < s.points.size(); ++i) {
    auto v = s.points[i].samples();
    std::sort(v.begin(), v.end());
    const double med = v.size() % 2 ? v[v.size() / 2] : 0.5 * (v[v.size() / 2 - 1] + v[v.size() / 2]);
    o << coord(X(i)) << "," << coord(Y(med)) << " ";
  }
  o << "\"/>\n";
  for (size_t i = 0; i < s.points.size(); ++i) {
    const auto& p = s.points[i];
    const size_t n = p.measurements.size();
    for (size_t k = 0; k < n; ++k) {
      const auto& m = p.measurements[k];
      const auto& r = h.reports[m.report];
      // Two measurements of one commit sit side by side (baseline of one landing, candidate of another).
      const double x = X(i) + (n > 1 ? (static_cast<double>(k) - (static_cast<double>(n) - 1) / 2) * 9 : 0);
      o << "<a href=\"" << esc(r.id) << "/landing.html\"><g class=\"point " << m.side << "\">";
      if (m.samples.size() > 1) {
        const auto [lo, hi] = std::minmax_element(m.samples.begin(), m.samples.end());
        o << "<line class=\"whisker\" x1=\"" << coord(x) << "\" x2=\"" << coord(x) << "\" y1=\"" << coord(Y(*lo)) << "\" y2=\"" << coord(Y(*hi)) << "\"/>";
      }
      o << "<circle cx=\"" << coord(x) << "\" cy=\"" << coord(Y(m.value)) << "\" r=\"4.5\"/><title>" << esc(p.commit.substr(0, 12)) << " as "
        << m.side << " of landing " << r.seq << " (" << esc(r.id) << "): " << num(m.value) << " " << esc(s.unit)
        << (m.samples.empty() ? "" : ", " + std::to_string(m.samples.size()) + " samples") << "</title></g></a>\n";
    }
    o << "<text class=\"xtick\" transform=\"translate(" << coord(X(i)) << "," << kTop + plot_h + 14 << ") rotate(30)\">" << esc(p.commit.substr(0, 7))
      << "</text>\n";
  }
  o << "</svg></figure>\n";
  return o.str();
}

}  // namespace

std::string render_index_html(const History& h) {
  std::ostringstream o;
  o << "<!doctype html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>Landing ledger</title>\n<style>\n"
       "body{font:14px/1.45 system-ui,sans-serif;margin:24px auto;max-width:960px;color:#222}\n"
       "h1{font-size:22px} h2{font-size:17px;margin-top:28px} table{border-collapse:collapse;margin:8px 0}\n"
       "td,th{border-bottom:1px solid #ddd;padding:3px 8px;text-align:left} .PASS{color:#1a7f37} .FAIL{color:#cf222e} .INCOMPLETE{color:#9a6700}\n"
       "figure{margin:18px 0} figcaption{font-weight:600;margin-bottom:4px} .unit{font-weight:400;color:#666}\n"
       ".tag{font-size:11px;background:#ddf4ff;border-radius:6px;padding:1px 6px;font-weight:400}\n"
       ".grid{stroke:#eee} .ytick{font-size:11px;text-anchor:end;fill:#555} .xtick{font-size:11px;fill:#555}\n"
       ".trendline{fill:none;stroke:#8c959f;stroke-width:1.5} .whisker{stroke:#444;stroke-width:1.2}\n"
       ".point.candidate circle{fill:#0969da} .point.baseline circle{fill:#fff;stroke:#0969da;stroke-width:2}\n"
       ".change line{stroke:#cf222e;stroke-dasharray:5 4;stroke-width:1.5} .change text{font-size:11px;fill:#cf222e}\n"
       "p.note{color:#555} td.n{text-align:right;white-space:nowrap} tr.primary td{font-weight:600} small{color:#666}\n"
       "details.more>summary{cursor:pointer;margin:12px 0;font-weight:600}\n</style></head>\n<body data-rendered=\"pending\">\n";
  o << "<h1>Landing ledger</h1>\n<p class=\"note\">" << h.reports.size() << " landings, " << h.commits.size()
    << " commits measured, in " << (h.git_order ? "git's topological commit order" : "the order the ledger first saw them")
    << ". Each point is one measurement and links to its report: filled = the commit as a landing's candidate, hollow = as a "
       "landing's baseline (a commit measured twice shows the drift between the two landings); whiskers span the repetitions. "
       "Change points (red, dashed): a windowed two-sided Mann-Whitney U test, "
    << kChangeWindow << " commits either side, p &lt; " << kChangeAlpha << ". Newest report: <a href=\"latest/landing.html\">latest/</a>; "
       "the list: <a href=\"index.md\">index.md</a>.</p>\n";
  o << "<h2>1. Landings</h2>\n<table><tr><th>#</th><th>report</th><th>candidate</th><th>baseline</th><th>verdict</th><th>date</th></tr>\n";
  for (auto it = h.reports.rbegin(); it != h.reports.rend(); ++it)
    o << "<tr><td>" << it->seq << "</td><td><a href=\"" << esc(it->id) << "/landing.html\">" << esc(it->id) << "</a></td><td>"
      << esc(it->candidate.substr(0, 12)) << "</td><td>" << esc(it->baseline.substr(0, 12)) << "</td><td class=\"" << esc(it->verdict) << "\">"
      << esc(it->verdict) << "</td><td>" << esc(it->created) << "</td></tr>\n";
  o << "</table>\n<h2>2. Commits measured twice</h2>\n";
  // The drift a reader must hold a landing's gain against: the same commit, two landings.
  size_t drifts = 0;
  for (const auto& s : h.series) drifts += s.drifts.size();
  if (drifts == 0) {
    o << "<p>No commit was measured by two landings yet.</p>\n";
  } else {
    o << "<table class=\"drift\"><tr><th>metric</th><th>commit</th><th>measured</th><th>again</th><th>drift</th><th>U test p</th></tr>\n";
    auto where = [&](const HistoryMeasurement& m) {
      return "<small>#" + std::to_string(h.reports[m.report].seq) + " " + (m.side == "candidate" ? "cand." : "base") + "</small>";
    };
    for (const auto& s : h.series)
      for (const auto& d : s.drifts) {
        const auto& p = s.points[d.point];
        const auto& a = p.measurements[d.first];
        const auto& b = p.measurements[d.second];
        char pct[32];
        std::snprintf(pct, sizeof pct, "%+.2f%%", d.pct);
        o << "<tr" << (s.primary ? " class=\"primary\"" : "") << "><td>" << esc(s.key) << "</td><td>" << esc(p.commit.substr(0, 7))
          << "</td><td class=\"n\">" << num(a.value) << " " << where(a) << "</td><td class=\"n\">" << num(b.value) << " " << where(b)
          << "</td><td class=\"n\">" << pct << "</td><td class=\"n\">" << (d.p ? num(*d.p) : std::string("—")) << "</td></tr>\n";
      }
    o << "</table>\n";
  }
  o << "<h2>3. Trends</h2>\n";
  // Headline series open; the rest (top movers of single landings, changed ptxas kernels) folded.
  size_t charts = 0, folded = 0;
  for (const auto& s : h.series) folded += !s.headline;
  bool in_details = false;
  for (size_t i = 0; i < h.series.size(); ++i) {
    if (!h.series[i].headline && !in_details) {
      o << "<details class=\"more\"><summary>" << folded << " more series (figures of single landings' results tables)</summary>\n";
      in_details = true;
    }
    const std::string c = chart(h, h.series[i], i);
    if (!c.empty()) ++charts;
    o << c;
  }
  if (in_details) o << "</details>\n";
  if (charts == 0) o << "<p>No measured figures in the ledger yet.</p>\n";
  o << "<script>\n(function(){var s=document.querySelectorAll('svg.chart'),ok=true;"
       "s.forEach(function(e){if(e.closest('details:not([open])'))return;var b=e.getBoundingClientRect();if(!(b.width>0&&b.height>0))ok=false;});"
       "document.body.dataset.charts=String(s.length);document.body.dataset.rendered=ok&&s.length==" << charts
    << "?'ok':'broken';})();\n</script>\n</body></html>\n";
  return o.str();
}

}  // namespace pfx::gates

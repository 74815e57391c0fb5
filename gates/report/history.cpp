// The ledger's history (see history.h).
#include "report/history.h"

#include <fnmatch.h>

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <map>
#include <set>
#include <sstream>

#include "run/git.h"
#include "stats/rank_test.h"
#include "report/landing_record.h"
#include "report/table_columns.h"
#include "util/error.h"

namespace pfx::gates {

namespace fs = std::filesystem;
using nlohmann::json;

std::vector<double> HistoryPoint::samples() const {
  std::vector<double> out;
  for (const auto& m : measurements) {
    if (m.samples.empty()) out.push_back(m.value);
    else out.insert(out.end(), m.samples.begin(), m.samples.end());
  }
  return out;
}

namespace {

// The repetitions behind a gate's headline, from its samples table (a `points` chart: one row per
// sample, series "baseline" / "candidate"); empty when the gate kept none.
std::map<std::string, std::vector<double>> headline_samples(const GateResult& g) {
  std::map<std::string, std::vector<double>> out;
  for (const auto& t : g.tables) {
    if (t.chart.kind != Chart::Kind::points) continue;
    const int value = t.column(t.chart.value), series = t.column(t.chart.series);
    if (value < 0 || series < 0) continue;
    for (const auto& row : t.rows) {
      if (static_cast<size_t>(std::max(value, series)) >= row.cells.size()) continue;
      const Cell& v = row.cells[static_cast<size_t>(value)];
      const std::string side = row.cells[static_cast<size_t>(series)].text;
      if (v.value && (side == "baseline" || side == "candidate")) out[side].push_back(*v.value);
    }
  }
  return out;
}

std::vector<std::string> commit_order(const std::vector<HistoryReport>& reports, const std::optional<fs::path>& repo, bool& by_git) {
  std::vector<std::string> seen;
  std::set<std::string> known;
  for (const auto& r : reports)
    for (const std::string* c : {&r.baseline, &r.candidate})
      if (!c->empty() && known.insert(*c).second) seen.push_back(*c);
  by_git = false;
  if (!repo || seen.empty()) return seen;
  std::vector<std::string> args = {"rev-list", "--topo-order", "--reverse"};
  for (const auto& c : seen)
    if (git_result(*repo, {"cat-file", "-e", c + "^{commit}"}).ok()) args.push_back(c);
  if (args.size() == 3) return seen;
  const auto r = git_result(*repo, args);
  if (!r.ok()) return seen;
  std::vector<std::string> ordered;
  std::stringstream ss(r.out);
  for (std::string line; std::getline(ss, line);)
    if (known.count(line)) ordered.push_back(line);
  // Commits git does not know keep their ledger position after the ones it ordered.
  for (const auto& c : seen)
    if (std::find(ordered.begin(), ordered.end(), c) == ordered.end()) ordered.push_back(c);
  by_git = true;
  return ordered;
}

// Consecutive measurements of one commit made by different landings (ledger order).
std::vector<HistoryDrift> drifts_of(const HistorySeries& s) {
  std::vector<HistoryDrift> out;
  for (size_t i = 0; i < s.points.size(); ++i) {
    const auto& ms = s.points[i].measurements;
    for (size_t k = 1; k < ms.size(); ++k) {
      if (ms[k].report == ms[k - 1].report || ms[k - 1].value == 0) continue;
      HistoryDrift d{i, k - 1, k, 100.0 * (ms[k].value - ms[k - 1].value) / ms[k - 1].value, std::nullopt};
      if (!ms[k].samples.empty() && !ms[k - 1].samples.empty()) d.p = mann_whitney_u(ms[k - 1].samples, ms[k].samples).p_two_sided;
      out.push_back(d);
    }
  }
  return out;
}

std::string fixed(double v, int decimals) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f", decimals, v);
  return buf;
}

}  // namespace

History load_history(const fs::path& reports, const std::optional<fs::path>& repo) {
  History h;
  std::ifstream in(reports / "index.json");
  if (!in) fail((reports / "index.json").string(), ": no ledger index here");
  json index;
  try {
    index = json::parse(in);
  } catch (const json::exception& e) {
    fail((reports / "index.json").string(), ": not JSON: ", e.what());
  }
  if (!index.contains("reports") || !index["reports"].is_array()) fail((reports / "index.json").string(), ": reports: expected a list");
  std::vector<LandingRecord> records;
  for (const auto& e : index["reports"]) {
    const std::string id = e.value("id", std::string());
    if (id.empty() || !fs::exists(reports / id / "landing.json")) continue;
    records.push_back(read_landing_record(reports / id / "landing.json"));
  }
  std::sort(records.begin(), records.end(), [](const auto& a, const auto& b) { return a.seq < b.seq; });
  for (const auto& r : records)
    h.reports.push_back({r.id, r.seq, r.created, r.candidate.value("sha", std::string()), r.baseline.value("sha", std::string()),
                         std::string(to_string(r.verdict))});
  h.commits = commit_order(h.reports, repo, h.git_order);
  std::map<std::string, size_t> position;
  for (size_t i = 0; i < h.commits.size(); ++i) position[h.commits[i]] = i;

  // key → commit → measurements
  std::map<std::string, HistorySeries> by_key;
  std::map<std::string, std::map<size_t, HistoryPoint>> points;
  std::vector<std::string> key_order;
  auto add = [&](size_t ri, const std::string& key, const std::string& gate, const std::string& metric, const std::string& unit,
                 bool headline, const std::string& side, std::optional<double> value, std::vector<double> samples) {
    const std::string& commit = side == "baseline" ? h.reports[ri].baseline : h.reports[ri].candidate;
    if (!by_key.count(key)) {
      by_key[key] = HistorySeries{key, gate, metric, unit, headline, false, {}, {}, {}};
      key_order.push_back(key);
    }
    by_key[key].headline |= headline;
    if (!value || commit.empty()) return;
    auto& p = points[key][position[commit]];
    p.commit = commit;
    p.measurements.push_back(HistoryMeasurement{ri, side, *value, std::move(samples)});
  };
  for (size_t ri = 0; ri < records.size(); ++ri) {
    for (const auto& g : records[ri].gates) {
      const auto samples = headline_samples(g);
      // Judged table rows with a before → after pair of columns in one unit (timing's per-role
      // GPU time): every row a series, headline, since a check stands on each.
      std::set<std::string> tabled;
      for (const auto& t : g.tables) {
        const auto pair = before_after_columns(t);
        if (!pair) continue;
        const Column& col = t.columns[pair->first];
        for (const auto& row : t.rows) {
          if (row.check.empty() || row.cells.size() <= std::max(pair->first, pair->second)) continue;
          const std::string key = g.gate + ": " + row.check + " (" + col.unit + ")";
          tabled.insert(row.check);
          add(ri, key, g.gate, row.check, col.unit, true, "baseline", row.cells[pair->first].value, {});
          add(ri, key, g.gate, row.check, col.unit, true, "candidate", row.cells[pair->second].value, {});
        }
      }
      for (const auto& row : g.rows) {
        if (!row.check.empty() && tabled.count(row.check)) continue;  // the table's series holds it, every landing
        const std::string key = g.gate + ": " + row.shown_label();
        for (const char* side : {"baseline", "candidate"}) {
          std::vector<double> reps;
          if (row.headline && samples.count(side)) reps = samples.at(side);
          add(ri, key, g.gate, row.metric, row.unit, row.headline, side, (side[0] == 'b' ? row.baseline : row.candidate).value, reps);
        }
        by_key[key].primary |= row.headline;
      }
    }
  }
  for (const auto& key : key_order) {
    HistorySeries s = by_key[key];
    for (auto& [pos, p] : points[key]) s.points.push_back(p);
    std::vector<std::vector<double>> per_commit;
    for (const auto& p : s.points) per_commit.push_back(p.samples());
    s.changes = change_points(per_commit);
    s.drifts = drifts_of(s);
    h.series.push_back(s);
  }
  // The report's headline first, then headline metrics, then the rest in the order the reports list them.
  std::stable_sort(h.series.begin(), h.series.end(), [](const auto& a, const auto& b) {
    return std::pair(a.primary, a.headline) > std::pair(b.primary, b.headline);
  });
  return h;
}

std::vector<const HistorySeries*> select_series(const History& h, const std::string& glob) {
  std::vector<const HistorySeries*> out;
  for (const auto& s : h.series)
    if (glob.empty() || fnmatch(glob.c_str(), s.key.c_str(), 0) == 0) out.push_back(&s);
  return out;
}

json history_to_json(const History& h, const std::vector<const HistorySeries*>& series) {
  json reports = json::array(), out = json::array();
  for (const auto& r : h.reports)
    reports.push_back({{"id", r.id}, {"seq", r.seq}, {"created", r.created}, {"candidate", r.candidate}, {"baseline", r.baseline},
                       {"verdict", r.verdict}});
  for (const auto* s : series) {
    json pts = json::array(), changes = json::array();
    for (const auto& p : s->points) {
      json ms = json::array();
      for (const auto& m : p.measurements)
        ms.push_back({{"report", h.reports[m.report].id}, {"side", m.side}, {"value", m.value}, {"samples", m.samples}});
      pts.push_back({{"commit", p.commit}, {"measurements", ms}});
    }
    for (const auto& c : s->changes)
      changes.push_back({{"commit", s->points[c.index].commit}, {"p", c.p}, {"before", c.before}, {"after", c.after}});
    json drifts = json::array();
    for (const auto& d : s->drifts) {
      const auto& p = s->points[d.point];
      drifts.push_back({{"commit", p.commit}, {"first_report", h.reports[p.measurements[d.first].report].id},
                        {"second_report", h.reports[p.measurements[d.second].report].id}, {"first", p.measurements[d.first].value},
                        {"second", p.measurements[d.second].value}, {"pct", d.pct}, {"p", d.p ? json(*d.p) : json(nullptr)}});
    }
    out.push_back({{"key", s->key}, {"gate", s->gate}, {"metric", s->metric}, {"unit", s->unit}, {"headline", s->headline},
                   {"points", pts}, {"change_points", changes}, {"drift", drifts}});
  }
  return {{"schema", "landing-history/1"},
          {"order", h.git_order ? "git topological" : "first seen in the ledger"},
          {"change_test",
           {{"name", "windowed two-sided Mann-Whitney U"}, {"window_commits", kChangeWindow}, {"alpha", kChangeAlpha}}},
          {"reports", reports},
          {"series", out}};
}

std::string render_history_text(const History& h, const std::vector<const HistorySeries*>& series) {
  std::ostringstream os;
  os << h.reports.size() << " reports, " << h.commits.size() << " commits measured (order: "
     << (h.git_order ? "git topological" : "first seen in the ledger") << "); change points: windowed Mann-Whitney U, "
     << kChangeWindow << " commits a side, p < " << kChangeAlpha << "\n";
  for (const auto* s : series) {
    os << "\n" << s->key << (s->unit.empty() ? "" : " [" + s->unit + "]") << (s->headline ? "  (headline)" : "") << "\n";
    for (size_t i = 0; i < s->points.size(); ++i) {
      const auto& p = s->points[i];
      os << "  " << p.commit.substr(0, 12);
      for (const auto& m : p.measurements)
        os << "  " << fixed(m.value, m.value >= 1000 ? 0 : 3) << " (" << h.reports[m.report].id.substr(0, 12) << " " << m.side
           << (m.samples.empty() ? "" : ", " + std::to_string(m.samples.size()) + " samples") << ")";
      for (const auto& c : s->changes)
        if (c.index == i) os << "  ← change: median " << fixed(c.before, 3) << " → " << fixed(c.after, 3) << ", p " << fixed(c.p, 4);
      os << "\n";
      for (const auto& d : s->drifts)
        if (d.point == i)
          os << "      drift: measured again by " << h.reports[p.measurements[d.second].report].id.substr(0, 12) << ": "
             << (d.pct >= 0 ? "+" : "") << fixed(d.pct, 2) << "%" << (d.p ? ", U test p " + fixed(*d.p, 4) : std::string())
             << " (same commit: machine or run drift)\n";
    }
  }
  return os.str();
}

}  // namespace pfx::gates

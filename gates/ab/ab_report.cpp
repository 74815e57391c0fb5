// The A/B gate's typed figures (see ab_report.h).
#include "ab/ab_report.h"

#include "util/error.h"

namespace pfx::gates {

using nlohmann::json;

namespace {

// A whole-prefill tok/s row: "pp512 tok/s", the medians of both builds over the pairs, the Δ.
Row tps_row(const std::string& metric, double baseline_tps, double candidate_tps, std::optional<double> delta_pct,
            std::optional<std::array<double, 2>> ci_pct, const std::string& check) {
  Row row;
  row.metric = metric;
  row.label = "whole prefill " + metric + " (A/B median)";
  row.unit = "tok/s";
  row.format = fixed_format(1);
  row.baseline = number_cell(baseline_tps);
  row.candidate = number_cell(candidate_tps);
  row.delta = candidate_tps - baseline_tps;
  row.delta_pct = delta_pct;
  row.ci_pct = ci_pct;
  row.check = check;
  return row;
}

}  // namespace

void add_ab_output(GateResult& r, const AbFigures& f) {
  Row h = tps_row(f.metric, f.baseline_tps, f.candidate_tps,
                  f.delta_pct ? *f.delta_pct : (f.candidate_tps / f.baseline_tps - 1) * 100, f.ci_pct, "ab");
  h.noise_pct = f.noise_pct;
  h.headline = true;
  r.rows.push_back(h);
  if (f.clock_normalised_delta_pct) {
    Row n;
    n.metric = f.metric + " per MHz";
    n.label = "whole prefill " + f.metric + ", clock-normalised (paired median Δ of tok/s per SM MHz)";
    n.unit = "%";
    n.baseline = text_cell("");
    n.candidate = text_cell("");
    n.delta_pct = f.clock_normalised_delta_pct;
    r.rows.push_back(n);
  }
  for (const auto& m : f.extra) r.rows.push_back(tps_row(m.metric + " tok/s", m.baseline_tps, m.candidate_tps, m.delta_pct, m.ci_pct, m.check));

  Table t;
  t.id = "ab";
  t.title = "A/B samples: tok/s per run in run order (A/A first, then interleaved ABAB…; hollow = throttled, set aside)";
  t.columns = {{"run", "", {}}, {"series", "", {}}, {"throughput", "tok/s", fixed_format(2)}, {"throttled", "", kInteger}};
  auto sample = [&](const std::string& label, const std::string& series, double tps, bool throttled) {
    t.rows.push_back({{text_cell(label), text_cell(series), number_cell(tps), number_cell(throttled ? 1 : 0)}});
  };
  for (const auto& p : f.aa) {
    sample("A/A baseline", "aa", p[0], false);
    sample("A/A baseline again", "aa", p[1], false);
  }
  for (const auto& p : f.pairs) {
    sample("baseline", "baseline", p.baseline_tps, p.throttled);
    sample("candidate", "candidate", p.candidate_tps, p.throttled);
  }
  t.chart.kind = Chart::Kind::points;
  t.chart.label = "run";
  t.chart.series = "series";
  t.chart.value = "throughput";
  t.chart.flag = "throttled";
  t.chart.value_unit = "tok/s";
  r.tables.push_back(t);
}

void read_legacy_ab_output(GateResult& r) {
  const json& d = r.details;
  if (!d.contains("pairs") && !d.contains("headline")) return;
  AbFigures f;
  try {
    if (d.contains("headline") && d["headline"].is_object()) {
      const auto& h = d["headline"];
      f.metric = h.value("metric", std::string("tok/s"));
      f.baseline_tps = h.value("before", 0.0);
      f.candidate_tps = h.value("after", 0.0);
    }
    const json aa = d.value("aa", json::object());
    if (aa.contains("noise_floor_pct")) f.noise_pct = aa["noise_floor_pct"].get<double>();
    if (d.contains("ci_pct") && d["ci_pct"].is_array() && d["ci_pct"].size() == 2)
      f.ci_pct = std::array<double, 2>{d["ci_pct"][0].get<double>(), d["ci_pct"][1].get<double>()};
    for (const auto& p : aa.value("pairs", json::array()))
      f.aa.push_back({p["a"].value("tps", 0.0), p["a2"].value("tps", 0.0)});
    for (const auto& p : d.value("pairs", json::array()))
      f.pairs.push_back({p["baseline"].value("tps", 0.0), p["candidate"].value("tps", 0.0), p.value("excluded_throttled", false)});
  } catch (const json::exception& e) {
    fail("details: ", e.what());
  }
  if (f.pairs.empty() && !d.contains("headline")) return;
  add_ab_output(r, f);
  if (!d.contains("headline")) r.rows.clear();  // no medians recorded: samples only
  if (f.pairs.empty()) r.tables.clear();        // no samples: the headline only
}

}  // namespace pfx::gates

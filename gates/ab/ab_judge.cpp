// A/B judgement from stored pairs (see ab_judge.h).
#include "ab/ab_judge.h"

#include <array>
#include <cmath>
#include <optional>

#include "ab/ab_report.h"
#include "util/text_format.h"

namespace pfx::gates {

using nlohmann::json;

namespace {

double tps_of(const json& side, const std::string& metric) {
  if (!side.is_object() || !side.contains("tps") || !side["tps"].is_object()) return 0;
  const auto& t = side["tps"];
  return t.contains(metric) && t[metric].is_number() ? t[metric].get<double>() : 0;
}

// The run's mean SM clock (MHz), 0 when not sampled.
double clock_of(const json& side) {
  if (!side.is_object() || !side.contains("sm_clock_mhz") || !side["sm_clock_mhz"].is_object()) return 0;
  const auto& c = side["sm_clock_mhz"];
  const double lo = c.value("min", 0.0), hi = c.value("max", 0.0);
  return lo > 0 && hi > 0 ? (lo + hi) / 2 : 0;
}

}  // namespace

AbSettings ab_settings(const GateProfile& p) {
  AbSettings s;
  s.primary = "pp" + std::to_string(p.integer("ab", "prompt_tokens", 512));
  s.metrics = {s.primary};
  for (const auto& m : p.strings("ab", "extra_metrics"))
    if (m != s.primary) s.metrics.push_back(m);
  s.max_regression_pct = p.number("ab", "max_regression_pct", 2.0);
  s.confidence = p.number("ab", "confidence", 0.95);
  s.max_pairs = static_cast<int>(p.integer("ab", "max_pairs", 24));
  return s;
}

AbMetric analyse_ab_metric(const json& pairs, const std::string& metric, const AbSettings& s) {
  AbMetric m;
  m.metric = metric;
  std::vector<double> ratios, norm, a_tps, b_tps;
  bool all_clocks = true;
  for (const auto& p : pairs) {
    const double a = tps_of(p.value("baseline", json()), metric), b = tps_of(p.value("candidate", json()), metric);
    if (!(a > 0) || !(b > 0) || !std::isfinite(a) || !std::isfinite(b)) continue;
    a_tps.push_back(a);
    b_tps.push_back(b);
    if (p.value("throttled", false)) {
      ++m.throttled;  // set aside: a throttled clock measures the cooling, not the code
      continue;
    }
    ratios.push_back(b / a);
    const double ca = clock_of(p.value("baseline", json())), cb = clock_of(p.value("candidate", json()));
    if (ca > 0 && cb > 0) norm.push_back((b / cb) / (a / ca));
    else all_clocks = false;
  }
  m.raw = analyse_pairs(ratios, s.max_regression_pct, s.confidence);
  m.baseline_median = median(a_tps);
  m.candidate_median = median(b_tps);
  if (all_clocks && !norm.empty()) {
    std::vector<double> pct;
    for (double r : norm) pct.push_back((r - 1) * 100);
    m.clock_norm_delta_pct = median(pct);
    m.clock_norm_known = true;
  }
  return m;
}

bool ab_undecided(const AbMetric& m) { return m.raw.pairs < 2 || m.raw.decision == AbDecision::Undecided; }

std::vector<Check> judge_ab(const json& pairs, const AbSettings& s, json& headline) {
  std::vector<Check> out;
  const int run = static_cast<int>(pairs.is_array() ? pairs.size() : 0);
  for (const auto& metric : s.metrics) {
    const AbMetric m = analyse_ab_metric(pairs, metric, s);
    Check c;
    c.name = metric == s.primary ? "ab" : "ab " + metric;
    const std::string ci = signed_percent(m.raw.ci_pct.lo) + ".." + signed_percent(m.raw.ci_pct.hi);
    const std::string budget = fixed(s.max_regression_pct, 2) + "%";
    const std::string norm = m.clock_norm_known ? ", clock-normalised " + signed_percent(m.clock_norm_delta_pct) : "";
    c.metrics = {{"metric", metric},
                 {"median_delta_pct", m.raw.median_delta_pct},
                 {"ci_pct", {m.raw.ci_pct.lo, m.raw.ci_pct.hi}},
                 {"wins", m.raw.wins},
                 {"pairs", m.raw.pairs},
                 {"pairs_run", run},
                 {"throttled_pairs", m.throttled},
                 {"budget_pct", s.max_regression_pct},
                 {"confidence", s.confidence},
                 {"decision", to_string(m.raw.decision)},
                 {"clock_normalised_delta_pct", m.clock_norm_known ? json(m.clock_norm_delta_pct) : json(nullptr)},
                 {"baseline_tps_median", m.baseline_median},
                 {"candidate_tps_median", m.candidate_median}};
    if (m.raw.pairs < 2) {
      c.status = run == 0 ? Status::Fail : Status::Inconclusive;
      c.waivable = run != 0;
      c.reason = run == 0 ? "no A/B pair was measured: nothing was compared"
                          : metric + ": only " + std::to_string(m.raw.pairs) + " usable pairs of " + std::to_string(run) +
                                " (throttled or missing)";
    } else {
      const std::string d = metric + " median Δ " + signed_percent(m.raw.median_delta_pct) + norm + " (" + percent(s.confidence) + " CI " +
                            ci + ", " + std::to_string(m.raw.wins) + "/" + std::to_string(m.raw.pairs) + " wins)";
      switch (m.raw.decision) {
        case AbDecision::Improved:
          c.status = Status::Pass;
          c.reason = "improved: " + d + ", CI excludes zero";
          break;
        case AbDecision::NoChange:
          c.status = Status::Pass;
          c.reason = "no change beyond the budget: " + d + ", CI above −" + budget;
          break;
        case AbDecision::Regressed:
          c.status = Status::Fail;
          c.reason = "regressed: " + d + " beyond the budget −" + budget + ", CI excludes zero";
          break;
        case AbDecision::Undecided:
          c.status = Status::Inconclusive;
          c.reason = "undecided after " + std::to_string(run) + " pairs (cap " + std::to_string(s.max_pairs) + "): " + d +
                     " straddles −" + budget + " (the budget is not widened: a quieter machine or more pairs decide)";
          break;
      }
    }
    if (metric == s.primary)
      headline = {{"metric", metric + " tok/s"}, {"before", m.baseline_median}, {"after", m.candidate_median},
                  {"delta_pct", m.raw.median_delta_pct}, {"delta", "paired median of per-pair ratios"},
                  {"clock_normalised_delta_pct", m.clock_norm_known ? json(m.clock_norm_delta_pct) : json(nullptr)}};
    out.push_back(c);
  }
  return out;
}

void add_ab_figures(GateResult& r, const AbSettings& s) {
  const json pairs = r.details.value("pairs", json::array());
  const json aa = r.details.value("aa", json::object());
  AbFigures f;
  const AbMetric m = analyse_ab_metric(pairs, s.primary, s);
  f.metric = s.primary + " tok/s";
  f.baseline_tps = m.baseline_median;
  f.candidate_tps = m.candidate_median;
  if (m.raw.pairs > 0) {
    f.delta_pct = m.raw.median_delta_pct;
    f.ci_pct = std::array<double, 2>{m.raw.ci_pct.lo, m.raw.ci_pct.hi};
  }
  if (m.clock_norm_known) f.clock_normalised_delta_pct = m.clock_norm_delta_pct;
  if (aa.contains("noise_floor_pct") && aa["noise_floor_pct"].is_number()) f.noise_pct = aa["noise_floor_pct"].get<double>();
  for (const auto& p : pairs)
    f.pairs.push_back({tps_of(p.value("baseline", json()), s.primary), tps_of(p.value("candidate", json()), s.primary),
                       p.value("throttled", false)});
  for (const auto& p : aa.value("pairs", json::array()))
    f.aa.push_back({tps_of(p.value("baseline", json()), s.primary), tps_of(p.value("candidate", json()), s.primary)});
  for (const auto& metric : s.metrics) {
    if (metric == s.primary) continue;
    const AbMetric e = analyse_ab_metric(pairs, metric, s);
    AbFigures::Metric fm{metric, "ab " + metric, e.baseline_median, e.candidate_median, std::nullopt, std::nullopt};
    if (e.raw.pairs > 0) {
      fm.delta_pct = e.raw.median_delta_pct;
      fm.ci_pct = std::array<double, 2>{e.raw.ci_pct.lo, e.raw.ci_pct.hi};
    }
    f.extra.push_back(fm);
  }
  if (f.baseline_tps > 0) add_ab_output(r, f);
}

void rejudge_ab(GateResult& r, const GateProfile& profile) {
  const AbSettings s = ab_settings(profile);
  json headline;
  r.checks = judge_ab(r.details.value("pairs", json::array()), s, headline);
  r.details["headline"] = headline;
  r.rows.clear();  // the figures follow the judgement, never the imported file's own
  r.tables.clear();
  add_ab_figures(r, s);
}

}  // namespace pfx::gates

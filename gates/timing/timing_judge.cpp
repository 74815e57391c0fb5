// Timing verdicts from repetition samples (see timing_judge.h).
#include "timing/timing_judge.h"

#include <fnmatch.h>

#include <algorithm>
#include <cmath>
#include <set>

#include "util/text_format.h"
#include "stats/rank_test.h"
#include "stats/stats.h"
#include "timing/timing_report.h"

namespace pfx::gates {

using nlohmann::json;

namespace {

std::vector<double> samples(const json& row, const char* key) {
  std::vector<double> v;
  for (const auto& x : row.value(key, json::array()))
    if (x.is_number()) v.push_back(x.get<double>());
  return v;
}

std::string mover_text(const json& row) {
  std::string s = row["key"].get<std::string>() + " " + grouped(std::llround(row["baseline_ns"].get<double>())) + " → " +
                  grouped(std::llround(row["candidate_ns"].get<double>())) + " ns";
  if (!row["delta_pct"].is_null()) s += " (" + signed_percent(row["delta_pct"].get<double>()) + ", p=" + sci(row["p_value"].get<double>()) + ")";
  return s;
}

bool is_mover(const json& row) {
  const std::string v = row.value("verdict", std::string());
  return v == "SLOWER" || v == "FASTER";
}

}  // namespace

TimingSettings timing_settings(const GateProfile& p) {
  TimingSettings s;
  s.alpha = p.number("timing", "alpha", 0.05);
  s.role_budgets = p.gate("timing").value("role_budgets", json::array());
  return s;
}

AskedRun timing_ask(const GateProfile& p) { return {"bench", "cuda", p.string("timing", "path", "fast"), "", ""}; }

void judge_timing_row(json& row, double alpha) {
  const auto a = samples(row, "baseline_samples_ns"), b = samples(row, "candidate_samples_ns");
  const double ma = median(a), mb = median(b);
  row["baseline_ns"] = ma;
  row["candidate_ns"] = mb;
  row["delta_ns"] = mb - ma;
  row["delta_pct"] = ma > 0 ? json((mb - ma) / ma * 100.0) : json(nullptr);
  const double p = mann_whitney_u(a, b).p_two_sided;
  row["p_value"] = p;
  if (ma > 0) {
    const Interval ci = bootstrap_median_change_pct(a, b, 1 - alpha);
    row["ci_pct"] = {ci.lo, ci.hi};
  } else {
    row["ci_pct"] = nullptr;
  }
  const std::string status = row.value("status", std::string("changed"));
  if (row.value("sass", std::string()) == "unchanged") row["verdict"] = "unchanged code";
  else if (status == "added" || status == "removed") row["verdict"] = status;
  else if (p < alpha && mb != ma) row["verdict"] = mb > ma ? "SLOWER" : "FASTER";
  else row["verdict"] = "SAME";
}

std::vector<Check> judge_timing_evidence(json& m, const TimingSettings& s) {
  const std::string name = m.value("model", std::string("?"));
  for (const char* list : {"kernels", "roles"})
    for (auto& row : m[list]) judge_timing_row(row, s.alpha);
  // Movers: significant changes only, most significant first (then the larger change).
  json movers = json::array();
  for (const auto& row : m["kernels"])
    if (is_mover(row)) movers.push_back(row);
  std::sort(movers.begin(), movers.end(), [](const json& x, const json& y) {
    if (x["p_value"] != y["p_value"]) return x["p_value"].get<double>() < y["p_value"].get<double>();
    return std::fabs(x["delta_ns"].get<double>()) > std::fabs(y["delta_ns"].get<double>());
  });
  m["movers"] = movers;
  m["alpha"] = s.alpha;
  std::vector<Check> out;
  Check traced;
  traced.name = name;
  const size_t nk = m["kernels"].size();
  const double ta = m.value("baseline_kernel_ns", 0.0), tb = m.value("candidate_kernel_ns", 0.0);
  traced.status = nk ? Status::Pass : Status::Fail;
  traced.waivable = nk > 0;
  traced.reason = nk ? std::to_string(nk) + " kernels traced over " + std::to_string(m.value("reps", 0)) + " reps, GPU time " +
                           grouped(std::llround(ta)) + " → " + grouped(std::llround(tb)) + " ns"
                     : "the traces hold no kernel: nothing was timed";
  traced.metrics = {{"kernels", nk}, {"movers", movers.size()}, {"alpha", s.alpha}};
  for (size_t i = 0; s.role_budgets.is_array() && i < s.role_budgets.size(); ++i) {
    const auto& bud = s.role_budgets[i];
    const std::string glob = bud.value("role", std::string("*"));
    const double limit = bud.value("max_regression_pct", 0.0);
    for (const auto& row : m["roles"]) {
      const std::string role = row["key"];
      if (::fnmatch(glob.c_str(), role.c_str(), 0) != 0 || row["delta_pct"].is_null()) continue;
      Check c;
      c.name = role_check_name(name, role);
      c.metrics = row;
      const double dp = row["delta_pct"];
      const std::string budget = "budget +" + fixed(limit, 1) + "%";
      if (row.value("verdict", std::string()) == "unchanged code") {
        c.status = Status::Pass;
        c.reason = "role " + role + ": unchanged code (SASS of all its kernels identical), " + signed_percent(dp) + " is noise";
      } else {
        const double lo = row["ci_pct"][0], hi = row["ci_pct"][1];
        const std::string ci = percent(1 - s.alpha) + " CI " + signed_percent(lo) + ".." + signed_percent(hi);
        if (lo > limit) {
          c.status = Status::Fail;
          c.reason = "role " + role + " " + signed_percent(dp) + " (" + ci + ") beyond " + budget;
        } else if (hi <= limit) {
          c.status = Status::Pass;
          c.reason = "role " + role + " " + signed_percent(dp) + " (" + ci + ") within " + budget;
        } else {
          c.status = Status::Inconclusive;
          c.reason = "role " + role + " " + signed_percent(dp) + ": " + ci + " straddles " + budget + " (more reps decide)";
        }
      }
      out.push_back(c);
    }
  }
  out.push_back(traced);
  std::string ev = name + ": GPU time " + grouped(std::llround(ta)) + " → " + grouped(std::llround(tb)) + " ns" +
                   (ta > 0 ? " (" + signed_percent((tb - ta) / ta * 100) + ")" : "") + "; ";
  if (movers.empty()) {
    ev += "no significant change (α " + fixed(s.alpha, 2) + ", " + std::to_string(m.value("reps", 0)) + " reps)";
  } else {
    ev += "top movers (α " + fixed(s.alpha, 2) + "): ";
    for (size_t i = 0; i < movers.size() && i < 3; ++i) ev += (i ? "; " : "") + mover_text(movers[i]);
  }
  int added = 0, removed = 0, unchanged = 0;
  for (const auto& k : m["kernels"]) {
    added += k["status"] == "added";
    removed += k["status"] == "removed";
    unchanged += k.value("verdict", std::string()) == "unchanged code";
  }
  if (added || removed) ev += "; kernels added " + std::to_string(added) + ", removed " + std::to_string(removed);
  const std::string sass = m.value("sass", json::object()).value("status", std::string("unavailable"));
  ev += sass == "available" ? "; " + std::to_string(unchanged) + " kernels unchanged code (SASS hash)"
                            : "; SASS hashes unavailable (" + m.value("sass", json::object()).value("reason", std::string("?")) +
                                  "): nothing is called unchanged code";
  m["evidence"] = ev;
  return out;
}

void judge_coverage(GateResult& r) {
  Check c;
  c.name = "coverage";
  const json cov = r.details.value("coverage", json::object());
  if (!cov.is_object() || !cov.value("known", false)) {
    c.status = Status::Skipped;
    c.reason = "unguarded kernels not listed: " + (cov.is_object() ? cov.value("note", std::string("no kernel list")) : std::string("no kernel list"));
    r.checks.push_back(c);
    return;
  }
  const std::string by = cov.value("changed_by", std::string("?"));
  Table t;
  t.id = "unguarded";
  t.title = "Unguarded kernels: in the candidate's kernel-resources.json, launched by no traced run (code change by " + by + ")";
  t.columns = {{"kernel", "", {}}, {"source", "", {}}, {"code", "", {}}};
  std::vector<std::string> changed;
  const json unguarded = cov.value("unguarded", json::array());
  for (const auto& k : unguarded) {
    const std::string name = k.value("kernel", std::string("?")), state = k.value("changed", std::string("unknown"));
    TableRow row{{text_cell(name), text_cell(k.value("source", std::string())), text_cell(state)}};
    if (state != "unchanged") {
      changed.push_back(name);
      row.check = "coverage";
    }
    t.rows.push_back(row);
  }
  const std::string counts = std::to_string(unguarded.size()) + " of " + std::to_string(cov.value("kernels", 0)) +
                             " kernels launched by no traced run";
  c.metrics = {{"kernels", cov.value("kernels", 0)}, {"unguarded", unguarded.size()}, {"changed_unguarded", changed.size()}};
  const std::string note = cov.value("note", std::string());
  if (!changed.empty()) {
    c.status = Status::Inconclusive;
    c.reason = counts + "; code changed (" + by + ") but never launched: " + changed.front() +
               (changed.size() > 1 ? " and " + std::to_string(changed.size() - 1) + " more" : "") +
               " — a timing model or shape that launches it decides" + (note.empty() ? "" : "; " + note);
  } else {
    c.status = Status::Pass;
    c.reason = counts + (unguarded.empty() ? "" : ", none with changed code (" + by + ")") + (note.empty() ? "" : "; " + note);
  }
  r.checks.push_back(c);
  t.in_markdown = true;
  if (!t.rows.empty()) r.tables.push_back(t);
}

void rejudge_timing(GateResult& r, const GateProfile& profile) {
  const TimingSettings s = timing_settings(profile);
  // Checks of models that left no evidence (not traced: SKIPPED, a failed run) stay as they were,
  // except that a claimed PASS without evidence is a FAIL; every other check is derived below.
  std::set<std::string> judged;
  for (const auto& m : r.details["models"]) judged.insert(m.value("model", std::string()));
  std::vector<Check> kept;
  for (auto c : r.checks) {
    if (judged.count(c.name) || c.name == "coverage" || c.name.find(" role ") != std::string::npos) continue;
    if (c.status == Status::Pass || c.status == Status::Waived) {
      c.status = Status::Fail;
      c.waivable = false;
      c.reason = "imported check claims it passed but its model has no timing evidence";
    }
    kept.push_back(c);
  }
  r.checks = kept;
  r.evidence.clear();
  r.rows.clear();  // the figures follow the judgement, never the imported file's own
  r.tables.clear();
  size_t index = 0;
  for (auto& m : r.details["models"]) {
    for (auto& c : judge_timing_evidence(m, s)) r.checks.push_back(c);
    add_timing_output(r, m, index++);
    r.evidence += (r.evidence.empty() ? "" : " | ") + m.value("evidence", std::string());
  }
  judge_coverage(r);
  r.details["role_budgets"] = s.role_budgets;
  r.details["alpha"] = s.alpha;
}

}  // namespace pfx::gates

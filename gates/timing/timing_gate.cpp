// timing gate (see timing_gate.h).
#include "timing/timing_gate.h"

#include <fnmatch.h>

#include <algorithm>
#include <cmath>
#include <map>

#include "core/format.h"
#include "core/stats.h"
#include "trace/diff.h"
#include "trace/summary.h"
#include "trace/trace_json.h"
#include "util/error.h"

namespace pfx::gates {

namespace fs = std::filesystem;
using nlohmann::json;

namespace {

struct Series {
  std::vector<double> a, b;
  bool in_a = false, in_b = false;
};

// Per key: the median of each side over the repetitions, Δ, Δ%, and the relative spread of
// each side (its run-to-run noise, in percent).
json aggregate(const std::map<std::string, Series>& m, size_t reps) {
  json rows = json::array();
  for (const auto& [key, s] : m) {
    auto pad = [&](std::vector<double> v) {
      while (v.size() < reps) v.push_back(0);  // a rep where the key did not occur counts as 0 ns
      return v;
    };
    const auto va = pad(s.a), vb = pad(s.b);
    const double ma = median(va), mb = median(vb);
    auto spread = [](const std::vector<double>& v, double mid) {
      if (mid <= 0 || v.empty()) return 0.0;
      return (*std::max_element(v.begin(), v.end()) - *std::min_element(v.begin(), v.end())) / mid * 100.0;
    };
    json row = {{"key", key}, {"baseline_ns", ma}, {"candidate_ns", mb}, {"delta_ns", mb - ma},
                {"status", !s.in_a ? "added" : (!s.in_b ? "removed" : "changed")},
                {"noise_pct", std::max(spread(va, ma), spread(vb, mb))},
                {"baseline_samples_ns", va}, {"candidate_samples_ns", vb}};
    row["delta_pct"] = ma > 0 ? json((mb - ma) / ma * 100.0) : json(nullptr);
    rows.push_back(row);
  }
  std::sort(rows.begin(), rows.end(), [](const json& x, const json& y) {
    return std::fabs(x["delta_ns"].get<double>()) > std::fabs(y["delta_ns"].get<double>());
  });
  return rows;
}

std::string mover_text(const json& row) {
  std::string s = row["key"].get<std::string>() + " " + grouped(std::llround(row["baseline_ns"].get<double>())) + " → " +
                  grouped(std::llround(row["candidate_ns"].get<double>())) + " ns";
  if (!row["delta_pct"].is_null()) s += " (" + signed_pct(row["delta_pct"].get<double>()) + ")";
  else s += " (added)";
  return s;
}

}  // namespace

void judge_timing_model(GateResult& r, const std::string& model_name, const std::vector<pfx::trace::TraceDiff>& diffs,
                        const json& budgets, const std::string& origin, int prompt) {
  std::map<std::string, Series> kernels, roles;
  std::vector<double> a_total, b_total;
  double a_busy = 0, b_busy = 0;
  for (const auto& d : diffs) {
    for (const auto& row : d.kernels) {
      auto& s = kernels[row.key];
      if (row.status != pfx::trace::DiffRow::Status::added) { s.a.push_back(row.a_ns); s.in_a = true; }
      if (row.status != pfx::trace::DiffRow::Status::removed) { s.b.push_back(row.b_ns); s.in_b = true; }
    }
    for (const auto& row : d.roles) {
      auto& s = roles[row.key];
      if (row.status != pfx::trace::DiffRow::Status::added) { s.a.push_back(row.a_ns); s.in_a = true; }
      if (row.status != pfx::trace::DiffRow::Status::removed) { s.b.push_back(row.b_ns); s.in_b = true; }
    }
    a_total.push_back(d.a_kernel_ns);
    b_total.push_back(d.b_kernel_ns);
    a_busy = d.a_busy_ns;
    b_busy = d.b_busy_ns;
  }
  const size_t reps = diffs.size();
  const json krows = aggregate(kernels, reps);
  const json rrows = aggregate(roles, reps);
  const double ta = median(a_total), tb = median(b_total);
  json models = r.details.value("models", json::array());
  models.push_back({{"model", model_name}, {"kernels", krows}, {"roles", rrows}, {"baseline_kernel_ns", ta},
                    {"candidate_kernel_ns", tb}, {"baseline_busy_ns", a_busy}, {"candidate_busy_ns", b_busy},
                    {"reps", reps}, {"prompt_tokens", prompt}, {"per_pass", !diffs.empty() && diffs.front().per_pass}});
  r.details["models"] = models;
  Check traced;
  traced.name = model_name;
  traced.status = krows.empty() ? Status::Fail : Status::Pass;
  traced.waivable = !krows.empty();
  traced.reason = krows.empty() ? "the traces hold no kernel: nothing was timed"
                                : std::to_string(krows.size()) + " kernels traced, GPU time " + grouped(std::llround(ta)) +
                                      " → " + grouped(std::llround(tb)) + " ns";
  std::vector<Check> role_checks;
  if (!budgets.is_null() && !budgets.is_array()) fail(origin, ": gates.timing.role_budgets: expected a list");
  for (size_t i = 0; budgets.is_array() && i < budgets.size(); ++i) {
    const auto& bud = budgets[i];
    if (!bud.is_object() || !bud.contains("role") || !bud["role"].is_string() || !bud.contains("max_regression_pct") ||
        !bud["max_regression_pct"].is_number())
      fail(origin, ": gates.timing.role_budgets[", i, "]: expected {role: <glob>, max_regression_pct: N}");
    const std::string glob = bud["role"];
    const double limit = bud["max_regression_pct"].get<double>();
    for (const auto& row : rrows) {
      const std::string role = row["key"];
      if (::fnmatch(glob.c_str(), role.c_str(), 0) != 0 || row["delta_pct"].is_null()) continue;
      const double dp = row["delta_pct"], noise = row["noise_pct"];
      Check c;
      c.name = model_name + " role " + role;
      c.metrics = row;
      if (dp > limit + noise) {
        c.status = Status::Fail;
        c.reason = "role " + role + " " + signed_pct(dp) + " > budget " + fixed(limit, 1) + "% + noise " + fixed(noise, 1) + "%";
      } else {
        c.reason = "role " + role + " " + signed_pct(dp) + " within budget " + fixed(limit, 1) + "% (+ noise " + fixed(noise, 1) + "%)";
      }
      role_checks.push_back(c);
    }
  }
  std::string ev = model_name + ": GPU time " + grouped(std::llround(ta)) + " → " + grouped(std::llround(tb)) + " ns" +
                   (ta > 0 ? " (" + signed_pct((tb - ta) / ta * 100) + ")" : "") + "; top movers: ";
  for (size_t i = 0; i < krows.size() && i < 3; ++i) ev += (i ? "; " : "") + mover_text(krows[i]);
  int added = 0, removed = 0;
  for (const auto& k : krows) {
    added += k["status"] == "added";
    removed += k["status"] == "removed";
  }
  if (added || removed) ev += "; kernels added " + std::to_string(added) + ", removed " + std::to_string(removed);
  auto evs = r.details.value("model_evidence", std::vector<std::string>{});
  evs.push_back(ev);
  r.details["model_evidence"] = evs;
  for (auto& c : role_checks) r.checks.push_back(c);
  r.checks.push_back(traced);
}

GateResult run_timing_gate(const GateContext& ctx, const fs::path& landing_exe) {
  GateResult r = ctx.start();
  for (const Build* b : {&ctx.candidate, &ctx.baseline})
    for (const auto& [list, name] : {std::pair<std::string, std::string>{"subcommands", "bench"}, {"backends", "cuda"}})
      if (auto miss = missing_capability(*b, list, name)) {
        r.status = Status::Skipped;
        r.reason = *miss;
        r.duration_s = ctx.deadline.elapsed();
        return r;
      }
  auto models = ctx.profile.strings("timing", "models");
  if (models.empty() && !ctx.profile.string("ab", "model", "").empty()) models.push_back(ctx.profile.string("ab", "model", ""));
  const int prompt = static_cast<int>(ctx.profile.integer("timing", "prompt_tokens", 512));
  const int reps = static_cast<int>(std::max(1L, ctx.profile.integer("timing", "reps", 3)));
  const int warmup = static_cast<int>(ctx.profile.integer("timing", "warmup", 1));
  const std::string path = ctx.profile.string("timing", "path", "fast");
  const std::string busy_range = ctx.profile.string("timing", "busy_range", "prefill");
  const json budgets = ctx.profile.gate("timing").value("role_budgets", json::array());
  if (!budgets.is_array()) fail(ctx.profile.origin(), ": gates.timing.role_budgets: expected a list of {role, max_regression_pct}");
  fs::create_directories(ctx.work_dir);
  if (auto probe = gpu_probe(ctx)) {
    r.checks.push_back(*probe);
    finish(r, ctx.profile, ctx.deadline.elapsed());
    return r;
  }
  for (const auto& model_name : models) {
    Check traced;
    traced.name = model_name;
    const auto model = ctx.models.resolve(model_name, ctx.deadline.remaining());
    if (!model.ok) {
      traced.status = model.unavailable ? Status::Skipped : Status::Fail;
      traced.waivable = false;
      traced.reason = model.error;
      r.checks.push_back(traced);
      continue;
    }
    // Untraced probe: does a GPU answer at all? (exit 3 → SKIPPED without involving the tracer)
    const auto probe = ctx.engine(ctx.candidate).bench(model.path, {prompt}, 0, 1, 0, path, ctx.deadline.remaining());
    if (!probe.ok()) {
      r.checks.push_back(failed_call_check(model_name, probe, "candidate bench probe"));
      continue;
    }
    std::vector<pfx::trace::TraceDiff> diffs;
    bool broke = false;
    for (int rep = 0; rep < reps && !broke; ++rep) {
      std::pair<const Build*, std::string> sides[] = {{&ctx.baseline, "baseline"}, {&ctx.candidate, "candidate"}};
      std::map<std::string, pfx::trace::Summary> sums;
      for (auto& [b, label] : sides) {
        ctx.say(model_name + " rep " + std::to_string(rep + 1) + "/" + std::to_string(reps) + ": trace " + label);
        const fs::path out = ctx.work_dir / ("timing-" + model_name + "-" + std::to_string(rep) + "-" + label + ".json");
        fs::remove(out);
        ProcessSpec spec;
        spec.argv = {landing_exe.string(), "trace", "-o", out.string(), "--range", busy_range, "--skip",
                     std::to_string(warmup), "--quiet", "--"};
        // The traced command: the same `prefill bench` the engine runner would run.
        std::vector<std::string> args = {b->prefill.string(), "bench", "--model", model.path.string(), "-p",
                                         std::to_string(prompt), "-r", "1", "--warmup", std::to_string(warmup),
                                         "--path", path, "--json"};
        spec.argv.insert(spec.argv.end(), args.begin(), args.end());
        spec.env = {{"PFX_FIXTURES", ctx.fixtures_dir.string()}, {"CUDA_DEVICE_ORDER", "PCI_BUS_ID"}};
        spec.timeout_s = ctx.deadline.remaining();
        const auto p = run_process(spec);
        Check c;
        c.name = model_name;
        c.command = shell_join(spec.argv, spec.env);
        if (p.timed_out || p.signal || !p.exited || p.exit_code != 0) {
          const bool no_tracer = p.exited && p.exit_code == 4;
          c.status = no_tracer ? Status::Skipped : Status::Fail;
          c.waivable = false;
          c.reason = (no_tracer ? "tracer produced no trace (CUPTI unavailable?): " : label + " traced bench ") + p.describe() +
                     (p.tail(3).empty() ? "" : ": " + p.tail(3));
          r.checks.push_back(c);
          broke = true;
          break;
        }
        try {
          sums[label] = pfx::trace::summarize(pfx::trace::load_trace(out), out.string(), {busy_range});
        } catch (const Error& e) {
          c.status = Status::Fail;
          c.waivable = false;
          c.reason = std::string("trace unreadable: ") + e.what();
          r.checks.push_back(c);
          broke = true;
          break;
        }
      }
      if (broke) break;
      diffs.push_back(pfx::trace::diff_summaries(sums["baseline"], sums["candidate"]));
    }
    if (broke) continue;
    judge_timing_model(r, model_name, diffs, budgets, ctx.profile.origin(), prompt);
  }
  json per_model = r.details.value("models", json::array());
  std::vector<std::string> evidence = r.details.value("model_evidence", std::vector<std::string>{});
  r.details.erase("model_evidence");
  r.details["models"] = per_model;
  r.details["role_budgets"] = budgets;
  for (size_t i = 0; i < evidence.size(); ++i) r.evidence += (i ? " | " : "") + evidence[i];
  finish(r, ctx.profile, ctx.deadline.elapsed());
  return r;
}

}  // namespace pfx::gates

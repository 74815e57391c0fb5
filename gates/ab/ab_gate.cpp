// A/B gate (see ab_gate.h): runs the pairs; the verdict is ab_judge.h's, from the stored pairs.
#include "ab/ab_gate.h"

#include <cmath>
#include <map>
#include <optional>
#include <tuple>

#include "ab/ab_judge.h"
#include "contract/prefill_cli.h"
#include "core/format.h"
#include "core/gpu_monitor.h"

namespace pfx::gates {

using nlohmann::json;

namespace {

// One `prefill bench` run: tok/s per metric (each the median of the bench's own repetitions, robust
// to one slow rep) and the GPU's clock / temperature / throttle state sampled while it ran.
struct Sample {
  std::map<std::string, double> tps;
  json raw;                 // the bench results (every repetition)
  unsigned min_clock = 0, max_clock = 0, max_temp = 0;
  unsigned long long reasons = 0;
  bool gpu_sampled = false;
  double wall_s = 0;
  bool throttled() const { return is_throttling(reasons); }
};

json to_json(const Sample& s) {
  json j = {{"tps", s.tps}, {"bench", s.raw}, {"wall_s", s.wall_s}};
  if (s.min_clock) j["sm_clock_mhz"] = {{"min", s.min_clock}, {"max", s.max_clock}};
  if (s.gpu_sampled)
    j["gpu"] = {{"sm_clock_min_mhz", s.min_clock}, {"sm_clock_max_mhz", s.max_clock}, {"temperature_max_c", s.max_temp},
                {"throttle_reasons", throttle_reasons_text(s.reasons)}, {"throttled", s.throttled()}};
  return j;
}

// "pp512" → prompt 512; "tg128" → 128 generated tokens.
std::pair<std::vector<int>, int> bench_shape(const std::vector<std::string>& metrics) {
  std::vector<int> prompts;
  int gen = 0;
  for (const auto& m : metrics) {
    const int n = std::stoi(m.substr(2));
    if (m.rfind("pp", 0) == 0) prompts.push_back(n);
    else gen = std::max(gen, n);
  }
  return {prompts, gen};
}

class Bencher {
 public:
  Bencher(const GateContext& ctx, std::filesystem::path model, GpuMonitor& gpu, const AbSettings& s)
      : ctx_(ctx), model_(std::move(model)), gpu_(gpu), metrics_(s.metrics) {
    reps_ = static_cast<int>(ctx.profile.integer("ab", "reps", 3));
    path_ = ctx.profile.string("ab", "path", "fast");
    std::tie(prompts_, gen_) = bench_shape(metrics_);
  }
  // nullopt with `call` describing the failure when the run did not give a usable number.
  std::optional<Sample> run(const Build& b, int warmup, EngineCall& call) {
    Sample s;
    s.min_clock = ~0u;
    auto tick = [&] {
      if (!gpu_.available()) return;
      if (auto g = gpu_.sample()) {
        s.gpu_sampled = true;
        s.min_clock = std::min(s.min_clock, g->sm_clock_mhz);
        s.max_clock = std::max(s.max_clock, g->sm_clock_mhz);
        s.max_temp = std::max(s.max_temp, g->temperature_c);
        s.reasons |= g->throttle_reasons;
      }
    };
    call = ctx_.engine(b).bench(model_, prompts_, gen_, reps_, warmup, path_, ctx_.deadline.remaining(), tick);
    if (!call.ok()) return std::nullopt;
    s.wall_s = call.process.wall_s;
    if (!s.gpu_sampled) s.min_clock = 0;
    s.raw = call.output.value(contract::field::kResults, json::array());
    for (const auto& metric : metrics_) {
      json entry;
      for (const auto& res : s.raw)
        if (res.value(contract::field::kTest, "") == metric) entry = res;
      if (entry.is_null()) {
        call.outcome = RunOutcome::BadOutput;
        call.reason = "bench JSON has no result for test " + metric;
        return std::nullopt;
      }
      std::vector<double> reps;
      for (const auto& v : entry.value(contract::field::kSamplesTps, json::array()))
        if (v.is_number()) reps.push_back(v.get<double>());
      const double tps = reps.empty() ? entry.value(contract::field::kMeanTps, 0.0) : median(reps);
      if (!std::isfinite(tps) || tps <= 0) {
        call.outcome = RunOutcome::BadOutput;
        call.reason = "bench reported " + metric + " tok/s " + std::to_string(tps) + " (NaN, inf or not positive)";
        return std::nullopt;
      }
      s.tps[metric] = tps;
    }
    // Without NVML or nvidia-smi, the clock the bench itself reports stands for the whole run.
    const json device = call.output.value(contract::field::kDevice, json::object());
    if (!s.gpu_sampled && device.contains(contract::field::kSmClockMhz) && device[contract::field::kSmClockMhz].is_number())
      s.min_clock = s.max_clock = device[contract::field::kSmClockMhz].get<unsigned>();
    return s;
  }
  std::string command(const Build& b) const {
    return ctx_.engine(b).bench(model_, prompts_, gen_, reps_, 0, path_, 0.001).command;  // only for the text
  }

 private:
  const GateContext& ctx_;
  std::filesystem::path model_;
  GpuMonitor& gpu_;
  std::vector<std::string> metrics_;
  std::vector<int> prompts_;
  int gen_ = 0, reps_ = 3;
  std::string path_;
};

json pair_json(const Sample& a, const Sample& b) {
  json p = {{"baseline", to_json(a)}, {"candidate", to_json(b)}, {"throttled", a.throttled() || b.throttled()}};
  json ratio = json::object();
  for (const auto& [m, t] : a.tps)
    if (b.tps.count(m)) ratio[m] = b.tps.at(m) / t;
  p["ratio"] = ratio;
  return p;
}

}  // namespace

GateResult run_ab_gate(const GateContext& ctx) {
  GateResult r = ctx.start();
  for (const Build* b : {&ctx.candidate, &ctx.baseline})
    for (const auto& [list, name] : {std::pair<std::string, std::string>{"subcommands", "bench"}, {"backends", "cuda"}})
      if (auto miss = missing_capability(*b, list, name)) return skip_gate(r, *miss, ctx.deadline.elapsed());
  const AbSettings settings = ab_settings(ctx.profile);
  const int aa_pairs = static_cast<int>(ctx.profile.integer("ab", "aa_pairs", 4));
  const int min_pairs = static_cast<int>(ctx.profile.integer("ab", "min_pairs", 6));
  const int max_pairs = settings.max_pairs;
  const int step = static_cast<int>(std::max(1L, ctx.profile.integer("ab", "step_pairs", 4)));
  const int warmup = static_cast<int>(ctx.profile.integer("ab", "warmup", 1));
  const std::string model_name = ctx.profile.string("ab", "model", "");
  auto fail_with = [&](const EngineCall& call, const std::string& what) {
    r.checks.push_back(failed_call_check("ab", call, what));
    finish(r, ctx.profile, ctx.deadline.elapsed());
    return r;
  };
  auto fail_check = [&](Status st, const std::string& why) {
    Check c;
    c.name = "ab";
    c.status = st;
    c.waivable = false;
    c.reason = why;
    r.checks.push_back(c);
    finish(r, ctx.profile, ctx.deadline.elapsed());
    return r;
  };
  if (model_name.empty()) return fail_check(Status::Fail, "gates.ab.model is not set");
  if (auto probe = gpu_probe(ctx)) {
    r.checks.push_back(*probe);
    finish(r, ctx.profile, ctx.deadline.elapsed());
    return r;
  }
  const auto model = ctx.models.resolve(model_name, ctx.deadline.remaining());
  if (!model.ok) return fail_check(model.unavailable ? Status::Skipped : Status::Fail, model.error);
  GpuMonitor gpu;
  Bencher bench(ctx, model.path, gpu, settings);
  r.details["gpu_monitor"] = gpu.available() ? to_json(gpu.info()) : json{{"unavailable", gpu.why_unavailable()}};
  r.details["settings"] = {{"model", model_name}, {"metrics", settings.metrics}, {"max_regression_pct", settings.max_regression_pct},
                           {"confidence", settings.confidence}, {"aa_pairs", aa_pairs}, {"min_pairs", min_pairs},
                           {"max_pairs", max_pairs}, {"order", "ABAB"}, {"delta", "paired median of per-pair ratios"}};
  r.details["commands"] = {{"baseline", bench.command(ctx.baseline)}, {"candidate", bench.command(ctx.candidate)}};

  // Warm-up: one discarded run of each binary (also finds out whether a GPU answers at all).
  ctx.say("warm-up (discarded)");
  EngineCall call;
  if (!bench.run(ctx.baseline, warmup, call)) return fail_with(call, "baseline bench warm-up");
  if (!bench.run(ctx.candidate, warmup, call)) return fail_with(call, "candidate bench warm-up");

  // A/A: the baseline against itself shows this machine's noise in this window. Reported beside
  // the result, never added to the budget.
  json aa_pairs_json = json::array();
  for (int i = 0; i < aa_pairs; ++i) {
    ctx.say("A/A pair " + std::to_string(i + 1) + "/" + std::to_string(aa_pairs));
    auto x = bench.run(ctx.baseline, warmup, call);
    if (!x) return fail_with(call, "baseline bench (A/A)");
    auto y = bench.run(ctx.baseline, warmup, call);
    if (!y) return fail_with(call, "baseline bench (A/A)");
    aa_pairs_json.push_back(pair_json(*x, *y));
  }
  const AbMetric aa = analyse_ab_metric(aa_pairs_json, settings.primary, settings);
  const double noise = std::max(std::fabs(aa.raw.ci_pct.lo), std::fabs(aa.raw.ci_pct.hi));

  // A/B: more pairs while any metric is undecided, up to the cap (the budget never moves).
  json pairs = json::array();
  int target = min_pairs;
  for (;;) {
    while (static_cast<int>(pairs.size()) < target) {
      ctx.say("A/B pair " + std::to_string(pairs.size() + 1) + "/" + std::to_string(target) + " (cap " + std::to_string(max_pairs) + ")");
      auto x = bench.run(ctx.baseline, warmup, call);
      if (!x) return fail_with(call, "baseline bench");
      auto y = bench.run(ctx.candidate, warmup, call);
      if (!y) return fail_with(call, "candidate bench");
      pairs.push_back(pair_json(*x, *y));
    }
    bool undecided = false;
    for (const auto& m : settings.metrics) undecided |= ab_undecided(analyse_ab_metric(pairs, m, settings));
    if (!undecided || target >= max_pairs || ctx.deadline.expired()) break;
    target = std::min(max_pairs, target + step);
  }

  json headline;
  auto checks = judge_ab(pairs, settings, headline);
  unsigned clock_min = ~0u, clock_max = 0, temp_max = 0;
  int throttled = 0;
  for (const auto& p : pairs) {
    throttled += p.value("throttled", false);
    for (const char* side : {"baseline", "candidate"}) {
      const auto& s = p[side];
      if (!s.contains("sm_clock_mhz")) continue;
      clock_min = std::min(clock_min, s["sm_clock_mhz"].value("min", ~0u));
      clock_max = std::max(clock_max, s["sm_clock_mhz"].value("max", 0u));
      if (s.contains("gpu")) temp_max = std::max(temp_max, s["gpu"].value("temperature_max_c", 0u));
    }
  }
  r.details["aa"] = {{"pairs", aa_pairs_json}, {"median_delta_pct", aa.raw.median_delta_pct}, {"ci_pct", {aa.raw.ci_pct.lo, aa.raw.ci_pct.hi}},
                     {"noise_floor_pct", noise}, {"exceeds_budget", noise > settings.max_regression_pct}};
  r.details["pairs"] = pairs;
  r.details["pairs_run"] = pairs.size();
  r.details["throttled_pairs"] = throttled;
  r.details["headline"] = headline;
  if (clock_max) r.details["sm_clock_range_mhz"] = {clock_min, clock_max};
  const auto& primary = checks.front();
  r.details["median_delta_pct"] = primary.metrics["median_delta_pct"];
  r.details["ci_pct"] = primary.metrics["ci_pct"];
  r.details["wins"] = primary.metrics["wins"];
  r.details["pairs_used"] = primary.metrics["pairs"];
  r.details["decision"] = primary.metrics["decision"];

  std::string clocks = clock_max ? "SM clock " + std::to_string(clock_min) + (clock_max != clock_min ? "-" + std::to_string(clock_max) : "") +
                                       " MHz" + (temp_max ? ", max " + std::to_string(temp_max) + " °C" : std::string(", temperature not sampled"))
                                 : "SM clock not sampled (" + (gpu.available() ? std::string("no reading") : gpu.why_unavailable()) + ")";
  if (throttled) clocks += ", THROTTLED in " + std::to_string(throttled) + " pairs (set aside)";
  r.evidence = "A/B interleaved, " + std::to_string(pairs.size()) + " pairs: ";
  for (size_t i = 0; i < checks.size(); ++i) {
    const auto& m = checks[i].metrics;
    r.evidence += (i ? "; " : "") + m.value("metric", std::string()) + " " + fixed(m.value("baseline_tps_median", 0.0), 1) + " → " +
                  fixed(m.value("candidate_tps_median", 0.0), 1) + " tok/s, paired median Δ " + signed_pct(m.value("median_delta_pct", 0.0)) +
                  (m["clock_normalised_delta_pct"].is_number() ? " (clock-normalised " + signed_pct(m["clock_normalised_delta_pct"].get<double>()) + ")" : "") +
                  " " + std::to_string(m.value("wins", 0)) + "/" + std::to_string(m.value("pairs", 0)) + " wins";
  }
  r.evidence += "; budget −" + fixed(settings.max_regression_pct, 2) + "% at " + pct(settings.confidence) + "; A/A noise ±" + fixed(noise, 2) + "% over " +
                std::to_string(aa_pairs) + " pairs" + (noise > settings.max_regression_pct ? " (above the budget: more pairs taken)" : "") + "; " + clocks;
  const std::string cmd = r.details["commands"]["baseline"].get<std::string>() + "\n" + r.details["commands"]["candidate"].get<std::string>();
  for (auto& c : checks) {
    c.command = cmd;
    r.checks.push_back(c);
  }
  add_ab_figures(r, settings);
  finish(r, ctx.profile, ctx.deadline.elapsed());
  return r;
}

}  // namespace pfx::gates

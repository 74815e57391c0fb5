// A/B gate (see ab_gate.h): runs the pairs; the verdict is ab_judge.h's, from the stored pairs.
#include "ab/ab_gate.h"

#include <cmath>
#include <map>
#include <optional>
#include <tuple>

#include "ab/ab_judge.h"
#include "contract/prefill_cli.h"
#include "host/gpu_monitor.h"
#include "util/text_format.h"

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
  json ran;                 // what the bench was asked and reported it ran (core/ran_as_asked.h)
  bool throttled() const { return is_throttling(reasons); }
};

json to_json(const Sample& s) {
  json j = {{"tps", s.tps}, {"bench", s.raw}, {"wall_s", s.wall_s}, {"ran", s.ran}};
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
    path_ = ab_ask(ctx.profile).path;
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
    // A bench of another path or variant than asked measures something else: the run is unusable.
    const VerifiedCall ran = verify_call(ab_ask(ctx_.profile), call, b);
    s.ran = ran.evidence;
    if (!ran.verdict.ok()) {
      call.outcome = RunOutcome::BadOutput;
      call.reason = ran.verdict.reason();
      return std::nullopt;
    }
    verdicts_.add(ran.verdict);
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
  // The text only: the bench is not run (it used to be, with a 1 ms timeout, which sometimes
  // left a call in a fake build's log and made AbRanAsAsked flaky).
  std::string command(const Build& b) const { return ctx_.engine(b).bench_command(model_, prompts_, gen_, reps_, 0, path_); }
  // What the runs could not verify (an older baseline's bench): "; not verified: …".
  std::string notes() const { return verdicts_.note(); }

 private:
  const GateContext& ctx_;
  std::filesystem::path model_;
  GpuMonitor& gpu_;
  std::vector<std::string> metrics_;
  std::vector<int> prompts_;
  int gen_ = 0, reps_ = 3;
  std::string path_;
  RanAsAsked verdicts_;  // of every run so far
};

json pair_json(const Sample& a, const Sample& b) {
  json p = {{"baseline", to_json(a)}, {"candidate", to_json(b)}, {"throttled", a.throttled() || b.throttled()}};
  json ratio = json::object();
  for (const auto& [m, t] : a.tps)
    if (b.tps.count(m)) ratio[m] = b.tps.at(m) / t;
  p["ratio"] = ratio;
  return p;
}

// gates.ab.* as the gate runs them (the judgement's own settings are ab_judge.h's AbSettings).
struct RunSettings {
  int aa_pairs = 4, min_pairs = 6, step = 4, warmup = 1;
  std::string model;

  explicit RunSettings(const GateProfile& p)
      : aa_pairs(static_cast<int>(p.integer("ab", "aa_pairs", 4))),
        min_pairs(static_cast<int>(p.integer("ab", "min_pairs", 6))),
        step(static_cast<int>(std::max(1L, p.integer("ab", "step_pairs", 4)))),
        warmup(static_cast<int>(p.integer("ab", "warmup", 1))),
        model(p.string("ab", "model", "")) {}
};

// A bench call that gave no usable number: the gate stops with this check.
struct BenchFailure {
  EngineCall call;
  std::string what;
};

// A/A: the baseline against itself shows this machine's noise in this window. Reported beside the
// result, never added to the budget.
std::optional<BenchFailure> measure_aa(const GateContext& ctx, Bencher& bench, const RunSettings& run, json& aa_pairs) {
  EngineCall call;
  for (int i = 0; i < run.aa_pairs; ++i) {
    ctx.say("A/A pair " + std::to_string(i + 1) + "/" + std::to_string(run.aa_pairs));
    auto x = bench.run(ctx.baseline, run.warmup, call);
    if (!x) return BenchFailure{call, "baseline bench (A/A)"};
    auto y = bench.run(ctx.baseline, run.warmup, call);
    if (!y) return BenchFailure{call, "baseline bench (A/A)"};
    aa_pairs.push_back(pair_json(*x, *y));
  }
  return std::nullopt;
}

// A/B, interleaved ABAB…: min_pairs, then `step` more at a time while any metric is undecided, up
// to the cap (the budget never moves).
std::optional<BenchFailure> measure_ab(const GateContext& ctx, Bencher& bench, const RunSettings& run, const AbSettings& s,
                                       json& pairs) {
  EngineCall call;
  for (int target = run.min_pairs;; target = std::min(s.max_pairs, target + run.step)) {
    while (static_cast<int>(pairs.size()) < target) {
      ctx.say("A/B pair " + std::to_string(pairs.size() + 1) + "/" + std::to_string(target) + " (cap " + std::to_string(s.max_pairs) + ")");
      auto x = bench.run(ctx.baseline, run.warmup, call);
      if (!x) return BenchFailure{call, "baseline bench"};
      auto y = bench.run(ctx.candidate, run.warmup, call);
      if (!y) return BenchFailure{call, "candidate bench"};
      pairs.push_back(pair_json(*x, *y));
    }
    bool undecided = false;
    for (const auto& m : s.metrics) undecided |= ab_undecided(analyse_ab_metric(pairs, m, s));
    if (!undecided || target >= s.max_pairs || ctx.deadline.expired()) return std::nullopt;
  }
}

// "SM clock 1785-1980 MHz, max 48 °C", or why there is no reading; throttled pairs named. Also
// the clock range and the throttled count into details.
std::string clock_text(GateResult& r, const json& pairs, const GpuMonitor& gpu) {
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
  r.details["throttled_pairs"] = throttled;
  if (clock_max) r.details["sm_clock_range_mhz"] = {clock_min, clock_max};
  std::string clocks = clock_max ? "SM clock " + std::to_string(clock_min) + (clock_max != clock_min ? "-" + std::to_string(clock_max) : "") +
                                       " MHz" + (temp_max ? ", max " + std::to_string(temp_max) + " °C" : std::string(", temperature not sampled"))
                                 : "SM clock not sampled (" + (gpu.available() ? std::string("no reading") : gpu.why_unavailable()) + ")";
  if (throttled) clocks += ", THROTTLED in " + std::to_string(throttled) + " pairs (set aside)";
  return clocks;
}

// "A/B interleaved, 6 pairs: pp512 1000.0 → 1010.0 tok/s, paired median Δ +1.0% 5/6 wins; budget …".
std::string evidence_text(const std::vector<Check>& checks, size_t n_pairs, const AbSettings& s, const RunSettings& run,
                          double noise, const std::string& clocks) {
  std::string e = "A/B interleaved, " + std::to_string(n_pairs) + " pairs: ";
  for (size_t i = 0; i < checks.size(); ++i) {
    const auto& m = checks[i].metrics;
    e += (i ? "; " : "") + m.value("metric", std::string()) + " " + fixed(m.value("baseline_tps_median", 0.0), 1) + " → " +
         fixed(m.value("candidate_tps_median", 0.0), 1) + " tok/s, paired median Δ " + signed_percent(m.value("median_delta_pct", 0.0)) +
         (m["clock_normalised_delta_pct"].is_number() ? " (clock-normalised " + signed_percent(m["clock_normalised_delta_pct"].get<double>()) + ")" : "") +
         " " + std::to_string(m.value("wins", 0)) + "/" + std::to_string(m.value("pairs", 0)) + " wins";
  }
  e += "; budget −" + fixed(s.max_regression_pct, 2) + "% at " + percent(s.confidence) + "; A/A noise ±" + fixed(noise, 2) + "% over " +
       std::to_string(run.aa_pairs) + " pairs" + (noise > s.max_regression_pct ? " (above the budget: more pairs taken)" : "") + "; " + clocks;
  return e;
}

GateResult finished(GateResult& r, const GateContext& ctx) {
  finish(r, ctx.profile, ctx.deadline.elapsed());
  return r;
}

}  // namespace

AskedRun ab_ask(const GateProfile& profile) { return {"bench", "cuda", profile.string("ab", "path", "fast"), "", ""}; }

GateResult run_ab_gate(const GateContext& ctx) {
  GateResult r = ctx.start();
  namespace cap = contract::capability;
  if (ctx.skipped_without(r, {&ctx.candidate, &ctx.baseline}, {{cap::kSubcommands, "bench"}, {cap::kBackends, "cuda"}})) return r;
  const AbSettings settings = ab_settings(ctx.profile);
  const RunSettings run(ctx.profile);
  if (run.model.empty()) {
    r.checks.push_back(hard_failure("ab", "gates.ab.model is not set"));
    return finished(r, ctx);
  }
  if (auto probe = gpu_probe(ctx)) {
    r.checks.push_back(*probe);
    return finished(r, ctx);
  }
  const auto model = ctx.model_or_check(r, "ab", run.model);
  if (!model) return finished(r, ctx);
  GpuMonitor gpu;
  Bencher bench(ctx, *model, gpu, settings);
  r.details["gpu_monitor"] = gpu.available() ? to_json(gpu.info()) : json{{"unavailable", gpu.why_unavailable()}};
  r.details["settings"] = {{"model", run.model}, {"metrics", settings.metrics}, {"max_regression_pct", settings.max_regression_pct},
                           {"confidence", settings.confidence}, {"aa_pairs", run.aa_pairs}, {"min_pairs", run.min_pairs},
                           {"max_pairs", settings.max_pairs}, {"order", "ABAB"}, {"delta", "paired median of per-pair ratios"}};
  r.details["commands"] = {{"baseline", bench.command(ctx.baseline)}, {"candidate", bench.command(ctx.candidate)}};
  auto stop = [&](const BenchFailure& f) {
    r.checks.push_back(failed_call_check("ab", f.call, f.what));
    return finished(r, ctx);
  };

  // Warm-up: one discarded run of each binary (also finds out whether a GPU answers at all).
  ctx.say("warm-up (discarded)");
  EngineCall call;
  if (!bench.run(ctx.baseline, run.warmup, call)) return stop({call, "baseline bench warm-up"});
  if (!bench.run(ctx.candidate, run.warmup, call)) return stop({call, "candidate bench warm-up"});
  json aa_pairs = json::array();
  if (auto f = measure_aa(ctx, bench, run, aa_pairs)) return stop(*f);
  const AbMetric aa = analyse_ab_metric(aa_pairs, settings.primary, settings);
  const double noise = std::max(std::fabs(aa.raw.ci_pct.lo), std::fabs(aa.raw.ci_pct.hi));
  json pairs = json::array();
  if (auto f = measure_ab(ctx, bench, run, settings, pairs)) return stop(*f);

  json headline;
  auto checks = judge_ab(pairs, settings, headline);
  r.details["aa"] = {{"pairs", aa_pairs}, {"median_delta_pct", aa.raw.median_delta_pct}, {"ci_pct", {aa.raw.ci_pct.lo, aa.raw.ci_pct.hi}},
                     {"noise_floor_pct", noise}, {"exceeds_budget", noise > settings.max_regression_pct}};
  r.details["pairs"] = pairs;
  r.details["pairs_run"] = pairs.size();
  const std::string clocks = clock_text(r, pairs, gpu);
  r.details["headline"] = headline;
  const auto& primary = checks.front();
  for (const char* key : {"median_delta_pct", "ci_pct", "wins"}) r.details[key] = primary.metrics[key];
  r.details["pairs_used"] = primary.metrics["pairs"];
  r.details["decision"] = primary.metrics["decision"];
  r.evidence = evidence_text(checks, pairs.size(), settings, run, noise, clocks);
  const std::string cmd = r.details["commands"]["baseline"].get<std::string>() + "\n" + r.details["commands"]["candidate"].get<std::string>();
  for (auto& c : checks) {
    c.command = cmd;
    c.reason += bench.notes();
    r.checks.push_back(c);
  }
  add_ab_figures(r, settings);
  return finished(r, ctx);
}

}  // namespace pfx::gates

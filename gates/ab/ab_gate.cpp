// A/B gate (see ab_gate.h).
#include "ab/ab_gate.h"

#include <cmath>
#include <optional>

#include "ab/ab_report.h"
#include "contract/prefill_cli.h"
#include "host/gpu_monitor.h"
#include "util/text_format.h"

namespace pfx::gates {

using nlohmann::json;

namespace {

struct Sample {
  double tps = 0;
  json raw;                 // the bench result entry (every repetition)
  unsigned min_clock = 0, max_clock = 0, max_temp = 0;
  unsigned long long reasons = 0;
  bool gpu_sampled = false;
  double wall_s = 0;
  bool throttled() const { return is_throttling(reasons); }
};

json to_json(const Sample& s) {
  json j = {{"tps", s.tps}, {"bench", s.raw}, {"wall_s", s.wall_s}};
  if (s.gpu_sampled)
    j["gpu"] = {{"sm_clock_min_mhz", s.min_clock}, {"sm_clock_max_mhz", s.max_clock}, {"temperature_max_c", s.max_temp},
                {"throttle_reasons", throttle_reasons_text(s.reasons)}, {"throttled", s.throttled()}};
  return j;
}

class Bencher {
 public:
  Bencher(const GateContext& ctx, std::filesystem::path model, GpuMonitor& gpu)
      : ctx_(ctx), model_(std::move(model)), gpu_(gpu) {
    prompt_ = static_cast<int>(ctx.profile.integer("ab", "prompt_tokens", 512));
    reps_ = static_cast<int>(ctx.profile.integer("ab", "reps", 3));
    path_ = ctx.profile.string("ab", "path", "fast");
  }
  // nullopt with `failure` set when the run did not give a usable number.
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
    call = ctx_.engine(b).bench(model_, {prompt_}, 0, reps_, warmup, path_, ctx_.deadline.remaining(), tick);
    if (!call.ok()) return std::nullopt;
    s.wall_s = call.process.wall_s;
    if (!s.gpu_sampled) s.min_clock = 0;
    const std::string test = "pp" + std::to_string(prompt_);
    for (const auto& res : call.output.value(contract::field::kResults, json::array()))
      if (res.value(contract::field::kTest, "") == test) s.raw = res;
    if (s.raw.is_null()) {
      call.outcome = RunOutcome::BadOutput;
      call.reason = "bench JSON has no result for test " + test;
      return std::nullopt;
    }
    // The sample is the median of the bench's own repetitions (robust to one slow rep).
    std::vector<double> reps;
    for (const auto& v : s.raw.value(contract::field::kSamplesTps, json::array()))
      if (v.is_number()) reps.push_back(v.get<double>());
    s.tps = reps.empty() ? s.raw.value(contract::field::kMeanTps, 0.0) : median(reps);
    if (!std::isfinite(s.tps) || s.tps <= 0) {
      call.outcome = RunOutcome::BadOutput;
      call.reason = "bench reported tok/s " + std::to_string(s.tps) + " (NaN, inf or not positive)";
      return std::nullopt;
    }
    const json device = call.output.value(contract::field::kDevice, json::object());
    if (!s.gpu_sampled && device.contains(contract::field::kSmClockMhz) && device[contract::field::kSmClockMhz].is_number()) {
      s.min_clock = s.max_clock = device[contract::field::kSmClockMhz].get<unsigned>();
    }
    return s;
  }
  std::string command(const Build& b) const {
    return ctx_.engine(b).bench(model_, {prompt_}, 0, reps_, 0, path_, 0.001).command;  // only for the text
  }
  int prompt() const { return prompt_; }

 private:
  const GateContext& ctx_;
  std::filesystem::path model_;
  GpuMonitor& gpu_;
  int prompt_ = 512, reps_ = 3;
  std::string path_;
};

// gates.ab.* as the gate uses them.
struct AbSettings {
  double max_regression = 2.0, confidence = 0.95;
  int aa_pairs = 4, min_pairs = 6, max_pairs = 24, step = 4, warmup = 1;
  std::string model;

  explicit AbSettings(const GateProfile& p)
      : max_regression(p.number("ab", "max_regression_pct", 2.0)),
        confidence(p.number("ab", "confidence", 0.95)),
        aa_pairs(static_cast<int>(p.integer("ab", "aa_pairs", 4))),
        min_pairs(static_cast<int>(p.integer("ab", "min_pairs", 6))),
        max_pairs(static_cast<int>(p.integer("ab", "max_pairs", 24))),
        step(static_cast<int>(std::max(1L, p.integer("ab", "step_pairs", 4)))),
        warmup(static_cast<int>(p.integer("ab", "warmup", 1))),
        model(p.string("ab", "model", "")) {}
};

// A bench call that gave no usable number: the gate stops with this check.
struct BenchFailure {
  EngineCall call;
  std::string what;
};

// The A/A pass: the baseline against itself gives the noise floor of this machine in this window.
struct AaPass {
  std::vector<Sample> a, a2;
  std::vector<double> ratios;
  AbAnalysis analysis;
  double noise_pct = 0;  // the larger end of the A/A CI of the median Δ%
};

std::optional<BenchFailure> measure_aa(const GateContext& ctx, Bencher& bench, const AbSettings& s, AaPass& aa) {
  EngineCall call;
  for (int i = 0; i < s.aa_pairs; ++i) {
    ctx.say("A/A pair " + std::to_string(i + 1) + "/" + std::to_string(s.aa_pairs));
    auto x = bench.run(ctx.baseline, s.warmup, call);
    if (!x) return BenchFailure{call, "baseline bench (A/A)"};
    auto y = bench.run(ctx.baseline, s.warmup, call);
    if (!y) return BenchFailure{call, "baseline bench (A/A)"};
    aa.a.push_back(*x);
    aa.a2.push_back(*y);
    aa.ratios.push_back(y->tps / x->tps);
  }
  aa.analysis = analyse_pairs(aa.ratios, s.max_regression, s.confidence);
  aa.noise_pct = std::max(std::fabs(aa.analysis.ci_pct.lo), std::fabs(aa.analysis.ci_pct.hi));
  return std::nullopt;
}

// The interleaved ABAB… pass: min_pairs, then `step` more at a time while undecided, up to max_pairs.
struct AbPass {
  std::vector<Sample> a, b;
  AbAnalysis analysis;
  int throttled_pairs = 0;
};

std::optional<BenchFailure> measure_ab(const GateContext& ctx, Bencher& bench, const AbSettings& s, double threshold, AbPass& ab) {
  EngineCall call;
  for (int target = s.min_pairs;; target = std::min(s.max_pairs, target + s.step)) {
    while (static_cast<int>(ab.a.size()) < target) {
      ctx.say("A/B pair " + std::to_string(ab.a.size() + 1) + "/" + std::to_string(target) + " (cap " + std::to_string(s.max_pairs) + ")");
      auto x = bench.run(ctx.baseline, s.warmup, call);
      if (!x) return BenchFailure{call, "baseline bench"};
      auto y = bench.run(ctx.candidate, s.warmup, call);
      if (!y) return BenchFailure{call, "candidate bench"};
      ab.a.push_back(*x);
      ab.b.push_back(*y);
    }
    std::vector<double> ratios;
    ab.throttled_pairs = 0;
    for (size_t i = 0; i < ab.a.size(); ++i) {
      if (ab.a[i].throttled() || ab.b[i].throttled()) {
        ++ab.throttled_pairs;  // set aside: a throttled clock measures the cooling, not the code
        continue;
      }
      ratios.push_back(ab.b[i].tps / ab.a[i].tps);
    }
    ab.analysis = analyse_pairs(ratios, threshold, s.confidence);
    if (ab.analysis.decision != AbDecision::Undecided || target >= s.max_pairs || ctx.deadline.expired()) return std::nullopt;
  }
}

double median_tps(const std::vector<Sample>& v) {
  std::vector<double> tps;
  for (const auto& x : v) tps.push_back(x.tps);
  return median(tps);
}

// Every sample and number into details, and the headline row with the samples table.
void record(GateResult& r, int prompt, const AaPass& aa, const AbPass& ab, double threshold) {
  const double med_a = median_tps(ab.a), med_b = median_tps(ab.b);
  json pairs = json::array();
  for (size_t i = 0; i < ab.a.size(); ++i)
    pairs.push_back({{"baseline", to_json(ab.a[i])}, {"candidate", to_json(ab.b[i])}, {"ratio", ab.b[i].tps / ab.a[i].tps},
                     {"excluded_throttled", ab.a[i].throttled() || ab.b[i].throttled()}});
  json aa_json = json::array();
  for (size_t i = 0; i < aa.a.size(); ++i) aa_json.push_back({{"a", to_json(aa.a[i])}, {"a2", to_json(aa.a2[i])}, {"ratio", aa.ratios[i]}});
  r.details["aa"] = {{"pairs", aa_json}, {"median_delta_pct", aa.analysis.median_delta_pct},
                     {"ci_pct", {aa.analysis.ci_pct.lo, aa.analysis.ci_pct.hi}}, {"noise_floor_pct", aa.noise_pct}};
  r.details["pairs"] = pairs;
  r.details["baseline_tps_median"] = med_a;
  r.details["candidate_tps_median"] = med_b;
  r.details["median_delta_pct"] = ab.analysis.median_delta_pct;
  r.details["ci_pct"] = {ab.analysis.ci_pct.lo, ab.analysis.ci_pct.hi};
  r.details["wins"] = ab.analysis.wins;
  r.details["pairs_used"] = ab.analysis.pairs;
  r.details["pairs_run"] = ab.a.size();
  r.details["throttled_pairs"] = ab.throttled_pairs;
  r.details["effective_threshold_pct"] = threshold;
  r.details["decision"] = to_string(ab.analysis.decision);
  AbFigures figures{"pp" + std::to_string(prompt) + " tok/s", med_a, med_b, aa.noise_pct,
                    std::array<double, 2>{ab.analysis.ci_pct.lo, ab.analysis.ci_pct.hi}};
  for (size_t i = 0; i < ab.a.size(); ++i) figures.pairs.push_back({ab.a[i].tps, ab.b[i].tps, ab.a[i].throttled() || ab.b[i].throttled()});
  for (size_t i = 0; i < aa.a.size(); ++i) figures.aa.push_back({aa.a[i].tps, aa.a2[i].tps});
  add_ab_output(r, figures);
}

// "SM clock 1785-1980 MHz, max 48 °C", or why there is no reading; throttled pairs named.
std::string clock_text(const AbPass& ab, const GpuMonitor& gpu) {
  unsigned clock_min = ~0u, clock_max = 0, temp_max = 0;
  bool any_clock = false;
  for (size_t i = 0; i < ab.a.size(); ++i)
    for (const Sample* x : {&ab.a[i], &ab.b[i]})
      if (x->min_clock) {
        any_clock = true;
        clock_min = std::min(clock_min, x->min_clock);
        clock_max = std::max(clock_max, x->max_clock);
        temp_max = std::max(temp_max, x->max_temp);
      }
  std::string clocks = any_clock ? "SM clock " + std::to_string(clock_min) + (clock_max != clock_min ? "-" + std::to_string(clock_max) : "") +
                                       " MHz" +
                                       (temp_max ? ", max " + std::to_string(temp_max) + " °C" : std::string(", temperature not sampled"))
                                 : "SM clock not sampled (" + (gpu.available() ? std::string("no reading") : gpu.why_unavailable()) + ")";
  if (ab.throttled_pairs) clocks += ", THROTTLED in " + std::to_string(ab.throttled_pairs) + " pairs (set aside)";
  return clocks;
}

// The decision as a check: PASS (improved, no change), FAIL (regressed), INCONCLUSIVE (undecided,
// or too few unthrottled pairs).
Check judge(const AbPass& ab, const AbSettings& s, double threshold, const std::string& ci) {
  const AbAnalysis& a = ab.analysis;
  Check c;
  c.name = "ab";
  c.metrics = {{"median_delta_pct", a.median_delta_pct}, {"ci_pct", {a.ci_pct.lo, a.ci_pct.hi}}, {"wins", a.wins},
               {"pairs", a.pairs}, {"threshold_pct", threshold}};
  if (a.pairs < 2) {
    c.status = Status::Inconclusive;
    c.reason = "only " + std::to_string(a.pairs) + " unthrottled pairs: clocks were throttled";
    return c;
  }
  switch (a.decision) {
    case AbDecision::Improved:
      c.status = Status::Pass;
      c.reason = "improved: " + signed_percent(a.median_delta_pct) + ", CI " + ci + " excludes zero";
      break;
    case AbDecision::NoChange:
      c.status = Status::Pass;
      c.reason = "no change: median Δ " + signed_percent(a.median_delta_pct) + ", CI " + ci + " above −" + fixed(threshold, 2) + "%";
      break;
    case AbDecision::Regressed:
      c.status = Status::Fail;
      c.reason = "regressed: median Δ " + signed_percent(a.median_delta_pct) + " beyond −" + fixed(threshold, 2) + "%, CI " + ci +
                 " excludes zero";
      break;
    case AbDecision::Undecided:
      c.status = Status::Inconclusive;
      c.reason = "undecided after " + std::to_string(ab.a.size()) + " pairs (cap " + std::to_string(s.max_pairs) + "): median Δ " +
                 signed_percent(a.median_delta_pct) + ", CI " + ci + " straddles −" + fixed(threshold, 2) + "%";
      break;
  }
  return c;
}

GateResult finished(GateResult& r, const GateContext& ctx) {
  finish(r, ctx.profile, ctx.deadline.elapsed());
  return r;
}

}  // namespace

GateResult run_ab_gate(const GateContext& ctx) {
  GateResult r = ctx.start();
  namespace cap = contract::capability;
  if (ctx.skipped_without(r, {&ctx.candidate, &ctx.baseline}, {{cap::kSubcommands, "bench"}, {cap::kBackends, "cuda"}})) return r;
  const AbSettings s(ctx.profile);
  if (s.model.empty()) {
    r.checks.push_back(hard_failure("ab", "gates.ab.model is not set"));
    return finished(r, ctx);
  }
  if (auto probe = gpu_probe(ctx)) {
    r.checks.push_back(*probe);
    return finished(r, ctx);
  }
  const auto model = ctx.model_or_check(r, "ab", s.model);
  if (!model) return finished(r, ctx);
  GpuMonitor gpu;
  Bencher bench(ctx, *model, gpu);
  r.details["gpu_monitor"] = gpu.available() ? to_json(gpu.info()) : json{{"unavailable", gpu.why_unavailable()}};
  r.details["settings"] = {{"model", s.model}, {"prompt_tokens", bench.prompt()}, {"max_regression_pct", s.max_regression},
                           {"confidence", s.confidence}, {"aa_pairs", s.aa_pairs}, {"min_pairs", s.min_pairs},
                           {"max_pairs", s.max_pairs}, {"order", "ABAB"}};
  r.details["commands"] = {{"baseline", bench.command(ctx.baseline)}, {"candidate", bench.command(ctx.candidate)}};
  auto stop = [&](const BenchFailure& f) {
    r.checks.push_back(failed_call_check("ab", f.call, f.what));
    return finished(r, ctx);
  };

  // Warm-up: one discarded run of each binary (also finds out whether a GPU answers at all).
  ctx.say("warm-up (discarded)");
  EngineCall call;
  if (!bench.run(ctx.baseline, s.warmup, call)) return stop({call, "baseline bench warm-up"});
  if (!bench.run(ctx.candidate, s.warmup, call)) return stop({call, "candidate bench warm-up"});
  AaPass aa;
  if (auto f = measure_aa(ctx, bench, s, aa)) return stop(*f);
  const double threshold = std::max(s.max_regression, aa.noise_pct);
  AbPass ab;
  if (auto f = measure_ab(ctx, bench, s, threshold, ab)) return stop(*f);

  record(r, bench.prompt(), aa, ab, threshold);
  const std::string ci = signed_percent(ab.analysis.ci_pct.lo) + ".." + signed_percent(ab.analysis.ci_pct.hi);
  r.evidence = "A/B interleaved " + std::to_string(ab.analysis.wins) + "/" + std::to_string(ab.analysis.pairs) + " wins: " +
               fixed(median_tps(ab.a), 1) + " → " + fixed(median_tps(ab.b), 1) + " tok/s (pp" + std::to_string(bench.prompt()) +
               "), median Δ " + signed_percent(ab.analysis.median_delta_pct) + " (" + percent(s.confidence) + " CI " + ci +
               "); A/A noise ±" + fixed(aa.noise_pct, 2) + "% over " + std::to_string(s.aa_pairs) + " pairs; " + clock_text(ab, gpu);
  Check c = judge(ab, s, threshold, ci);
  c.command = r.details["commands"]["baseline"].get<std::string>() + "\n" + r.details["commands"]["candidate"].get<std::string>();
  r.checks.push_back(c);
  return finished(r, ctx);
}

}  // namespace pfx::gates

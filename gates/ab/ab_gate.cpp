// A/B gate (see ab_gate.h).
#include "ab/ab_gate.h"

#include "contract/prefill_cli.h"

#include <cmath>
#include <optional>

#include "ab/ab_report.h"
#include "core/format.h"
#include "core/gpu_monitor.h"

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

}  // namespace

GateResult run_ab_gate(const GateContext& ctx) {
  GateResult r = ctx.start();
  for (const Build* b : {&ctx.candidate, &ctx.baseline})
    for (const auto& [list, name] : {std::pair<std::string, std::string>{"subcommands", "bench"}, {"backends", "cuda"}})
      if (auto miss = missing_capability(*b, list, name)) {
        r.status = Status::Skipped;
        r.reason = *miss;
        r.duration_s = ctx.deadline.elapsed();
        return r;
      }
  const double max_regression = ctx.profile.number("ab", "max_regression_pct", 2.0);
  const double confidence = ctx.profile.number("ab", "confidence", 0.95);
  const int aa_pairs = static_cast<int>(ctx.profile.integer("ab", "aa_pairs", 4));
  const int min_pairs = static_cast<int>(ctx.profile.integer("ab", "min_pairs", 6));
  const int max_pairs = static_cast<int>(ctx.profile.integer("ab", "max_pairs", 24));
  const int step = static_cast<int>(std::max(1L, ctx.profile.integer("ab", "step_pairs", 4)));
  const int warmup = static_cast<int>(ctx.profile.integer("ab", "warmup", 1));
  const std::string model_name = ctx.profile.string("ab", "model", "");
  Check c;
  c.name = "ab";
  auto fail_with = [&](const EngineCall& call, const std::string& what) {
    r.checks.push_back(failed_call_check("ab", call, what));
    finish(r, ctx.profile, ctx.deadline.elapsed());
    return r;
  };
  if (model_name.empty()) {
    c.status = Status::Fail;
    c.waivable = false;
    c.reason = "gates.ab.model is not set";
    r.checks.push_back(c);
    finish(r, ctx.profile, ctx.deadline.elapsed());
    return r;
  }
  if (auto probe = gpu_probe(ctx)) {
    r.checks.push_back(*probe);
    finish(r, ctx.profile, ctx.deadline.elapsed());
    return r;
  }
  const auto model = ctx.models.resolve(model_name, ctx.deadline.remaining());
  if (!model.ok) {
    c.status = model.unavailable ? Status::Skipped : Status::Fail;
    c.waivable = false;
    c.reason = model.error;
    r.checks.push_back(c);
    finish(r, ctx.profile, ctx.deadline.elapsed());
    return r;
  }
  GpuMonitor gpu;
  Bencher bench(ctx, model.path, gpu);
  r.details["gpu_monitor"] = gpu.available() ? to_json(gpu.info()) : json{{"unavailable", gpu.why_unavailable()}};
  r.details["settings"] = {{"model", model_name}, {"prompt_tokens", bench.prompt()}, {"max_regression_pct", max_regression},
                           {"confidence", confidence}, {"aa_pairs", aa_pairs}, {"min_pairs", min_pairs},
                           {"max_pairs", max_pairs}, {"order", "ABAB"}};
  r.details["commands"] = {{"baseline", bench.command(ctx.baseline)}, {"candidate", bench.command(ctx.candidate)}};

  // Warm-up: one discarded run of each binary (also finds out whether a GPU answers at all).
  ctx.say("warm-up (discarded)");
  EngineCall call;
  if (!bench.run(ctx.baseline, warmup, call)) return fail_with(call, "baseline bench warm-up");
  if (!bench.run(ctx.candidate, warmup, call)) return fail_with(call, "candidate bench warm-up");

  // A/A: the baseline against itself gives the noise floor of this machine in this window.
  std::vector<Sample> aa_a, aa_b;
  std::vector<double> aa_ratios;
  for (int i = 0; i < aa_pairs; ++i) {
    ctx.say("A/A pair " + std::to_string(i + 1) + "/" + std::to_string(aa_pairs));
    auto x = bench.run(ctx.baseline, warmup, call);
    if (!x) return fail_with(call, "baseline bench (A/A)");
    auto y = bench.run(ctx.baseline, warmup, call);
    if (!y) return fail_with(call, "baseline bench (A/A)");
    aa_a.push_back(*x);
    aa_b.push_back(*y);
    aa_ratios.push_back(y->tps / x->tps);
  }
  const AbAnalysis aa = analyse_pairs(aa_ratios, max_regression, confidence);
  const double noise = std::max(std::fabs(aa.ci_pct.lo), std::fabs(aa.ci_pct.hi));
  const double threshold = std::max(max_regression, noise);

  std::vector<Sample> sa, sb;
  AbAnalysis ab;
  std::vector<double> ratios;
  int throttled_pairs = 0;
  int target = min_pairs;
  for (;;) {
    while (static_cast<int>(sa.size()) < target) {
      ctx.say("A/B pair " + std::to_string(sa.size() + 1) + "/" + std::to_string(target) + " (cap " + std::to_string(max_pairs) + ")");
      auto x = bench.run(ctx.baseline, warmup, call);
      if (!x) return fail_with(call, "baseline bench");
      auto y = bench.run(ctx.candidate, warmup, call);
      if (!y) return fail_with(call, "candidate bench");
      sa.push_back(*x);
      sb.push_back(*y);
    }
    ratios.clear();
    throttled_pairs = 0;
    for (size_t i = 0; i < sa.size(); ++i) {
      if (sa[i].throttled() || sb[i].throttled()) {
        ++throttled_pairs;  // set aside: a throttled clock measures the cooling, not the code
        continue;
      }
      ratios.push_back(sb[i].tps / sa[i].tps);
    }
    ab = analyse_pairs(ratios, threshold, confidence);
    if (ab.decision != AbDecision::Undecided || target >= max_pairs || ctx.deadline.expired()) break;
    target = std::min(max_pairs, target + step);
  }

  std::vector<double> tps_a, tps_b;
  for (const auto& s : sa) tps_a.push_back(s.tps);
  for (const auto& s : sb) tps_b.push_back(s.tps);
  const double med_a = median(tps_a), med_b = median(tps_b);
  json pairs = json::array();
  unsigned clock_min = ~0u, clock_max = 0, temp_max = 0;
  bool any_clock = false;
  for (size_t i = 0; i < sa.size(); ++i) {
    pairs.push_back({{"baseline", to_json(sa[i])}, {"candidate", to_json(sb[i])}, {"ratio", sb[i].tps / sa[i].tps},
                     {"excluded_throttled", sa[i].throttled() || sb[i].throttled()}});
    for (const Sample* s : {&sa[i], &sb[i]})
      if (s->min_clock) {
        any_clock = true;
        clock_min = std::min(clock_min, s->min_clock);
        clock_max = std::max(clock_max, s->max_clock);
        temp_max = std::max(temp_max, s->max_temp);
      }
  }
  json aa_json = json::array();
  for (size_t i = 0; i < aa_a.size(); ++i)
    aa_json.push_back({{"a", to_json(aa_a[i])}, {"a2", to_json(aa_b[i])}, {"ratio", aa_ratios[i]}});
  r.details["aa"] = {{"pairs", aa_json}, {"median_delta_pct", aa.median_delta_pct}, {"ci_pct", {aa.ci_pct.lo, aa.ci_pct.hi}},
                     {"noise_floor_pct", noise}};
  r.details["pairs"] = pairs;
  r.details["baseline_tps_median"] = med_a;
  r.details["candidate_tps_median"] = med_b;
  r.details["median_delta_pct"] = ab.median_delta_pct;
  r.details["ci_pct"] = {ab.ci_pct.lo, ab.ci_pct.hi};
  r.details["wins"] = ab.wins;
  r.details["pairs_used"] = ab.pairs;
  r.details["pairs_run"] = sa.size();
  r.details["throttled_pairs"] = throttled_pairs;
  r.details["effective_threshold_pct"] = threshold;
  r.details["decision"] = to_string(ab.decision);
  AbFigures figures{"pp" + std::to_string(bench.prompt()) + " tok/s", med_a, med_b, noise,
                    std::array<double, 2>{ab.ci_pct.lo, ab.ci_pct.hi}};
  for (size_t i = 0; i < sa.size(); ++i) figures.pairs.push_back({sa[i].tps, sb[i].tps, sa[i].throttled() || sb[i].throttled()});
  for (size_t i = 0; i < aa_a.size(); ++i) figures.aa.push_back({aa_a[i].tps, aa_b[i].tps});
  add_ab_output(r, figures);

  const std::string ci = signed_pct(ab.ci_pct.lo) + ".." + signed_pct(ab.ci_pct.hi);
  std::string clocks = any_clock ? "SM clock " + std::to_string(clock_min) +
                                       (clock_max != clock_min ? "-" + std::to_string(clock_max) : "") + " MHz" +
                                       (temp_max ? ", max " + std::to_string(temp_max) + " °C" : std::string(", temperature not sampled"))
                                 : "SM clock not sampled (" + (gpu.available() ? std::string("no reading") : gpu.why_unavailable()) + ")";
  if (throttled_pairs) clocks += ", THROTTLED in " + std::to_string(throttled_pairs) + " pairs (set aside)";
  r.evidence = "A/B interleaved " + std::to_string(ab.wins) + "/" + std::to_string(ab.pairs) + " wins: " + fixed(med_a, 1) +
               " → " + fixed(med_b, 1) + " tok/s (pp" + std::to_string(bench.prompt()) + "), median Δ " +
               signed_pct(ab.median_delta_pct) + " (" + pct(confidence) + " CI " + ci + "); A/A noise ±" + fixed(noise, 2) +
               "% over " + std::to_string(aa_pairs) + " pairs; " + clocks;
  c.metrics = {{"median_delta_pct", ab.median_delta_pct}, {"ci_pct", {ab.ci_pct.lo, ab.ci_pct.hi}}, {"wins", ab.wins},
               {"pairs", ab.pairs}, {"threshold_pct", threshold}};
  c.command = r.details["commands"]["baseline"].get<std::string>() + "\n" + r.details["commands"]["candidate"].get<std::string>();
  if (ab.pairs < 2) {
    c.status = Status::Inconclusive;
    c.reason = "only " + std::to_string(ab.pairs) + " unthrottled pairs: clocks were throttled";
  } else {
    switch (ab.decision) {
      case AbDecision::Improved:
        c.status = Status::Pass;
        c.reason = "improved: " + signed_pct(ab.median_delta_pct) + ", CI " + ci + " excludes zero";
        break;
      case AbDecision::NoChange:
        c.status = Status::Pass;
        c.reason = "no change: median Δ " + signed_pct(ab.median_delta_pct) + ", CI " + ci + " above −" + fixed(threshold, 2) + "%";
        break;
      case AbDecision::Regressed:
        c.status = Status::Fail;
        c.reason = "regressed: median Δ " + signed_pct(ab.median_delta_pct) + " beyond −" + fixed(threshold, 2) + "%, CI " + ci +
                   " excludes zero";
        break;
      case AbDecision::Undecided:
        c.status = Status::Inconclusive;
        c.reason = "undecided after " + std::to_string(sa.size()) + " pairs (cap " + std::to_string(max_pairs) + "): median Δ " +
                   signed_pct(ab.median_delta_pct) + ", CI " + ci + " straddles −" + fixed(threshold, 2) + "%";
        break;
    }
  }
  r.checks.push_back(c);
  finish(r, ctx.profile, ctx.deadline.elapsed());
  return r;
}

}  // namespace pfx::gates

// The timing gate's judgement on the tracer's recorded traces (tests/gates/trace/data: engine_a
// is the "baseline", engine_b the "candidate": k_gemm_q4k 2,000 → 1,500 ns per launch, k_gemm_fused
// replaced by k_gemm_fused_v2): per-kernel and per-role deltas per prefill pass from 5 repetitions,
// kernels added and removed, significance, and role budgets judged on the interval's bound.
#include <gtest/gtest.h>

#include <filesystem>

#include "timing/timing_gate.h"
#include "trace/summary.h"
#include "trace/trace_json.h"

using namespace pfx::gates;
using nlohmann::json;
namespace fs = std::filesystem;

namespace {
pfx::trace::Summary load(const std::string& name) {
  const fs::path p = fs::path(PFX_TRACE_DATA) / name;
  return pfx::trace::summarize(pfx::trace::load_trace(p), p.string());
}
const json* row(const json& rows, const std::string& key) {
  for (const auto& r : rows)
    if (r["key"] == key) return &r;
  return nullptr;
}
// The timing gate's result for model "toy" (512 tokens) over these repetitions' diffs.
GateResult judged(const std::vector<pfx::trace::TraceDiff>& repetitions, const TimingSettings& settings = {}) {
  GateResult r;
  r.gate = "timing";
  judge_timing_model(r, "toy", repetitions, settings, 512);
  settle_from_checks(r);
  return r;
}
}  // namespace

TEST(TimingGate, PerKernelAndPerRoleDeltasFromRecordedTraces) {
  const auto d = pfx::trace::diff_summaries(load("engine_a.trace.json"), load("engine_b.trace.json"));
  GateResult r = judged(std::vector<pfx::trace::TraceDiff>(5, d));
  EXPECT_EQ(r.status, Status::Pass);
  const auto& m = r.details["models"][0];
  EXPECT_TRUE(m["per_pass"].get<bool>());
  const json* q4k = row(m["kernels"], "k_gemm_q4k(float const*, float*, int)");
  ASSERT_NE(q4k, nullptr);
  EXPECT_DOUBLE_EQ((*q4k)["baseline_ns"].get<double>(), 4000);   // two attn_v launches per pass
  EXPECT_DOUBLE_EQ((*q4k)["candidate_ns"].get<double>(), 3000);
  EXPECT_DOUBLE_EQ((*q4k)["delta_pct"].get<double>(), -25.0);
  EXPECT_EQ((*q4k)["verdict"], "FASTER");  // 5 of 5 repetitions apart (tied within each side)
  EXPECT_LT((*q4k)["p_value"].get<double>(), 0.05);
  ASSERT_NE(row(m["kernels"], "k_gemm_fused_v2(float const*, float*, int)"), nullptr);
  EXPECT_EQ((*row(m["kernels"], "k_gemm_fused_v2(float const*, float*, int)"))["status"], "added");
  EXPECT_EQ((*row(m["kernels"], "k_gemm_fused(float const*, float*, int)"))["status"], "removed");
  const json* attn_v = row(m["roles"], "attn_v");
  ASSERT_NE(attn_v, nullptr);
  EXPECT_DOUBLE_EQ((*attn_v)["delta_pct"].get<double>(), -25.0);
  const auto ev = m["evidence"].get<std::string>();
  EXPECT_NE(ev.find("top movers (α 0.05): k_gemm_q4k(float const*, float*, int) 4,000 → 3,000 ns (-25.0%, p="), std::string::npos) << ev;
  EXPECT_NE(ev.find("kernels added 1, removed"), std::string::npos) << ev;
}

TEST(TimingGate, RoleBudgetFailsOnTheIntervalBound) {
  // Reversed: the "candidate" is the slower engine_a, attn_v +33%.
  const auto slower = pfx::trace::diff_summaries(load("engine_b.trace.json"), load("engine_a.trace.json"));
  TimingSettings tight, generous;
  tight.role_budgets = json::parse(R"([{"role":"attn_v","max_regression_pct":5}])");
  generous.role_budgets = json::parse(R"([{"role":"attn*","max_regression_pct":50}])");
  GateResult r = judged(std::vector<pfx::trace::TraceDiff>(5, slower), tight);
  EXPECT_EQ(r.status, Status::Fail);
  bool found = false;
  for (const auto& c : r.checks)
    if (c.name == "toy role attn_v") {
      found = true;
      EXPECT_EQ(c.status, Status::Fail);
      EXPECT_NE(c.reason.find("+33.3% (95.0% CI +33.3%..+33.3%) beyond budget +5.0%"), std::string::npos) << c.reason;
    }
  EXPECT_TRUE(found);
  // A generous budget passes; an empty trace pair checks nothing and fails.
  GateResult ok = judged(std::vector<pfx::trace::TraceDiff>(5, slower), generous);
  EXPECT_EQ(ok.status, Status::Pass);
  GateResult none = judged({});
  EXPECT_EQ(none.status, Status::Fail);
}

TEST(TimingGate, SameBuildTwiceIsNoSignificantChange) {
  const auto same = pfx::trace::diff_summaries(load("engine_a.trace.json"), load("engine_a.trace.json"));
  GateResult r = judged(std::vector<pfx::trace::TraceDiff>(5, same));
  EXPECT_EQ(r.status, Status::Pass);
  EXPECT_TRUE(r.details["models"][0]["movers"].empty());
  EXPECT_NE(r.details["models"][0]["evidence"].get<std::string>().find("no significant change"), std::string::npos);
}

// A row merged from roles the two builds group differently (trace/diff.h) is "unchanged code" only
// when every member role's kernels are: a candidate whose grouped range happens to hold an
// unchanged kernel cannot exempt the whole union from its role budget.
TEST(TimingGate, MergedRoleIsUnchangedCodeOnlyWhenEveryMemberIs) {
  pfx::trace::DiffRow qkv;
  qkv.key = "attn_q+attn_k+attn_v";
  qkv.members = {"attn_k", "attn_q", "attn_q+attn_k+attn_v", "attn_v"};
  qkv.a_samples_ns = {3400};
  qkv.b_samples_ns = {4400};  // +29%
  qkv.a_ns = 3400, qkv.b_ns = 4400, qkv.delta_ns = 1000, qkv.delta_percent = 1000.0 / 34;
  pfx::trace::TraceDiff d;
  d.per_pass = true;
  d.a_kernel_ns = d.a_busy_ns = 3400;
  d.b_kernel_ns = d.b_busy_ns = 4400;
  d.roles = {qkv};
  const auto verdict_with = [&](const json& roles) {
    GateResult r;
    r.gate = "timing";
    judge_timing_model(r, "toy", std::vector<pfx::trace::TraceDiff>(5, d), {}, 512,
                       json{{"kernels", json::object()}, {"roles", roles}, {"status", "available"}});
    const json* row_qkv = row(r.details["models"][0]["roles"], "attn_q+attn_k+attn_v");
    return row_qkv ? std::make_pair((*row_qkv)["sass"].get<std::string>(), (*row_qkv)["verdict"].get<std::string>())
                   : std::make_pair(std::string("missing"), std::string("missing"));
  };
  const json all_unchanged = {{"attn_q", "unchanged"}, {"attn_k", "unchanged"}, {"attn_v", "unchanged"},
                              {"attn_q+attn_k+attn_v", "unchanged"}};
  EXPECT_EQ(verdict_with(all_unchanged), std::make_pair(std::string("unchanged"), std::string("unchanged code")));
  json one_changed = all_unchanged;
  one_changed["attn_v"] = "changed";
  EXPECT_EQ(verdict_with(one_changed).first, "changed");
  EXPECT_NE(verdict_with(one_changed).second, "unchanged code");
  json one_unknown = all_unchanged;
  one_unknown.erase("attn_k");
  EXPECT_EQ(verdict_with(one_unknown).first, "unavailable");
}

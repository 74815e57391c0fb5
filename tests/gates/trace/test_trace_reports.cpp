// `summarize` and `diff` on the hand-made traces in data/ (make_synthetic_traces.py documents every
// number used here): per-kernel, per-range and per-role totals, TFLOP/s, busy time as the union of
// kernel intervals, per-pass normalization, sorting by |delta|, and the text/JSON forms.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <set>
#include <string>
#include <tuple>
#include <vector>

#include "trace/diff.h"
#include "trace/roles.h"
#include "trace/summary.h"
#include "trace/trace_json.h"
#include "trace_test_util.h"
#include "util/text_format.h"

namespace pfx::trace {
namespace {

using testing::data_file;

Summary summary_of(const std::string& name) { return summarize(load_trace(data_file(name)), name); }

const RangeGroupStats& group(const std::vector<RangeGroupStats>& groups, const std::string& key) {
  for (const auto& g : groups)
    if (g.key == key) return g;
  ADD_FAILURE() << "no group " << key;
  static RangeGroupStats none;
  return none;
}

const KernelStats& kernel(const Summary& s, const std::string& prefix) {
  for (const auto& k : s.kernels)
    if (k.name.rfind(prefix, 0) == 0) return k;
  ADD_FAILURE() << "no kernel " << prefix;
  static KernelStats none;
  return none;
}

TEST(IntervalUnion, MergesOverlapsAndIgnoresEmptyIntervals) {
  EXPECT_EQ(interval_union_ns({}), 0u);
  EXPECT_EQ(interval_union_ns({{10, 20}, {30, 40}}), 20u);
  EXPECT_EQ(interval_union_ns({{30, 40}, {10, 35}}), 30u);
  EXPECT_EQ(interval_union_ns({{10, 50}, {20, 30}}), 40u);
  EXPECT_EQ(interval_union_ns({{10, 20}, {20, 30}}), 20u);
  EXPECT_EQ(interval_union_ns({{10, 10}, {5, 5}}), 0u);
}

TEST(Summary, PerKernelTotals) {
  Summary s = summary_of("engine_a.trace.json");
  EXPECT_EQ(s.kernel_count, 11u);
  EXPECT_EQ(s.total_kernel_ns, 24300u);
  EXPECT_EQ(s.no_range_ns, 300u);
  EXPECT_EQ(s.device, "NVIDIA H200 (synthetic)");
  const KernelStats& q4k = kernel(s, "k_gemm_q4k");
  EXPECT_EQ(q4k.count, 4u);
  EXPECT_EQ(q4k.total_ns, 8000u);
  EXPECT_DOUBLE_EQ(q4k.mean_ns, 2000.0);
  EXPECT_NEAR(q4k.share, 8000.0 / 24300.0, 1e-12);
  EXPECT_EQ(kernel(s, "k_fill").count, 1u);
  // Largest first; equal totals by name.
  ASSERT_GE(s.kernels.size(), 2u);
  EXPECT_EQ(s.kernels[0].name.rfind("k_gemm_fused", 0), 0u);
  EXPECT_EQ(s.kernels[1].name.rfind("k_gemm_q4k", 0), 0u);
}

TEST(Summary, PerRoleAndPerRangeWithFlopRates) {
  Summary s = summary_of("engine_a.trace.json");
  const RangeGroupStats& attn_v = group(s.roles, "attn_v");
  EXPECT_EQ(attn_v.occurrences, 4u);
  EXPECT_EQ(attn_v.kernels, 4u);
  EXPECT_EQ(attn_v.exclusive_ns, 8000u);
  EXPECT_EQ(attn_v.flops, 4000000000u);
  ASSERT_TRUE(attn_v.tflops);
  EXPECT_NEAR(*attn_v.tflops, 500.0, 1e-9);  // 4e9 FLOP / 8000 ns
  const RangeGroupStats& ffn = group(s.roles, "ffn_gate+ffn_up");
  ASSERT_TRUE(ffn.tflops);
  EXPECT_NEAR(*ffn.tflops, 1000.0, 1e-9);
  EXPECT_NEAR(*group(s.roles, "output").tflops, 2000.0, 1e-9);
  EXPECT_FALSE(group(s.roles, "attn").tflops);
  const RangeGroupStats& rope = group(s.roles, "rope");  // ranges with no kernels are listed
  EXPECT_EQ(rope.occurrences, 2u);
  EXPECT_EQ(rope.kernels, 0u);
  EXPECT_EQ(rope.exclusive_ns, 0u);
  const RangeGroupStats& prefill = group(s.roles, "prefill");
  EXPECT_EQ(prefill.exclusive_ns, 0u);
  EXPECT_EQ(prefill.inclusive_ns, 24000u);
  EXPECT_EQ(group(s.roles, kNoRangeRole).exclusive_ns, 300u);
  // Exclusive times partition the kernel time.
  std::uint64_t sum = 0;
  for (const auto& g : s.roles) sum += g.exclusive_ns;
  EXPECT_EQ(sum, s.total_kernel_ns);
  // Per range name keeps the layer: blk.0.attn_v and blk.1.attn_v are separate rows.
  EXPECT_EQ(group(s.ranges, "blk.0.attn_v").exclusive_ns, 4000u);
  EXPECT_EQ(group(s.ranges, "blk.1.attn_v").exclusive_ns, 4000u);
}

TEST(Summary, BusyTimeIsTheUnionInsidePrefill) {
  Summary s = summary_of("engine_a.trace.json");
  EXPECT_TRUE(s.busy.found);
  EXPECT_EQ(s.busy.passes, 2u);
  EXPECT_EQ(s.busy.kernels, 10u);
  EXPECT_EQ(s.busy.kernel_ns, 24000u);
  EXPECT_EQ(s.busy.union_ns, 23000u);  // pass 2 overlaps attn with attn_v by 1,000 ns

  Summary other = summarize(load_trace(data_file("engine_a.trace.json")), "a", SummaryOptions{"blk.0.attn"});
  EXPECT_EQ(other.busy.passes, 2u);
  EXPECT_EQ(other.busy.kernel_ns, 6000u);
  EXPECT_EQ(other.busy.union_ns, 6000u);
}

// Programmatic dependent launch: a kernel of the same stream that starts before the one before it
// ends is charged only from that end (its blocks were waiting); another stream's overlap is real.
TEST(Summary, OverlapOnOneStreamIsChargedOnceOverlapAcrossStreamsTwice) {
  Trace t;
  auto add = [&](const char* name, std::uint32_t stream, std::uint64_t start, std::uint64_t end) {
    TraceKernel k;
    k.name = k.mangled = name;
    k.stream = stream;
    k.start_ns = start;
    k.end_ns = end;
    t.kernels.push_back(k);
  };
  add("gemv_q", 7, 1000, 2000);
  add("gemv_k", 7, 1500, 2600);  // PDL: started while gemv_q ran; its own time is 2000..2600
  add("side", 8, 1800, 2200);    // another stream: all 400 ns its own
  add("gemv_v", 7, 1900, 2400);  // inside gemv_k's interval on stream 7: no time of its own
  add("gemv_o", 7, 3000, 3500);  // after a gap: its whole duration
  const Summary s = summarize(t, "pdl");
  EXPECT_EQ(kernel(s, "gemv_q").total_ns, 1000u);
  EXPECT_EQ(kernel(s, "gemv_k").total_ns, 600u);
  EXPECT_EQ(kernel(s, "side").total_ns, 400u);
  EXPECT_EQ(kernel(s, "gemv_v").total_ns, 0u);
  EXPECT_EQ(kernel(s, "gemv_o").total_ns, 500u);
  // Stream 7's own times add up to its busy time (1000..2600 and 3000..3500).
  EXPECT_EQ(s.total_kernel_ns, 1000u + 600u + 400u + 0u + 500u);
  EXPECT_EQ(interval_union_ns({{1000, 2000}, {1500, 2600}, {1900, 2400}, {3000, 3500}}), 2100u);
}

TEST(Summary, ProgramsWithoutNvtxAreSummarizedPerKernel) {
  Summary s = summary_of("no_nvtx.trace.json");
  EXPECT_EQ(s.kernel_count, 3u);
  EXPECT_EQ(s.total_kernel_ns, 10500u);
  EXPECT_EQ(s.no_range_ns, 10500u);
  EXPECT_FALSE(s.busy.found);
  ASSERT_EQ(s.roles.size(), 1u);
  EXPECT_EQ(s.roles[0].key, kNoRangeRole);
  EXPECT_EQ(kernel(s, "gemm_kernel").total_ns, 10000u);
}

TEST(Summary, TextAndJsonForms) {
  Summary s = summary_of("engine_a.trace.json");
  std::string text = format_summary_text(s);
  EXPECT_NE(text.find("kernel time: 24,300 ns"), std::string::npos) << text;
  EXPECT_NE(text.find("union 23,000 ns"), std::string::npos) << text;
  EXPECT_NE(text.find("(sum/union 1.0435)"), std::string::npos) << text;
  EXPECT_NE(text.find("ffn_gate+ffn_up"), std::string::npos);
  EXPECT_NE(text.find("1000.0"), std::string::npos) << "TFLOP/s column";
  EXPECT_NE(text.find("memcpy HtoD"), std::string::npos);
  std::string top1 = format_summary_text(s, 1);
  EXPECT_NE(top1.find("(top 1)"), std::string::npos);
  EXPECT_EQ(top1.find("k_fill"), std::string::npos);
  // Issue 11: --top applies to every ranked table, the roles' and ranges' too.
  EXPECT_NE(top1.find("by role (innermost NVTX range without blk.N.) (top 1)"), std::string::npos) << top1;
  EXPECT_NE(top1.find("by NVTX range name (top 1)"), std::string::npos) << top1;

  nlohmann::json j = summary_to_json(s);
  EXPECT_EQ(j["schema"], "kerneltrace-summary/1");
  EXPECT_EQ(j["total_kernel_ns"], 24300);
  EXPECT_EQ(j["busy"]["union_ns"], 23000);
  EXPECT_NEAR(j["busy"]["sum_over_union"].get<double>(), 24000.0 / 23000.0, 1e-12);
  bool found = false;
  for (const auto& r : j["roles"]) {
    if (r["key"] == "attn_v") {
      found = true;
      EXPECT_DOUBLE_EQ(r["tflops"].get<double>(), 500.0);
    }
  }
  EXPECT_TRUE(found);
}

TEST(Diff, PerPassDeltasSortedByMagnitude) {
  TraceDiff d = diff_summaries(summary_of("engine_a.trace.json"), summary_of("engine_b.trace.json"));
  EXPECT_TRUE(d.per_pass);
  EXPECT_EQ(d.a_passes, 2u);
  EXPECT_EQ(d.b_passes, 3u);
  EXPECT_DOUBLE_EQ(d.a_kernel_ns, 12150.0);
  EXPECT_DOUBLE_EQ(d.b_kernel_ns, 10000.0);
  EXPECT_DOUBLE_EQ(d.a_busy_ns, 11500.0);
  EXPECT_DOUBLE_EQ(d.b_busy_ns, 10000.0);

  ASSERT_EQ(d.kernels.size(), 6u);
  EXPECT_EQ(d.kernels[0].key.rfind("k_gemm_fused(", 0), 0u);
  EXPECT_EQ(d.kernels[0].status, DiffRow::Status::removed);
  EXPECT_DOUBLE_EQ(d.kernels[0].delta_ns, -4000.0);
  EXPECT_EQ(d.kernels[1].key.rfind("k_gemm_fused_v2", 0), 0u);
  EXPECT_EQ(d.kernels[1].status, DiffRow::Status::added);
  EXPECT_DOUBLE_EQ(d.kernels[1].delta_ns, 3000.0);
  EXPECT_FALSE(d.kernels[1].delta_percent);
  EXPECT_EQ(d.kernels[2].key.rfind("k_gemm_q4k", 0), 0u);
  EXPECT_DOUBLE_EQ(d.kernels[2].a_ns, 4000.0);
  EXPECT_DOUBLE_EQ(d.kernels[2].b_ns, 3000.0);
  ASSERT_TRUE(d.kernels[2].delta_percent);
  EXPECT_DOUBLE_EQ(*d.kernels[2].delta_percent, -25.0);
  EXPECT_EQ(d.kernels[3].key.rfind("k_fill", 0), 0u);
  EXPECT_DOUBLE_EQ(d.kernels[3].delta_ns, -150.0);
  EXPECT_DOUBLE_EQ(d.kernels[4].delta_ns, 0.0);
  EXPECT_EQ(d.kernels[4].status, DiffRow::Status::same);
  EXPECT_DOUBLE_EQ(d.kernels[2].a_count, 2.0) << "kernels per pass: 4 over 2 passes";
  EXPECT_DOUBLE_EQ(d.kernels[2].b_count, 2.0);

  ASSERT_GE(d.roles.size(), 3u);
  EXPECT_EQ(d.roles[0].key, "attn_v");
  EXPECT_DOUBLE_EQ(d.roles[0].delta_ns, -1000.0);
  EXPECT_EQ(d.roles[1].key, "ffn_gate+ffn_up");
  EXPECT_DOUBLE_EQ(*d.roles[1].delta_percent, -25.0);
  EXPECT_EQ(d.roles[2].key, kNoRangeRole);
  EXPECT_EQ(d.roles[2].status, DiffRow::Status::removed);
}

// One pass per side with the given roles: {key, exclusive ns, kernels, FLOPs}.
Summary with_roles(const std::vector<std::tuple<std::string, std::uint64_t, std::uint64_t, std::uint64_t>>& roles) {
  Summary s;
  s.busy = BusyTime{"prefill", true, 1, 0, 0, 0};
  for (const auto& [key, ns, kernels, flops] : roles) {
    RangeGroupStats r;
    r.key = key, r.exclusive_ns = ns, r.kernels = kernels, r.flops = flops, r.flop_time_ns = ns;
    s.roles.push_back(r);
    s.total_kernel_ns += ns;
  }
  return s;
}

// A build that runs Q, K and V as one launch in some layers and Q+K, V in others, against one
// that runs each alone: one row for the three, each side's sum; roles grouped alike on both sides
// (ffn_gate+ffn_up) and roles of one side only keep their rows.
TEST(Diff, RegroupedRolesCompareAsTheirUnion) {
  const Summary old_build = with_roles({{"attn_q", 1100, 32, 10}, {"attn_k", 1100, 32, 10}, {"attn_v", 1200, 32, 10},
                                        {"ffn_gate+ffn_up", 5000, 32, 40}, {"rope", 400, 32, 0}});
  const Summary new_build = with_roles({{"attn_q+attn_k+attn_v", 1400, 16, 15}, {"attn_q+attn_k", 900, 16, 10},
                                        {"attn_v", 650, 16, 5}, {"ffn_gate+ffn_up", 4800, 32, 40}, {"output", 60, 1, 1}});
  const TraceDiff d = diff_summaries(old_build, new_build);
  std::map<std::string, DiffRow> by_key;
  for (const DiffRow& r : d.roles) by_key[r.key] = r;
  ASSERT_TRUE(by_key.count("attn_q+attn_k+attn_v")) << format_diff_text(d);
  const DiffRow& qkv = by_key["attn_q+attn_k+attn_v"];
  EXPECT_DOUBLE_EQ(qkv.a_ns, 3400.0);
  EXPECT_DOUBLE_EQ(qkv.b_ns, 2950.0);
  EXPECT_DOUBLE_EQ(qkv.a_count, 96.0);
  EXPECT_DOUBLE_EQ(qkv.b_count, 48.0);
  EXPECT_DOUBLE_EQ(qkv.a_flops, 30.0);
  EXPECT_DOUBLE_EQ(qkv.b_flops, 30.0);
  EXPECT_EQ(qkv.status, DiffRow::Status::changed);
  for (const char* gone : {"attn_q", "attn_k", "attn_v", "attn_q+attn_k"}) EXPECT_FALSE(by_key.count(gone)) << gone;
  EXPECT_EQ(qkv.members, (std::vector<std::string>{"attn_k", "attn_q", "attn_q+attn_k", "attn_q+attn_k+attn_v", "attn_v"}));
  EXPECT_TRUE(by_key["ffn_gate+ffn_up"].members.empty());
  // The members survive the JSON form (landing import) and the combination of repetitions.
  const DiffRow back = diff_row_from_json(nlohmann::json(diff_row_to_json(qkv, kGateDiffKeys, true)), kGateDiffKeys, "row");
  EXPECT_EQ(back.members, qkv.members);
  const TraceDiff twice = combine_repetitions({d, d});
  const auto combined = std::find_if(twice.roles.begin(), twice.roles.end(),
                                     [](const DiffRow& r) { return r.key == "attn_q+attn_k+attn_v"; });
  ASSERT_NE(combined, twice.roles.end());
  EXPECT_EQ(combined->members, qkv.members);
  EXPECT_EQ(by_key["ffn_gate+ffn_up"].status, DiffRow::Status::changed);
  EXPECT_DOUBLE_EQ(by_key["ffn_gate+ffn_up"].a_ns, 5000.0);
  EXPECT_EQ(by_key["rope"].status, DiffRow::Status::removed);
  EXPECT_EQ(by_key["output"].status, DiffRow::Status::added);
  // The same grouping on both sides: rows as they are.
  const TraceDiff same = diff_summaries(new_build, new_build);
  std::set<std::string> keys;
  for (const DiffRow& r : same.roles) keys.insert(r.key);
  EXPECT_EQ(keys, (std::set<std::string>{"attn_q+attn_k+attn_v", "attn_q+attn_k", "attn_v", "ffn_gate+ffn_up", "output"}));
}

TEST(Diff, TextAndJsonForms) {
  TraceDiff d = diff_summaries(summary_of("engine_a.trace.json"), summary_of("engine_b.trace.json"));
  std::string text = format_diff_text(d);
  EXPECT_NE(text.find("are per 'prefill' pass (A: 2 passes, B: 3 passes)"), std::string::npos) << text;
  EXPECT_NE(text.find("12,150 -> 10,000 ns (-2,150 ns, -17.7%)"), std::string::npos) << text;
  EXPECT_NE(text.find("-25.0%"), std::string::npos);
  EXPECT_NE(text.find("removed"), std::string::npos);
  EXPECT_NE(text.find("added"), std::string::npos);
  nlohmann::json j = diff_to_json(d);
  EXPECT_EQ(j["schema"], "kerneltrace-diff/1");
  EXPECT_EQ(j["normalization"], "per_pass");
  EXPECT_EQ(j["roles"][0]["key"], "attn_v");
  EXPECT_EQ(j["kernels"][1]["status"], "added");
  EXPECT_TRUE(j["kernels"][1]["delta_percent"].is_null());
}

TEST(Diff, TotalsWhenEitherTraceLacksPasses) {
  TraceDiff d = diff_summaries(summary_of("engine_a.trace.json"), summary_of("no_nvtx.trace.json"));
  EXPECT_FALSE(d.per_pass);
  EXPECT_DOUBLE_EQ(d.a_kernel_ns, 24300.0);
  ASSERT_EQ(d.warnings.size(), 1u);
  EXPECT_NE(d.warnings[0].find("raw totals"), std::string::npos);
}

// Every trace in data/ (the hand-made ones, and real ones recorded on the H200 as they are added):
// it loads, and its summary is internally consistent.
TEST(RecordedTraces, AllLoadAndSummariesAreConsistent) {
  int seen = 0;
  for (const auto& entry : std::filesystem::directory_iterator(data_file(""))) {
    const std::string name = entry.path().filename().string();
    if (name.size() < 11 || name.compare(name.size() - 11, 11, ".trace.json") != 0) continue;
    ++seen;
    SCOPED_TRACE(name);
    Trace t = load_trace(entry.path());
    Summary s = summarize(t, name);
    std::uint64_t roles = 0, ranges = 0, kernels = 0;
    double share = 0;
    for (const auto& g : s.roles) roles += g.exclusive_ns;
    for (const auto& g : s.ranges) ranges += g.exclusive_ns;
    for (const auto& k : s.kernels) {
      kernels += k.total_ns;
      share += k.share;
    }
    EXPECT_EQ(roles, s.total_kernel_ns);
    EXPECT_EQ(ranges, s.total_kernel_ns);
    EXPECT_EQ(kernels, s.total_kernel_ns);
    if (s.total_kernel_ns > 0) {
      EXPECT_NEAR(share, 1.0, 1e-9);
    }
    EXPECT_LE(s.busy.union_ns, s.busy.kernel_ns);
    for (const auto& k : t.kernels) EXPECT_TRUE(k.range == kNoRange || t.find_range(k.range)) << k.name;
    // Diffing a trace with itself changes nothing.
    TraceDiff self = diff_summaries(s, s);
    for (const auto& row : self.kernels) EXPECT_EQ(row.status, DiffRow::Status::same) << row.key;
  }
  EXPECT_GE(seen, 3);
}

TEST(TextFormat, Numbers) {
  EXPECT_EQ(with_commas(0), "0");
  EXPECT_EQ(with_commas(999), "999");
  EXPECT_EQ(with_commas(2549248), "2,549,248");
  EXPECT_EQ(with_commas_signed(-502400), "-502,400");
  EXPECT_EQ(with_commas_signed(7), "+7");
  EXPECT_EQ(with_commas_signed(0), "0");
  EXPECT_EQ(signed_percent(12.345), "+12.3%");
  EXPECT_EQ(signed_percent(-0.01), "0.0%");
  EXPECT_EQ(signed_percent(std::nullopt), "new");
  EXPECT_EQ(percent(0.1234), "12.3%");
}

TEST(TextFormat, TableAlignsByCodePointsAndCutsLongNames) {
  TextTable t({"name", "n"}, 8);
  t.add({"w\xc3\xb6rker", "1"});
  t.add({"a_very_long_kernel_name", "22"});
  EXPECT_EQ(t.str(), "name       n\nw\xc3\xb6rker     1\na_ver...  22\n");
}

}  // namespace
}  // namespace pfx::trace

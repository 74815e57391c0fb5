// NVTX attribution rules: roles from range names, per-thread range stacks (nesting, domains,
// start/end across threads), launches attributed to the innermost range, and journal -> trace
// assembly (kernels outside every range, ranges with no kernels, open ranges, the range filter).
#include <gtest/gtest.h>

#include <algorithm>
#include <thread>

#include "trace/assemble.h"
#include "trace/range_tracker.h"
#include "trace/roles.h"
#include "trace_test_util.h"

namespace pfx::trace {
namespace {

TEST(Roles, StripTheLayerPrefixOnly) {
  EXPECT_EQ(role_of("blk.7.attn_v"), "attn_v");
  EXPECT_EQ(role_of("blk.31.ffn_down"), "ffn_down");
  EXPECT_EQ(role_of("blk.7.ffn_gate+ffn_up"), "ffn_gate+ffn_up");
  EXPECT_EQ(role_of("blk.0.attn_norm"), "attn_norm");
  EXPECT_EQ(role_of("output"), "output");
  EXPECT_EQ(role_of("token_embd"), "token_embd");
  EXPECT_EQ(role_of("prefill"), "prefill");
  EXPECT_EQ(role_of("blk.x.attn_v"), "blk.x.attn_v");  // not a layer number
  EXPECT_EQ(role_of("blk.7."), "blk.7.");
  EXPECT_EQ(role_of("blk.7"), "blk.7");
  EXPECT_EQ(role_of("myblk.7.attn_v"), "myblk.7.attn_v");
  EXPECT_EQ(role_of(""), "");
}

Payload flops(std::uint64_t n) {
  Payload p;
  p.type = Payload::Type::u64;
  p.as_u64 = n;
  return p;
}

std::vector<RangeBeginEvent> begins(const std::vector<TrackerEvent>& events) {
  std::vector<RangeBeginEvent> out;
  for (const auto& e : events)
    if (const auto* b = std::get_if<RangeBeginEvent>(&e)) out.push_back(*b);
  return out;
}
std::vector<LaunchEvent> launches(const std::vector<TrackerEvent>& events) {
  std::vector<LaunchEvent> out;
  for (const auto& e : events)
    if (const auto* l = std::get_if<LaunchEvent>(&e)) out.push_back(*l);
  return out;
}

TEST(RangeTracker, NestedPushPopGivesParentsAndDepths) {
  RangeTracker t;
  EXPECT_EQ(t.push(1, "default", "prefill", flops(10), 100), 0);
  EXPECT_EQ(t.push(1, "default", "blk.0.attn_v", {}, 110), 1);
  t.launch(500, 1, "cudaLaunchKernel");
  EXPECT_EQ(t.pop(1, "default", 120), 1);
  t.launch(501, 1, "cudaLaunchKernel");
  EXPECT_EQ(t.pop(1, "default", 130), 0);
  t.launch(502, 1, "cudaLaunchKernel");
  EXPECT_EQ(t.pop(1, "default", 140), -1);  // nothing left to pop
  EXPECT_EQ(t.unmatched_ends(), 1u);

  auto events = t.take_events();
  auto b = begins(events);
  ASSERT_EQ(b.size(), 2u);
  EXPECT_EQ(b[0].parent, kNoRange);
  EXPECT_EQ(b[0].payload, flops(10));
  EXPECT_EQ(b[1].parent, b[0].id);
  auto l = launches(events);
  ASSERT_EQ(l.size(), 3u);
  EXPECT_EQ(l[0].range, b[1].id);  // innermost
  EXPECT_EQ(l[1].range, b[0].id);  // back in prefill
  EXPECT_EQ(l[2].range, kNoRange); // outside every range
  EXPECT_TRUE(t.take_events().empty());
}

TEST(RangeTracker, ThreadsHaveSeparateStacks) {
  RangeTracker t;
  t.push(1, "default", "main_busy", {}, 1);
  t.push(2, "default", "worker", {}, 2);
  t.launch(10, 2, nullptr);
  t.launch(11, 1, nullptr);
  t.pop(2, "default", 3);
  t.pop(1, "default", 4);
  auto events = t.take_events();
  auto b = begins(events);
  ASSERT_EQ(b.size(), 2u);
  EXPECT_EQ(b[1].parent, kNoRange) << "a range on thread 2 is not nested in thread 1's";
  auto l = launches(events);
  EXPECT_EQ(l[0].range, b[1].id);
  EXPECT_EQ(l[1].range, b[0].id);
}

TEST(RangeTracker, PopClosesTheLatestPushOfItsDomain) {
  RangeTracker t;
  t.push(1, "default", "a", {}, 1);
  t.push(1, "pfx", "b", {}, 2);
  EXPECT_EQ(t.pop(1, "default", 3), 0);  // closes "a", leaves pfx's "b" open
  EXPECT_EQ(t.innermost(1), 2u);
  EXPECT_EQ(t.pop(1, "default", 4), -1);
  EXPECT_EQ(t.pop(1, "pfx", 5), 0);
  EXPECT_EQ(t.innermost(1), kNoRange);
}

TEST(RangeTracker, StartEndRangesJoinTheStartingThreadAndEndAnywhere) {
  RangeTracker t;
  RangeId outer = t.start(1, "default", "load", {}, 1);
  t.push(1, "default", "step", {}, 2);
  t.launch(20, 1, nullptr);
  EXPECT_TRUE(t.end(outer, 2, 3));  // ended from another thread, out of order
  t.launch(21, 1, nullptr);         // still inside "step"
  t.pop(1, "default", 4);
  t.launch(22, 1, nullptr);
  EXPECT_FALSE(t.end(outer, 2, 5)) << "second end of the same range";
  EXPECT_FALSE(t.end(999, 2, 5));
  EXPECT_EQ(t.unmatched_ends(), 2u);
  auto events = t.take_events();
  auto b = begins(events);
  ASSERT_EQ(b.size(), 2u);
  EXPECT_EQ(b[0].kind, RangeKind::start_end);
  EXPECT_EQ(b[1].parent, outer);
  auto l = launches(events);
  EXPECT_EQ(l[0].range, b[1].id);
  EXPECT_EQ(l[1].range, b[1].id);
  EXPECT_EQ(l[2].range, kNoRange);
}

TEST(RangeTracker, ConcurrentThreadsKeepTheirOwnAttribution) {
  RangeTracker t;
  constexpr int kThreads = 4, kIterations = 500;
  std::vector<std::thread> threads;
  for (int i = 0; i < kThreads; ++i) {
    threads.emplace_back([&t, i] {
      const auto tid = static_cast<std::uint32_t>(100 + i);
      for (int n = 0; n < kIterations; ++n) {
        t.push(tid, "default", "thread" + std::to_string(i), {}, 1);
        t.launch(static_cast<std::uint32_t>(i * kIterations + n), tid, nullptr);
        t.pop(tid, "default", 2);
      }
    });
  }
  for (auto& th : threads) th.join();
  auto events = t.take_events();
  std::map<RangeId, RangeBeginEvent> by_id;
  for (const auto& b : begins(events)) by_id[b.id] = b;
  auto l = launches(events);
  ASSERT_EQ(l.size(), static_cast<std::size_t>(kThreads * kIterations));
  for (const auto& launch : l) {
    ASSERT_TRUE(by_id.count(launch.range));
    const RangeBeginEvent& r = by_id[launch.range];
    EXPECT_EQ(r.thread, launch.thread);
    EXPECT_EQ(r.name, "thread" + std::to_string(launch.correlation_id / kIterations));
    EXPECT_EQ(r.parent, kNoRange);
  }
}

// A journal as the injection library writes it, from a tracker session plus kernel records.
struct JournalBuilder {
  RangeTracker tracker;
  JournalContents journal;
  void kernel(std::uint32_t corr, std::string name, std::uint64_t start, std::uint64_t end) {
    TraceKernel k;
    k.name = std::move(name);
    k.correlation_id = corr;
    k.start_ns = start;
    k.end_ns = end;
    journal.kernels.push_back(k);
  }
  JournalContents finish(bool finished = true) {
    for (const auto& e : tracker.take_events()) {
      if (const auto* b = std::get_if<RangeBeginEvent>(&e)) journal.range_begins.push_back(*b);
      else if (const auto* en = std::get_if<RangeEndEvent>(&e)) journal.range_ends.push_back(*en);
      else journal.launches.push_back(std::get<LaunchEvent>(e));
    }
    journal.finished = finished;
    return journal;
  }
};

const TraceKernel& kernel_named(const Trace& t, const std::string& name) { return testing::first_named(t.kernels, name, "kernel"); }

TEST(Assemble, AttributesKernelsAndKeepsEmptyAndOpenRanges) {
  JournalBuilder jb;
  auto& t = jb.tracker;
  t.launch(1, 7, "cudaLaunchKernel");  // before any range
  t.push(7, "default", "prefill", flops(1000), 10);
  t.push(7, "default", "blk.0.attn_v", flops(500), 11);
  t.launch(2, 7, "cudaLaunchKernel");
  t.launch(2, 7, "cuLaunchKernel");  // the driver call inside the runtime call: same id, same site
  t.pop(7, "default", 12);
  t.push(7, "default", "blk.0.rope", {}, 13);  // no kernels
  t.pop(7, "default", 14);
  t.push(7, "default", "left_open", {}, 15);     // never popped
  t.pop(7, "default", 16);                       // closes left_open
  t.push(7, "default", "left_open2", {}, 17);    // really never popped
  jb.kernel(1, "k_outside", 100, 150);
  jb.kernel(2, "k_attn_v", 200, 300);
  jb.kernel(3, "k_no_launch", 400, 420);  // no launch record at all
  Trace trace = assemble_trace(jb.finish());

  ASSERT_EQ(trace.kernels.size(), 3u);
  EXPECT_EQ(kernel_named(trace, "k_outside").range, kNoRange);
  EXPECT_EQ(kernel_named(trace, "k_outside").thread, 7u);
  const TraceKernel& attn = kernel_named(trace, "k_attn_v");
  const TraceRange* r = trace.find_range(attn.range);
  ASSERT_NE(r, nullptr);
  EXPECT_EQ(r->name, "blk.0.attn_v");
  ASSERT_NE(trace.find_range(r->parent), nullptr);
  EXPECT_EQ(trace.find_range(r->parent)->name, "prefill");
  EXPECT_EQ(kernel_named(trace, "k_no_launch").range, kNoRange);
  EXPECT_FALSE(kernel_named(trace, "k_no_launch").thread);
  EXPECT_EQ(trace.stats.kernels_without_launch, 1u);

  ASSERT_EQ(trace.ranges.size(), 5u);
  EXPECT_EQ(trace.ranges[2].name, "blk.0.rope");
  EXPECT_TRUE(trace.ranges[2].end_ns);
  EXPECT_EQ(trace.ranges[4].name, "left_open2");
  EXPECT_FALSE(trace.ranges[4].end_ns);
  EXPECT_FALSE(trace.ranges[0].end_ns) << "prefill was never popped either";
  EXPECT_TRUE(trace.complete);
}

TEST(Assemble, NumbersOccurrencesAndAppliesTheRangeFilterWithSkip) {
  JournalBuilder jb;
  auto& t = jb.tracker;
  std::uint32_t corr = 0;
  t.push(1, "default", "bench", {}, 0);
  for (int pass = 0; pass < 3; ++pass) {
    t.push(1, "default", "prefill", {}, 10);
    t.push(1, "default", "blk.0.attn_v", {}, 11);
    t.launch(++corr, 1, nullptr);
    jb.kernel(corr, "k_gemm", 100 * corr, 100 * corr + 50);
    t.pop(1, "default", 12);
    t.pop(1, "default", 13);
    t.launch(++corr, 1, nullptr);  // between passes, inside "bench" only
    jb.kernel(corr, "k_between", 100 * corr, 100 * corr + 5);
  }
  t.pop(1, "default", 20);
  TransferEvent copy;
  copy.copy_kind = "HtoD";
  copy.correlation_id = 1;  // launched under the first (skipped) prefill
  copy.bytes = 10;
  jb.journal.transfers.push_back(copy);
  copy.correlation_id = 3;  // under the second
  copy.bytes = 20;
  copy.start_ns = 5;
  copy.end_ns = 8;
  jb.journal.transfers.push_back(copy);
  jb.journal.header.options.range_filter = RangeFilter{"prefill", 1};
  Trace trace = assemble_trace(jb.finish());

  ASSERT_EQ(trace.kernels.size(), 2u);
  for (const auto& k : trace.kernels) EXPECT_EQ(k.name, "k_gemm");
  EXPECT_EQ(trace.stats.kernels_filtered_out, 4u);
  // prefill #1 and #2 with their attn_v ranges; "bench" and prefill #0 are out of scope.
  ASSERT_EQ(trace.ranges.size(), 4u);
  EXPECT_EQ(trace.ranges[0].name, "prefill");
  EXPECT_EQ(trace.ranges[0].occurrence, 1u);
  EXPECT_EQ(trace.ranges[0].parent, kNoRange) << "its parent 'bench' was filtered out";
  EXPECT_EQ(trace.ranges[2].occurrence, 2u);
  EXPECT_EQ(trace.ranges[1].name, "blk.0.attn_v");
  EXPECT_EQ(trace.ranges[1].parent, trace.ranges[0].id);
  EXPECT_EQ(trace.stats.ranges_recorded, 7u);
  EXPECT_EQ(trace.stats.ranges_filtered_out, 3u);
  ASSERT_EQ(trace.memcpy_by_kind.count("HtoD"), 1u);
  EXPECT_EQ(trace.memcpy_by_kind["HtoD"].count, 1u);
  EXPECT_EQ(trace.memcpy_by_kind["HtoD"].bytes, 20u);
  EXPECT_EQ(trace.memcpy_by_kind["HtoD"].total_ns, 3u);
}

TEST(Assemble, FilterOnAMissingRangeKeepsNothingAndSaysSo) {
  JournalBuilder jb;
  jb.tracker.launch(1, 1, nullptr);
  jb.kernel(1, "k", 1, 2);
  jb.journal.header.options.range_filter = RangeFilter{"prefill", 0};
  Trace trace = assemble_trace(jb.finish());
  EXPECT_TRUE(trace.kernels.empty());
  ASSERT_FALSE(trace.notes.empty());
  EXPECT_NE(trace.notes.back().find("no range named 'prefill'"), std::string::npos);
}

TEST(Assemble, UnfinishedJournalGivesAnIncompleteTrace) {
  JournalBuilder jb;
  jb.tracker.push(1, "default", "r", {}, 1);
  jb.journal.dropped_records = 5;
  Trace trace = assemble_trace(jb.finish(/*finished=*/false));
  EXPECT_FALSE(trace.complete);
  EXPECT_EQ(trace.stats.dropped_activity_records, 5u);
  bool mentions_crash = false, mentions_drops = false;
  for (const auto& n : trace.notes) {
    mentions_crash |= n.find("did not finish") != std::string::npos;
    mentions_drops |= n.find("--buffer-mb") != std::string::npos;
  }
  EXPECT_TRUE(mentions_crash);
  EXPECT_TRUE(mentions_drops);
}

TEST(Assemble, KernelRecordsEndingBeforeTheyStartAreDropped) {
  JournalBuilder jb;
  jb.kernel(1, "k_ok", 10, 20);
  jb.kernel(2, "k_backwards", 30, 25);
  Trace trace = assemble_trace(jb.finish());
  ASSERT_EQ(trace.kernels.size(), 1u);
  EXPECT_EQ(trace.kernels[0].name, "k_ok");
  EXPECT_TRUE(std::any_of(trace.notes.begin(), trace.notes.end(),
                          [](const std::string& n) { return n.find("ended before they started") != std::string::npos; }));
}

TEST(Assemble, CorruptParentsBecomeRootsWithANote) {
  JournalContents j;
  j.range_begins.push_back(RangeBeginEvent{5, "default", "a", RangeKind::push_pop, 1, 9, 1, {}});
  j.range_begins.push_back(RangeBeginEvent{6, "default", "b", RangeKind::push_pop, 1, 5, 1, {}});
  j.range_ends.push_back(RangeEndEvent{42, 1, 3});
  Trace trace = assemble_trace(j);
  ASSERT_EQ(trace.ranges.size(), 2u);
  EXPECT_EQ(trace.ranges[0].parent, kNoRange);
  EXPECT_EQ(trace.ranges[1].parent, 5u);
  EXPECT_EQ(trace.stats.unmatched_range_ends, 1u);
  EXPECT_FALSE(trace.notes.empty());
}

}  // namespace
}  // namespace pfx::trace

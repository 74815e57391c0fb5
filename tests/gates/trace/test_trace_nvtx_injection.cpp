// libkerneltrace.so's NVTX side, for real, on any machine (no GPU: CUDA is never initialized):
// `kerneltrace -- trace_nvtx_program MODE`, then the trace's ranges, threads, payloads and nesting,
// the exit paths (normal, exit() from a thread, SIGKILL with and without --flush-ms) and a program
// run through a shell (its trace lands in a ".pid<N>" file the launcher finds).
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <cstdlib>

#include "trace/trace_cli.h"
#include "trace/trace_json.h"
#include "trace_test_util.h"

namespace pfx::trace {
namespace {

using testing::ScratchDir;

// Runs kerneltrace with `args`; returns its exit code.
std::string kerneltrace_exe() { return testing::build_artifact("gates/trace/kerneltrace", KERNELTRACE_EXE); }
std::string nvtx_program() {
  return testing::build_artifact("tests/gates/trace/trace_nvtx_program", TRACE_NVTX_PROGRAM);
}

int kerneltrace(const std::string& args) {
  std::string command = "'" + kerneltrace_exe() + "' " + args;
  int status = std::system(command.c_str());
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

std::string program(const std::string& mode) { return "'" + nvtx_program() + "' " + mode; }

const TraceRange& range_named(const Trace& t, const std::string& name) { return testing::first_named(t.ranges, name, "range named"); }

// The trace of the test program run in `mode` under `kerneltrace FLAGS`, which must exit with
// `exit_code` (a test failure otherwise).
Trace traced(const std::string& flags, const std::string& mode, int exit_code) {
  ScratchDir dir;
  const auto out = dir / "t.json";
  EXPECT_EQ(kerneltrace(flags + "-o '" + out.string() + "' -- " + program(mode)), exit_code) << flags << mode;
  return load_trace(out);
}

TEST(NvtxInjection, RecordsRangesNestingThreadsAndPayloads) {
  ScratchDir dir;
  const auto out = dir / "t.json";
  ASSERT_EQ(kerneltrace("-o '" + out.string() + "' -- " + program("normal")), kTraceOk);
  const Trace t = load_trace(out);
  EXPECT_TRUE(t.complete);
  EXPECT_TRUE(t.kernels.empty());
  EXPECT_FALSE(std::filesystem::exists(out.string() + ".journal")) << "journal removed after a clean exit";
  ASSERT_EQ(t.ranges.size(), 8u);

  const TraceRange& outer = range_named(t, "outer");
  EXPECT_EQ(outer.thread, t.pid) << "the main thread's id is the process id";
  EXPECT_EQ(outer.parent, kNoRange);
  EXPECT_EQ(outer.payload.type, Payload::Type::u64);
  EXPECT_EQ(outer.payload.as_u64, 1000u);
  EXPECT_EQ(outer.domain, "default");
  ASSERT_TRUE(outer.end_ns);
  EXPECT_GE(*outer.end_ns, outer.start_ns);
  const TraceRange& inner = range_named(t, "inner");
  EXPECT_EQ(inner.parent, outer.id);
  EXPECT_GE(inner.start_ns, outer.start_ns);
  EXPECT_LE(*inner.end_ns, *outer.end_ns);
  EXPECT_EQ(range_named(t, "empty").parent, kNoRange);

  const TraceRange& registered = range_named(t, "registered_name");
  EXPECT_EQ(registered.domain, "pfx_test");
  EXPECT_EQ(registered.payload.type, Payload::Type::f64);
  EXPECT_DOUBLE_EQ(registered.payload.as_f64, 2.5);
  EXPECT_TRUE(registered.end_ns);

  const TraceRange& cross = range_named(t, "cross_thread");
  EXPECT_EQ(cross.kind, RangeKind::start_end);
  EXPECT_TRUE(cross.end_ns) << "ended from the worker thread";
  const TraceRange& main_open = range_named(t, "main_open");
  EXPECT_EQ(main_open.parent, cross.id) << "a start/end range joins its thread's stack";
  const TraceRange& worker = range_named(t, "w\xc3\xb6rker");
  EXPECT_NE(worker.thread, main_open.thread);
  EXPECT_EQ(worker.parent, kNoRange) << "the worker's stack is its own";
  EXPECT_FALSE(range_named(t, "left_open").end_ns);
  EXPECT_EQ(t.stats.unmatched_range_ends, 2u) << "the two pops the program expected to fail";
  EXPECT_EQ(t.command.back(), "normal");
}

TEST(NvtxInjection, ExitFromAnotherThreadStillWritesTheTrace) {
  const Trace t = traced("", "thread-exit", kTraceProgramFailed);
  EXPECT_TRUE(t.complete);
  EXPECT_FALSE(range_named(t, "in_main").end_ns);
  EXPECT_FALSE(range_named(t, "in_thread").end_ns);
}

TEST(NvtxInjection, KilledProgramKeepsWhatWasFlushed) {
  const Trace t = traced("--flush-ms 20 ", "crash", kTraceProgramFailed);
  EXPECT_FALSE(t.complete);
  EXPECT_TRUE(range_named(t, "before_crash").end_ns);
  EXPECT_FALSE(range_named(t, "open_at_crash").end_ns);
}

TEST(NvtxInjection, KilledProgramWithoutFlushPeriodLosesItsPendingRanges) {
  // The documented guarantee: without --flush-ms and without a CUPTI buffer completing, nothing
  // after the journal header reaches the disk before a SIGKILL.
  const Trace t = traced("", "crash", kTraceProgramFailed);
  EXPECT_FALSE(t.complete);
  EXPECT_TRUE(t.ranges.empty());
}

TEST(NvtxInjection, ProgramStartedThroughAShellIsFound) {
  ScratchDir dir;
  const auto out = dir / "t.json";
  // "; true" makes the shell fork the program instead of exec'ing it.
  EXPECT_EQ(kerneltrace("-o '" + out.string() + "' -- sh -c \"" + nvtx_program() + " normal; true\""),
            kTraceOk);
  EXPECT_FALSE(std::filesystem::exists(out));
  int found = 0;
  for (const auto& e : std::filesystem::directory_iterator(dir.path())) {
    const std::string name = e.path().filename().string();
    if (name.rfind("t.pid", 0) == 0 && name.size() > 5 && e.path().extension() == ".json") {
      ++found;
      EXPECT_EQ(load_trace(e.path()).ranges.size(), 8u);
    }
  }
  EXPECT_EQ(found, 1);
}

TEST(NvtxInjection, NvtxOffMeansNoRanges) {
  // With --kinds kernel the launcher does not route NVTX to the library, and a program that never
  // initializes CUDA leaves no trace at all.
  ScratchDir dir;
  const auto out = dir / "t.json";
  EXPECT_EQ(kerneltrace("--kinds kernel -o '" + out.string() + "' -- " + program("normal")), kTraceNoTrace);
  EXPECT_FALSE(std::filesystem::exists(out));
}

}  // namespace
}  // namespace pfx::trace

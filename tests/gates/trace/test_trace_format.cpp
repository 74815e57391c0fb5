// The tracer's file formats: options from the environment, the journal (write, read back, cut
// short, corrupt), and the trace JSON (round trip, and clear errors on malformed files).
#include <gtest/gtest.h>

#include <map>

#include "trace/journal.h"
#include "trace/json_fields.h"
#include "trace/trace_json.h"
#include "trace/trace_options.h"
#include "trace_test_util.h"
#include "util/error.h"

namespace pfx::trace {
namespace {

using testing::ScratchDir;
using testing::write_file;

// Runs `fn`, expects pfx::Error, and returns its message.
template <class Fn>
std::string error_of(Fn&& fn) {
  try {
    fn();
  } catch (const Error& e) {
    return e.what();
  }
  ADD_FAILURE() << "expected pfx::Error";
  return "";
}

TraceOptions from(const std::map<std::string, std::string>& env) {
  return options_from_env([&](const char* name) -> const char* {
    auto it = env.find(name);
    return it == env.end() ? nullptr : it->second.c_str();
  });
}

TEST(TraceOptions, DefaultsRecordEverything) {
  TraceOptions o = from({});
  EXPECT_TRUE(o.kinds.kernel && o.kinds.memcpy && o.kinds.memset && o.kinds.nvtx);
  EXPECT_FALSE(o.range_filter);
  EXPECT_EQ(o.buffer_mb, 8u);
  EXPECT_EQ(o.flush_period_ms, 0u);
  EXPECT_EQ(o.output, "kerneltrace.%p.json");
}

TEST(TraceOptions, ReadsEveryVariableAndRoundTripsThroughEnv) {
  TraceOptions o = from({{kEnvOutput, "/tmp/t.json"},
                         {kEnvKinds, "kernel,nvtx"},
                         {kEnvRange, "prefill"},
                         {kEnvRangeSkip, "2"},
                         {kEnvBufferMb, "32"},
                         {kEnvFlushMs, "250"},
                         {kEnvKeepJournal, "1"},
                         {kEnvQuiet, "yes"}});
  EXPECT_EQ(o.output, "/tmp/t.json");
  EXPECT_TRUE(o.kinds.kernel);
  EXPECT_FALSE(o.kinds.memcpy);
  EXPECT_FALSE(o.kinds.memset);
  EXPECT_TRUE(o.kinds.nvtx);
  ASSERT_TRUE(o.range_filter);
  EXPECT_EQ(o.range_filter->name, "prefill");
  EXPECT_EQ(o.range_filter->skip, 2u);
  EXPECT_EQ(o.buffer_mb, 32u);
  EXPECT_EQ(o.flush_period_ms, 250u);
  EXPECT_TRUE(o.keep_journal);
  EXPECT_TRUE(o.quiet);
  EXPECT_EQ(from(options_to_env(o)), o);
}

TEST(TraceOptions, BadValuesNameTheVariable) {
  EXPECT_NE(error_of([] { from({{kEnvKinds, "kernel,memcopy"}}); }).find("KERNELTRACE_KINDS"), std::string::npos);
  EXPECT_NE(error_of([] { from({{kEnvKinds, "kernel,memcopy"}}); }).find("'memcopy'"), std::string::npos);
  EXPECT_NE(error_of([] { from({{kEnvBufferMb, "0"}}); }).find("KERNELTRACE_BUFFER_MB='0'"), std::string::npos);
  EXPECT_NE(error_of([] { from({{kEnvBufferMb, "8MB"}}); }).find("KERNELTRACE_BUFFER_MB"), std::string::npos);
  EXPECT_NE(error_of([] { from({{kEnvRangeSkip, "1"}}); }).find("needs KERNELTRACE_RANGE"), std::string::npos);
  EXPECT_NE(error_of([] { from({{kEnvQuiet, "maybe"}}); }).find("KERNELTRACE_QUIET"), std::string::npos);
}

TEST(TraceOptions, OutputPathPerProcess) {
  EXPECT_EQ(expand_output_path("/d/t.%p.json", 42, true), "/d/t.42.json");
  EXPECT_EQ(expand_output_path("/d/t.json", 42, true), "/d/t.json");
  // A process started by the traced program must not overwrite the main trace.
  EXPECT_EQ(expand_output_path("/d/t.json", 42, false), "/d/t.pid42.json");
  EXPECT_EQ(expand_output_path("/d.x/trace", 42, false), "/d.x/trace.pid42");
  EXPECT_EQ(expand_output_path("/d/t.%p.json", 42, false), "/d/t.42.json");
}

JournalHeader sample_header() {
  JournalHeader h;
  h.tool_version = "test";
  h.pid = 77;
  h.hostname = "host";
  h.command = {"prog", "--flag"};
  h.options.range_filter = RangeFilter{"prefill", 1};
  h.start_ns = 5;
  return h;
}

TraceKernel sample_kernel(std::uint32_t corr, std::uint64_t start, std::uint64_t end) {
  TraceKernel k;
  k.name = "void k<3>(float*)";
  k.mangled = "_Z1kILi3EEvPf";
  k.correlation_id = corr;
  k.device = 0;
  k.context = 1;
  k.stream = 7;
  k.grid = {4, 2, 1};
  k.block = {128, 1, 1};
  k.registers = 40;
  k.static_smem = 1024;
  k.dynamic_smem = 2048;
  k.local_mem_per_thread = 16;
  k.start_ns = start;
  k.end_ns = end;
  return k;
}

TEST(Journal, RoundTripsEveryRecordType) {
  ScratchDir dir;
  const auto path = dir / "j.journal";
  JournalWriter writer;
  ASSERT_EQ(writer.open(path), "");
  Payload flops;
  flops.type = Payload::Type::u64;
  flops.as_u64 = 123456789012345ull;
  std::string text = journal_line(sample_header());
  text += journal_line(TrackerEvent{RangeBeginEvent{1, "default", "prefill", RangeKind::push_pop, 9, kNoRange, 100, flops}});
  text += journal_line(TrackerEvent{RangeBeginEvent{2, "pfx", "blk.0.attn_v", RangeKind::start_end, 9, 1, 110, {}}});
  text += journal_line(TrackerEvent{LaunchEvent{55, 9, 2, "cudaLaunchKernel_v7000"}});
  text += journal_line(TrackerEvent{RangeEndEvent{2, 10, 150}});
  text += journal_line(sample_kernel(55, 120, 140));
  TransferEvent copy;
  copy.copy_kind = "HtoD";
  copy.correlation_id = 56;
  copy.runtime_correlation_id = 57;
  copy.bytes = 4096;
  copy.start_ns = 10;
  copy.end_ns = 20;
  text += journal_line(copy);
  TransferEvent set;
  set.is_memset = true;
  set.bytes = 64;
  set.start_ns = 30;
  set.end_ns = 31;
  text += journal_line(set);
  TraceDevice dev{0, "NVIDIA H200", 9, 0, 132, 1ull << 37, 1980000};
  text += journal_line(dev);
  text += journal_dropped_line(3);
  text += journal_counters_line(4);
  text += journal_note_line("hello \"quoted\"");
  text += journal_end_line(200);
  ASSERT_EQ(writer.append(text), "");
  writer.close();

  JournalContents j = read_journal(path);
  EXPECT_TRUE(j.finished);
  EXPECT_EQ(j.header.pid, 77u);
  EXPECT_EQ(j.header.command, (std::vector<std::string>{"prog", "--flag"}));
  ASSERT_TRUE(j.header.options.range_filter);
  EXPECT_EQ(j.header.options.range_filter->skip, 1u);
  ASSERT_EQ(j.range_begins.size(), 2u);
  EXPECT_EQ(j.range_begins[0].payload, flops);
  EXPECT_EQ(j.range_begins[1].domain, "pfx");
  EXPECT_EQ(j.range_begins[1].kind, RangeKind::start_end);
  EXPECT_EQ(j.range_begins[1].parent, 1u);
  ASSERT_EQ(j.range_ends.size(), 1u);
  EXPECT_EQ(j.range_ends[0].thread, 10u);
  ASSERT_EQ(j.launches.size(), 1u);
  EXPECT_EQ(j.launches[0].correlation_id, 55u);
  EXPECT_EQ(j.launches[0].range, 2u);
  ASSERT_EQ(j.kernels.size(), 1u);
  EXPECT_EQ(j.kernels[0].name, "void k<3>(float*)");
  EXPECT_EQ(j.kernels[0].grid, (std::array<std::int32_t, 3>{4, 2, 1}));
  EXPECT_EQ(j.kernels[0].dynamic_smem, 2048);
  EXPECT_EQ(j.kernels[0].local_mem_per_thread, 16u);
  ASSERT_EQ(j.transfers.size(), 2u);
  EXPECT_EQ(j.transfers[0].runtime_correlation_id, 57u);
  EXPECT_TRUE(j.transfers[1].is_memset);
  ASSERT_EQ(j.devices.size(), 1u);
  EXPECT_EQ(j.devices[0].name, "NVIDIA H200");
  EXPECT_EQ(j.dropped_records, 3u);
  EXPECT_EQ(j.unmatched_range_ends, 4u);
  EXPECT_EQ(j.notes, (std::vector<std::string>{"hello \"quoted\""}));
}

TEST(Journal, LastLineCutShortIsDroppedWithANote) {
  ScratchDir dir;
  const auto path = dir / "j.journal";
  std::string full = journal_line(sample_header()) + journal_line(sample_kernel(1, 10, 20));
  std::string cut = journal_line(sample_kernel(2, 30, 40));
  write_file(path, full + cut.substr(0, cut.size() / 2));
  JournalContents j = read_journal(path);
  EXPECT_FALSE(j.finished);
  EXPECT_EQ(j.kernels.size(), 1u);
  ASSERT_EQ(j.notes.size(), 1u);
  EXPECT_NE(j.notes[0].find("cut short"), std::string::npos);
}

TEST(Journal, CorruptMiddleLineNamesFileAndLine) {
  ScratchDir dir;
  const auto path = dir / "j.journal";
  write_file(path, journal_line(sample_header()) + "{not json\n" + journal_line(sample_kernel(1, 10, 20)));
  std::string message = error_of([&] { read_journal(path); });
  EXPECT_NE(message.find(path.string() + ": line 2"), std::string::npos) << message;
}

TEST(Journal, RejectsMissingHeaderUnknownTypesAndBadFields) {
  ScratchDir dir;
  const auto path = dir / "j.journal";
  write_file(path, journal_line(sample_kernel(1, 10, 20)));
  EXPECT_NE(error_of([&] { read_journal(path); }).find("expected the header record first"), std::string::npos);
  write_file(path, "");
  EXPECT_NE(error_of([&] { read_journal(path); }).find("no header"), std::string::npos);
  write_file(path, journal_line(sample_header()) + "{\"t\":\"bogus\"}\n{}\n");
  EXPECT_NE(error_of([&] { read_journal(path); }).find("line 2: t: unknown record type \"bogus\""), std::string::npos);
  write_file(path, journal_line(sample_header()) + "{\"t\":\"range_end\",\"id\":\"7\",\"thread\":1,\"ts\":2}\n{}\n");
  std::string message = error_of([&] { read_journal(path); });
  EXPECT_NE(message.find("line 2: id: expected an unsigned integer, got string \"7\""), std::string::npos) << message;
  write_file(path, journal_line(sample_header()) + journal_line(sample_header()));
  EXPECT_NE(error_of([&] { read_journal(path); }).find("a second header"), std::string::npos);
  EXPECT_NE(error_of([&] { read_journal(dir / "missing.journal"); }).find("cannot open journal"), std::string::npos);
}

Trace sample_trace() {
  Trace t;
  t.tool_version = "test";
  t.pid = 1;
  t.hostname = "h";
  t.command = {"a", "b"};
  t.options.range_filter = RangeFilter{"prefill", 2};
  t.devices.push_back(TraceDevice{0, "NVIDIA H200", 9, 0, 132, 1ull << 37, 1980000});
  TraceRange outer;
  outer.id = 1;
  outer.domain = "default";
  outer.name = "prefill";
  outer.thread = 9;
  outer.start_ns = 100;
  outer.end_ns = 900;
  outer.payload.type = Payload::Type::u64;
  outer.payload.as_u64 = 18446744073709551615ull;  // uint64 max survives JSON
  TraceRange inner = outer;
  inner.id = 3;
  inner.name = "blk.0.attn_v";
  inner.kind = RangeKind::start_end;
  inner.parent = 1;
  inner.end_ns.reset();
  inner.payload = Payload{};
  inner.payload.type = Payload::Type::f64;
  inner.payload.as_f64 = 2.5;
  t.ranges = {outer, inner};
  TraceKernel k = sample_kernel(5, 200, 300);
  k.thread = 9;
  k.range = 3;
  TraceKernel loose = sample_kernel(6, 50, 60);
  t.kernels = {loose, k};
  t.memcpy_by_kind["HtoD"] = TransferTotals{2, 100, 30};
  t.memset = TransferTotals{1, 4, 5};
  t.stats.kernels_recorded = 2;
  t.notes = {"a note"};
  return t;
}

TEST(TraceJson, RoundTrips) {
  ScratchDir dir;
  Trace t = sample_trace();
  write_trace_file(t, dir / "t.json");
  EXPECT_FALSE(std::filesystem::exists(dir / "t.json.tmp"));
  Trace back = load_trace(dir / "t.json");
  EXPECT_EQ(back.command, t.command);
  EXPECT_EQ(back.options, t.options);
  ASSERT_EQ(back.devices.size(), 1u);
  EXPECT_EQ(back.devices[0].cc_major, 9u);
  ASSERT_EQ(back.ranges.size(), 2u);
  EXPECT_EQ(back.ranges[0].payload, t.ranges[0].payload);
  EXPECT_EQ(back.ranges[1].payload, t.ranges[1].payload);
  EXPECT_FALSE(back.ranges[1].end_ns);
  EXPECT_EQ(back.ranges[1].parent, 1u);
  ASSERT_EQ(back.kernels.size(), 2u);
  EXPECT_EQ(back.kernels[0].range, kNoRange);
  EXPECT_FALSE(back.kernels[0].thread);
  EXPECT_EQ(back.kernels[1].range, 3u);
  EXPECT_EQ(back.kernels[1].mangled, "_Z1kILi3EEvPf");
  EXPECT_EQ(back.memcpy_by_kind, t.memcpy_by_kind);
  EXPECT_EQ(back.memset, t.memset);
  EXPECT_EQ(back.stats, t.stats);
  EXPECT_EQ(back.notes, t.notes);
  ASSERT_NE(back.find_range(3), nullptr);
  EXPECT_EQ(back.find_range(3)->name, "blk.0.attn_v");
  EXPECT_EQ(back.find_range(2), nullptr);
}

// Writes sample_trace() with one edit and returns the load error.
std::string load_error_after(const std::function<void(nlohmann::json&)>& edit) {
  ScratchDir dir;
  nlohmann::json j = trace_to_json(sample_trace());
  edit(j);
  write_file(dir / "bad.json", j.dump());
  return error_of([&] { load_trace(dir / "bad.json"); });
}

TEST(TraceJson, MalformedFilesGiveClearErrors) {
  ScratchDir dir;
  write_file(dir / "cut.json", "{\"schema\": \"kerneltrace/1\", ");
  std::string m = error_of([&] { load_trace(dir / "cut.json"); });
  EXPECT_NE(m.find((dir / "cut.json").string() + ": not valid JSON"), std::string::npos) << m;
  m = error_of([&] { load_trace(dir / "none.json"); });
  EXPECT_NE(m.find("cannot open trace"), std::string::npos) << m;
  write_file(dir / "array.json", "[1,2]");
  m = error_of([&] { load_trace(dir / "array.json"); });
  EXPECT_NE(m.find("expected a JSON object at the top"), std::string::npos) << m;

  m = load_error_after([](nlohmann::json& j) { j["schema"] = "kerneltrace/0"; });
  EXPECT_NE(m.find("schema: expected \"kerneltrace/1\", got \"kerneltrace/0\""), std::string::npos) << m;
  m = load_error_after([](nlohmann::json& j) { j["kernels"][1].erase("start_ns"); });
  EXPECT_NE(m.find("bad.json: kernels[1].start_ns: missing"), std::string::npos) << m;
  m = load_error_after([](nlohmann::json& j) { j["kernels"][0]["registers"] = "many"; });
  EXPECT_NE(m.find("kernels[0].registers: expected an unsigned integer, got string \"many\""), std::string::npos) << m;
  m = load_error_after([](nlohmann::json& j) { j["kernels"][1]["range"] = 99; });
  EXPECT_NE(m.find("kernels[1].range: range 99 is not in ranges"), std::string::npos) << m;
  m = load_error_after([](nlohmann::json& j) { j["kernels"][1]["end_ns"] = 1; });
  EXPECT_NE(m.find("kernels[1].end_ns: 1 is before start_ns 200"), std::string::npos) << m;
  m = load_error_after([](nlohmann::json& j) { j["ranges"][1]["parent"] = 3; });
  EXPECT_NE(m.find("ranges[1].parent: parent 3 must be an earlier range"), std::string::npos) << m;
  m = load_error_after([](nlohmann::json& j) { j["ranges"][1]["id"] = 1; });
  EXPECT_NE(m.find("ranges[1].id: range id 1 appears twice"), std::string::npos) << m;
  m = load_error_after([](nlohmann::json& j) { j["ranges"][0]["payload"]["type"] = "int128"; });
  EXPECT_NE(m.find("ranges[0].payload.type: unknown payload type \"int128\""), std::string::npos) << m;
  m = load_error_after([](nlohmann::json& j) { j["kernels"][0]["grid"] = {1, 2}; });
  EXPECT_NE(m.find("kernels[0].grid: expected an array of 3 integers"), std::string::npos) << m;
  m = load_error_after([](nlohmann::json& j) { j["options"]["kinds"] = {"kernels"}; });
  EXPECT_NE(m.find("options.kinds"), std::string::npos) << m;
  m = load_error_after([](nlohmann::json& j) { j.erase("memset"); });
  EXPECT_NE(m.find("bad.json: memset: missing"), std::string::npos) << m;
  m = load_error_after([](nlohmann::json& j) { j["process"]["command"] = "a b"; });
  EXPECT_NE(m.find("process.command: expected an array"), std::string::npos) << m;
}

}  // namespace
}  // namespace pfx::trace

// The `trace` command line (trace_main): summarize/diff/recover output and exit codes, usage errors,
// bad files, and the launcher on a program that never touches CUDA (no GPU or library needed).
#include <gtest/gtest.h>

#include <algorithm>
#include <iostream>
#include <sstream>

#include "trace/journal.h"
#include "trace/launcher.h"
#include "trace/trace_cli.h"
#include "trace/trace_json.h"
#include "trace_test_util.h"
#include "util/error.h"

namespace pfx::trace {
namespace {

using testing::data_file;
using testing::ScratchDir;
using testing::write_file;

struct CliResult {
  int code = 0;
  std::string out, err;
};

// Runs trace_main with captured std::cout/std::cerr.
CliResult run_cli(std::vector<std::string> args) {
  args.insert(args.begin(), "kerneltrace");
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  std::ostringstream out, err;
  auto* old_out = std::cout.rdbuf(out.rdbuf());
  auto* old_err = std::cerr.rdbuf(err.rdbuf());
  CliResult r;
  r.code = trace_main(static_cast<int>(argv.size()), argv.data());
  std::cout.rdbuf(old_out);
  std::cerr.rdbuf(old_err);
  r.out = out.str();
  r.err = err.str();
  return r;
}

TEST(TraceCli, SummarizeTextAndJson) {
  CliResult r = run_cli({"summarize", data_file("engine_a.trace.json").string()});
  EXPECT_EQ(r.code, kTraceOk) << r.err;
  EXPECT_NE(r.out.find("by role"), std::string::npos);
  EXPECT_NE(r.out.find("attn_v"), std::string::npos);
  r = run_cli({"summarize", data_file("engine_a.trace.json").string(), "--json", "--busy-range", "blk.0.attn"});
  ASSERT_EQ(r.code, kTraceOk) << r.err;
  nlohmann::json j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["busy"]["range"], "blk.0.attn");
  EXPECT_EQ(j["busy"]["kernel_ns"], 6000);
}

TEST(TraceCli, DiffTextAndJson) {
  CliResult r = run_cli({"diff", data_file("engine_a.trace.json").string(), data_file("engine_b.trace.json").string(),
                         "--top", "2"});
  EXPECT_EQ(r.code, kTraceOk) << r.err;
  EXPECT_NE(r.out.find("by kernel (sorted by |delta|) (top 2)"), std::string::npos) << r.out;
  r = run_cli({"diff", data_file("engine_a.trace.json").string(), data_file("engine_b.trace.json").string(), "--json"});
  ASSERT_EQ(r.code, kTraceOk) << r.err;
  EXPECT_EQ(nlohmann::json::parse(r.out)["roles"][0]["key"], "attn_v");
}

TEST(TraceCli, BadInputNamesTheFile) {
  ScratchDir dir;
  write_file(dir / "broken.json", "{\"schema\": \"kerneltrace/1\"}");
  CliResult r = run_cli({"summarize", (dir / "broken.json").string()});
  EXPECT_EQ(r.code, kTraceBadInput);
  EXPECT_NE(r.err.find("broken.json: complete: missing"), std::string::npos) << r.err;
  r = run_cli({"diff", data_file("engine_a.trace.json").string(), (dir / "nope.json").string()});
  EXPECT_EQ(r.code, kTraceBadInput);
  EXPECT_NE(r.err.find("nope.json: cannot open trace"), std::string::npos) << r.err;
}

// Issue 12, item 6: a name with terminal controls (here the file's) is printed escaped.
TEST(TraceCli, ErrorsPrintUntrustedBytesEscaped) {
  ScratchDir dir;
  const CliResult r = run_cli({"summarize", (dir / "evil\x1b]0;owned\x07.json").string()});
  EXPECT_EQ(r.code, kTraceBadInput);
  EXPECT_EQ(r.err.find('\x1b'), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("evil\\x1b]0;owned\\x07.json: cannot open trace"), std::string::npos) << r.err;
}

TEST(TraceCli, UsageErrors) {
  EXPECT_EQ(run_cli({}).code, kTraceUsage);
  EXPECT_EQ(run_cli({"summarize"}).code, kTraceUsage);
  EXPECT_EQ(run_cli({"summarize", "a.json", "--frobnicate"}).code, kTraceUsage);
  EXPECT_EQ(run_cli({"diff", "a.json"}).code, kTraceUsage);
  EXPECT_EQ(run_cli({"--top", "x", "--", "true"}).code, kTraceUsage);
  EXPECT_EQ(run_cli({"-o", "t.json"}).code, kTraceUsage) << "no -- PROGRAM";
  EXPECT_EQ(run_cli({"--"}).code, kTraceUsage);
  EXPECT_EQ(run_cli({"--skip", "1", "--", "true"}).code, kTraceUsage) << "--skip without --range";
  EXPECT_EQ(run_cli({"--kinds", "kernel", "--range", "prefill", "--", "true"}).code, kTraceUsage);
  CliResult r = run_cli({"--kinds", "kernels", "--", "true"});
  EXPECT_EQ(r.code, kTraceUsage);
  EXPECT_NE(r.err.find("unknown kind 'kernels'"), std::string::npos) << r.err;
  EXPECT_EQ(run_cli({"summarize", "x.json", "--top", "-1"}).code, kTraceUsage);
  r = run_cli({"--help"});
  EXPECT_EQ(r.code, kTraceOk);
  EXPECT_NE(r.out.find("summarize TRACE.json"), std::string::npos);
  EXPECT_EQ(run_cli({"--version"}).code, kTraceOk);
}

TEST(TraceCli, MissingInjectionLibraryIsReported) {
  ScratchDir dir;
  CliResult r = run_cli({"--lib", (dir / "nope.so").string(), "--", "true"});
  EXPECT_EQ(r.code, kTraceNoTrace);
  EXPECT_NE(r.err.find("nope.so: no such file"), std::string::npos) << r.err;
}

TEST(TraceCli, ProgramWithoutCudaLeavesNoTraceAndSaysWhy) {
  // /bin/true never initializes CUDA or NVTX, so the (fake) library is never loaded.
  ScratchDir dir;
  write_file(dir / "libfake.so", "not a library");
  CliResult r = run_cli({"-o", (dir / "t.json").string(), "--lib", (dir / "libfake.so").string(), "--", "true"});
  EXPECT_EQ(r.code, kTraceNoTrace);
  EXPECT_NE(r.err.find("never initialized CUDA"), std::string::npos) << r.err;
  r = run_cli({"-o", (dir / "t.json").string(), "--lib", (dir / "libfake.so").string(), "--", "false"});
  EXPECT_EQ(r.code, kTraceNoTrace);
  EXPECT_NE(r.err.find("exited with status 1"), std::string::npos) << r.err;
  r = run_cli({"--lib", (dir / "libfake.so").string(), "--", (dir / "no-such-program").string()});
  EXPECT_EQ(r.code, kTraceNoTrace);
  EXPECT_NE(r.err.find("cannot run"), std::string::npos) << r.err;
}

TEST(TraceCli, LauncherPassesOptionsToTheProgram) {
  // The traced program sees the injection variables and the options as KERNELTRACE_*.
  ScratchDir dir;
  write_file(dir / "libfake.so", "x");
  const std::string env_out = (dir / "env.txt").string();
  CliResult r = run_cli({"-o", (dir / "t.json").string(), "--lib", (dir / "libfake.so").string(), "--range", "prefill",
                         "--skip", "2", "--buffer-mb", "16", "--", "sh", "-c", "env > " + env_out});
  EXPECT_EQ(r.code, kTraceNoTrace) << r.err;
  std::string env = testing::read_file(env_out);
  EXPECT_NE(env.find("CUDA_INJECTION64_PATH=" + (dir / "libfake.so").string()), std::string::npos) << env;
  EXPECT_NE(env.find("NVTX_INJECTION64_PATH=" + (dir / "libfake.so").string()), std::string::npos);
  EXPECT_NE(env.find("KERNELTRACE_RANGE=prefill"), std::string::npos);
  EXPECT_NE(env.find("KERNELTRACE_RANGE_SKIP=2"), std::string::npos);
  EXPECT_NE(env.find("KERNELTRACE_BUFFER_MB=16"), std::string::npos);
  EXPECT_NE(env.find("KERNELTRACE_OUTPUT=" + (dir / "t.json").string()), std::string::npos);
  EXPECT_NE(env.find("KERNELTRACE_LAUNCHER_PID="), std::string::npos);

  r = run_cli({"-o", (dir / "t.json").string(), "--lib", (dir / "libfake.so").string(), "--kinds", "kernel", "--", "sh",
               "-c", "env > " + env_out});
  env = testing::read_file(env_out);
  EXPECT_EQ(env.find("NVTX_INJECTION64_PATH=" + (dir / "libfake.so").string()), std::string::npos)
      << "NVTX is not routed to the library when ranges are not recorded";
}

TEST(TraceCli, RecoverBuildsAnIncompleteTraceFromAJournal) {
  ScratchDir dir;
  JournalHeader h;
  h.tool_version = "test";
  h.pid = 9;
  h.command = {"crashy"};
  TraceKernel k;
  k.name = "k";
  k.correlation_id = 3;
  k.start_ns = 10;
  k.end_ns = 30;
  Payload none;
  write_file(dir / "t.json.journal",
             journal_line(h) + journal_line(TrackerEvent{RangeBeginEvent{1, "default", "prefill", RangeKind::push_pop, 9, 0, 5, none}}) +
                 journal_line(TrackerEvent{LaunchEvent{3, 9, 1, "cudaLaunchKernel"}}) + journal_line(k));
  CliResult r = run_cli({"recover", (dir / "t.json.journal").string()});
  ASSERT_EQ(r.code, kTraceOk) << r.err;
  Trace t = load_trace(dir / "t.json");
  EXPECT_FALSE(t.complete);
  ASSERT_EQ(t.kernels.size(), 1u);
  EXPECT_EQ(t.kernels[0].range, 1u);
  EXPECT_EQ(run_cli({"recover", (dir / "missing.journal").string()}).code, kTraceBadInput);
}

TEST(TraceCli, FindsTheLibraryFromEnvironmentOrFailsClearly) {
  ScratchDir dir;
  write_file(dir / "libkerneltrace.so", "x");
  setenv(kEnvLibrary, (dir / "libkerneltrace.so").c_str(), 1);
  EXPECT_EQ(find_injection_library(std::nullopt), dir / "libkerneltrace.so");
  setenv(kEnvLibrary, (dir / "gone.so").c_str(), 1);
  EXPECT_THROW(find_injection_library(std::nullopt), Error);
  unsetenv(kEnvLibrary);
}

}  // namespace
}  // namespace pfx::trace

namespace pfx::trace {
namespace {

// `export --format perfetto`: Chrome trace-event JSON with a kernels track and an NVTX ranges track
// per stream, a slice per kernel and per range; `--format csv`: a header and one row per kernel.
TEST(TraceCli, ExportPerfettoAndCsv) {
  const std::string trace = data_file("h200_tiny_prefill.trace.json").string();
  const Trace t = load_trace(trace);
  CliResult r = run_cli({"export", trace, "--format", "perfetto"});
  ASSERT_EQ(r.code, kTraceOk) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  ASSERT_TRUE(j.contains("traceEvents"));
  size_t kernels = 0, ranges = 0;
  std::vector<std::string> tracks;
  for (const auto& e : j["traceEvents"]) {
    if (e["ph"] == "X" && e.value("cat", "") == "kernel") ++kernels;
    else if (e["ph"] == "X") ++ranges;
    if (e["ph"] == "M" && e["name"] == "thread_name") tracks.push_back(e["args"]["name"]);
  }
  EXPECT_EQ(kernels, t.kernels.size());
  EXPECT_GT(ranges, 0u);
  EXPECT_NE(std::find(tracks.begin(), tracks.end(), "stream 13 kernels"), tracks.end());
  EXPECT_NE(std::find(tracks.begin(), tracks.end(), "stream 13 NVTX ranges"), tracks.end());
  r = run_cli({"export", trace, "--format", "csv"});
  ASSERT_EQ(r.code, kTraceOk) << r.err;
  std::istringstream csv(r.out);
  std::string line;
  std::getline(csv, line);
  EXPECT_EQ(line.rfind("name,device,stream,start_ns,end_ns,duration_ns", 0), 0u) << line;
  size_t rows = 0;
  while (std::getline(csv, line)) rows += !line.empty();
  EXPECT_EQ(rows, t.kernels.size());
  EXPECT_EQ(run_cli({"export", trace}).code, kTraceUsage);
  EXPECT_EQ(run_cli({"export", trace, "--format", "svg"}).code, kTraceUsage);
  EXPECT_EQ(run_cli({"export", "no-such.json", "--format", "csv"}).code, kTraceBadInput);
}

}  // namespace
}  // namespace pfx::trace

namespace pfx::trace {
namespace {

bool has(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

// Issue 11, one CLI convention: kerneltrace's exit codes are the project's one table
// (base/contract/exit_codes.h), which its --help prints as prefill's and landing's do.
TEST(TraceCli, ExitCodesAreTheProjectTable) {
  EXPECT_EQ(kTraceOk, contract::kExitOk);
  EXPECT_EQ(kTraceProgramFailed, contract::kExitFail);
  EXPECT_EQ(kTraceNoTrace, contract::kExitUnavailable);
  EXPECT_EQ(kTraceUsage, contract::kExitUsage);
  EXPECT_EQ(kTraceBadInput, contract::kExitError);
  const CliResult top = run_cli({"--help"});
  ASSERT_EQ(top.code, 0);
  for (const char* code : {"0  OK", "1  FAIL", "2  INCOMPLETE", "3  UNAVAILABLE", "4  USAGE", "5  ERROR"})
    EXPECT_TRUE(has(top.out, code)) << code << "\n" << top.out;
  EXPECT_TRUE(has(top.out, "--flush-ms")) << "run, the default command, lists its options in the overview";
  const CliResult bad = run_cli({"summarize", "a.json", "--frobnicate"});
  EXPECT_EQ(bad.code, 4);
  EXPECT_TRUE(has(bad.err, "--frobnicate")) << bad.err;
}

// `kerneltrace COMMAND --help` lists that command's options only, and the exit-code table.
TEST(TraceCli, EachSubcommandHelpListsOnlyItsOptions) {
  const CliResult sum = run_cli({"summarize", "--help"});
  ASSERT_EQ(sum.code, kTraceOk) << sum.err;
  EXPECT_TRUE(has(sum.out, "usage: kerneltrace summarize TRACE.json")) << sum.out;
  EXPECT_TRUE(has(sum.out, "--busy-range")) << sum.out;
  EXPECT_FALSE(has(sum.out, "--format")) << "export's option in summarize's help";
  EXPECT_FALSE(has(sum.out, "--flush-ms")) << "run's option in summarize's help";
  EXPECT_TRUE(has(sum.out, "4  USAGE"));
  const CliResult exp = run_cli({"export", "--help"});
  ASSERT_EQ(exp.code, kTraceOk) << exp.err;
  EXPECT_TRUE(has(exp.out, "--format")) << exp.out;
  EXPECT_FALSE(has(exp.out, "--busy-range")) << exp.out;
  const CliResult run = run_cli({"run", "--help"});
  ASSERT_EQ(run.code, kTraceOk) << run.err;
  EXPECT_TRUE(has(run.out, "--flush-ms")) << run.out;
  EXPECT_FALSE(has(run.out, "--format")) << run.out;
  const CliResult rec = run_cli({"recover", "-h"});
  ASSERT_EQ(rec.code, kTraceOk) << rec.err;
  EXPECT_TRUE(has(rec.out, "usage: kerneltrace recover JOURNAL")) << rec.out;
  // Another subcommand's option is an unknown option here.
  EXPECT_EQ(run_cli({"recover", "x.journal", "--format", "csv"}).code, kTraceUsage);
}

TEST(TraceCli, VersionPlainAndJson) {
  const CliResult plain = run_cli({"--version"});
  ASSERT_EQ(plain.code, kTraceOk);
  EXPECT_TRUE(has(plain.out, std::string("kerneltrace ") + tool_version())) << plain.out;
  const CliResult j = run_cli({"--version", "--json"});
  ASSERT_EQ(j.code, kTraceOk) << j.err;
  const auto v = nlohmann::json::parse(j.out);
  EXPECT_EQ(v["name"], "kerneltrace");
  EXPECT_EQ(v["version"], tool_version());
  EXPECT_EQ(v["trace_schema"], kTraceSchema);
  const auto& subs = v["capabilities"]["subcommands"];
  for (const char* s : {"run", "summarize", "diff", "export", "recover"})
    EXPECT_NE(std::find(subs.begin(), subs.end(), s), subs.end()) << s;
  EXPECT_EQ(run_cli({"--version", "--yaml"}).code, kTraceUsage);
}

}  // namespace
}  // namespace pfx::trace

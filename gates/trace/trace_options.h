// How a trace is taken: which record kinds, the NVTX range filter, buffer size, flush period and
// output path. The injection library reads them from KERNELTRACE_* environment variables (the
// launcher's flags set those); the trace stores them so a reader knows what was (not) recorded.
#pragma once
#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace pfx::trace {

// Environment variables the injection library reads (README.md documents each).
inline constexpr const char* kEnvOutput = "KERNELTRACE_OUTPUT";
inline constexpr const char* kEnvKinds = "KERNELTRACE_KINDS";
inline constexpr const char* kEnvRange = "KERNELTRACE_RANGE";
inline constexpr const char* kEnvRangeSkip = "KERNELTRACE_RANGE_SKIP";
inline constexpr const char* kEnvBufferMb = "KERNELTRACE_BUFFER_MB";
inline constexpr const char* kEnvFlushMs = "KERNELTRACE_FLUSH_MS";
inline constexpr const char* kEnvKeepJournal = "KERNELTRACE_KEEP_JOURNAL";
inline constexpr const char* kEnvQuiet = "KERNELTRACE_QUIET";
// Set by the launcher to its own pid: the process whose parent it is writes KERNELTRACE_OUTPUT;
// processes that program starts in turn write beside it with ".pid<N>" added.
inline constexpr const char* kEnvLauncherPid = "KERNELTRACE_LAUNCHER_PID";

struct RecordKinds {
  bool kernel = true;
  bool memcpy = true;
  bool memset = true;
  bool nvtx = true;
  bool operator==(const RecordKinds&) const = default;
};

// Keep only kernels (and ranges) under a range with this name, skipping its first `skip`
// occurrences (warm-up passes).
struct RangeFilter {
  std::string name;
  std::uint32_t skip = 0;
  bool operator==(const RangeFilter&) const = default;
};

struct TraceOptions {
  RecordKinds kinds;
  std::optional<RangeFilter> range_filter;
  std::uint32_t buffer_mb = 8;      // size of each CUPTI activity buffer
  std::uint32_t flush_period_ms = 0;  // 0: flush only when a buffer fills, at context teardown and at exit
  std::string output = "kerneltrace.%p.json";  // %p is replaced by the process id
  bool keep_journal = false;
  bool quiet = false;
  bool operator==(const TraceOptions&) const = default;
};

std::string kinds_to_string(const RecordKinds& kinds);  // "kernel,memcpy,memset,nvtx"

// Parses "kernel,nvtx" (or "all"). Throws pfx::Error naming the bad word and the accepted ones.
RecordKinds parse_kinds(const std::string& text);

// Reads KERNELTRACE_* through `getenv` (a function so tests need not touch the real environment).
// Bad values throw pfx::Error naming the variable, the value and what was expected.
TraceOptions options_from_env(const std::function<const char*(const char*)>& getenv);

// The variables that reproduce `options` (what the launcher exports for the traced program).
std::map<std::string, std::string> options_to_env(const TraceOptions& options);

// The output path for process `pid`: "%p" replaced by the pid. When the pattern has no "%p" and
// this is not the main traced process (a process the traced program started), ".pid<N>" is
// inserted before the extension so such processes never overwrite the main trace.
std::string expand_output_path(const std::string& pattern, std::uint32_t pid, bool main_process);

}  // namespace pfx::trace

// Runs a program under the injection library: sets CUDA_INJECTION64_PATH (and, when NVTX ranges
// are recorded, NVTX_INJECTION64_PATH) plus the KERNELTRACE_* options, waits for it, and makes sure
// a trace exists afterwards — the one the program wrote at exit, or one recovered from its journal
// when it died early (then the trace says complete=false).
#pragma once
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "trace/trace_options.h"

namespace pfx::trace {

inline constexpr const char* kInjectionLibraryName = "libkerneltrace.so";
inline constexpr const char* kEnvLibrary = "KERNELTRACE_LIB";

// The tracer's version, written into every journal and trace.
const char* tool_version();

// The journal written beside a trace while the program runs: "<trace>.journal".
std::filesystem::path journal_path_for(const std::filesystem::path& trace_path);

// Where the injection library is, first match wins: `explicit_path` (must exist), $KERNELTRACE_LIB
// (must exist), libkerneltrace.so beside the running executable, gates/trace/libkerneltrace.so in a
// directory above it (the build tree the executable is part of), the path compiled into this build.
// Throws pfx::Error listing the places it looked.
std::filesystem::path find_injection_library(const std::optional<std::filesystem::path>& explicit_path);

struct TraceRun {
  TraceOptions options;             // options.output: where the trace goes ("%p": the program's pid)
  std::filesystem::path library;    // the injection library
  std::vector<std::string> command; // program and arguments; looked up on PATH
};

struct TraceRunResult {
  int exit_status = 0;       // the program's exit status, or 128 + signal
  bool signaled = false;
  std::filesystem::path trace_path;
  bool trace_written = false;
  bool recovered = false;    // the program did not finish the trace; it was rebuilt from the journal
  std::string message;       // what happened, for the user
};

// Throws pfx::Error when the program cannot be started at all.
TraceRunResult run_traced(const TraceRun& run);

// Rebuilds a trace from a journal and writes it; returns the number of kernels written.
std::size_t recover_trace(const std::filesystem::path& journal, const std::filesystem::path& trace_path);

}  // namespace pfx::trace

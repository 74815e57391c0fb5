// Starts a program with the injection library loaded, waits, and secures its trace.
#include "trace/launcher.h"

#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <iostream>

#include "trace/assemble.h"
#include "trace/journal.h"
#include "trace/trace_json.h"
#include "util/error.h"
#include "util/process.h"

#ifndef PFX_TRACE_VERSION
#define PFX_TRACE_VERSION "unknown"
#endif
#ifndef KERNELTRACE_BUILD_LIBRARY
#define KERNELTRACE_BUILD_LIBRARY ""
#endif

namespace pfx::trace {

const char* tool_version() { return PFX_TRACE_VERSION; }

std::filesystem::path journal_path_for(const std::filesystem::path& trace_path) {
  return trace_path.string() + ".journal";
}

std::filesystem::path find_injection_library(const std::optional<std::filesystem::path>& explicit_path) {
  namespace fs = std::filesystem;
  std::error_code ec;
  if (explicit_path) {
    if (!fs::is_regular_file(*explicit_path, ec)) fail("--lib ", explicit_path->string(), ": no such file");
    return fs::absolute(*explicit_path);
  }
  if (const char* env = std::getenv(kEnvLibrary); env != nullptr && *env != '\0') {
    if (!fs::is_regular_file(env, ec)) fail(kEnvLibrary, "=", env, ": no such file");
    return fs::absolute(env);
  }
  std::vector<fs::path> looked;
  fs::path self = fs::read_symlink("/proc/self/exe", ec);
  if (!ec) {
    fs::path beside = self.parent_path() / kInjectionLibraryName;
    if (fs::is_regular_file(beside, ec)) return beside;
    looked.push_back(beside);
    // Any program of a build tree (landing in BUILD/gates/landing, a test in BUILD/tests/...):
    // BUILD/gates/trace/libkerneltrace.so, found by walking up, so a carried build works anywhere.
    fs::path dir = self.parent_path();
    for (int up = 0; up < 6 && dir.has_relative_path(); ++up, dir = dir.parent_path()) {
      fs::path candidate = dir / "gates" / "trace" / kInjectionLibraryName;
      if (fs::is_regular_file(candidate, ec)) return candidate;
    }
    looked.push_back(self.parent_path() / "(..)" / "gates/trace" / kInjectionLibraryName);
  }
  const fs::path built = KERNELTRACE_BUILD_LIBRARY;
  if (!built.empty()) {
    if (fs::is_regular_file(built, ec)) return built;
    looked.push_back(built);
  }
  std::string where;
  for (const auto& p : looked) where += " " + p.string();
  fail(kInjectionLibraryName, " not found (looked at:", where, built.empty() ? "; this build has no CUDA, so none was built" : "",
       "); pass --lib PATH or set ", kEnvLibrary);
}

std::size_t recover_trace(const std::filesystem::path& journal, const std::filesystem::path& trace_path) {
  Trace trace = assemble_trace(read_journal(journal));
  write_trace_file(trace, trace_path);
  return trace.kernels.size();
}

namespace {

// Traces written by processes the program started ("<stem>.pid<N><ext>"), for when the program
// itself wrote none (a shell wrapper, say).
std::vector<std::filesystem::path> child_traces(const std::filesystem::path& trace_path) {
  namespace fs = std::filesystem;
  std::vector<fs::path> out;
  const std::string stem = trace_path.stem().string() + ".pid";
  const std::string ext = trace_path.extension().string();
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(trace_path.parent_path(), ec)) {
    const std::string name = entry.path().filename().string();
    if (name.size() > stem.size() + ext.size() && name.compare(0, stem.size(), stem) == 0 &&
        name.compare(name.size() - ext.size(), ext.size(), ext) == 0) {
      out.push_back(entry.path());
    }
  }
  std::sort(out.begin(), out.end());
  return out;
}

}  // namespace

TraceRunResult run_traced(const TraceRun& run) {
  namespace fs = std::filesystem;
  if (run.command.empty()) fail("no program to trace (expected: -- PROGRAM [ARGS...])");
  TraceOptions options = run.options;
  options.output = fs::absolute(options.output).string();  // the program may change directory
  if (options.output.find("%p") == std::string::npos) {
    // A trace left by an earlier run must not be mistaken for this run's.
    std::error_code ec;
    fs::remove(options.output, ec);
    fs::remove(journal_path_for(options.output), ec);
    for (const fs::path& old : child_traces(options.output)) fs::remove(old, ec);
  }
  std::map<std::string, std::string> env = options_to_env(options);
  env["CUDA_INJECTION64_PATH"] = run.library.string();
  if (options.kinds.nvtx) env["NVTX_INJECTION64_PATH"] = run.library.string();
  env[kEnvLauncherPid] = std::to_string(getpid());
  for (const char* name : {"CUDA_INJECTION64_PATH", "NVTX_INJECTION64_PATH"}) {
    const char* old = std::getenv(name);
    if (old != nullptr && env.count(name) && env[name] != old) {
      std::cerr << "kerneltrace: warning: replacing " << name << "=" << old << " for the traced program\n";
    }
  }

  // The program runs in the foreground: it has the terminal and our process group (Ctrl-C stops
  // it), and we ignore SIGINT/SIGQUIT meanwhile, so the launcher lives on to recover its journal.
  ProcessSpec spec;
  spec.argv = run.command;
  spec.env = env;
  spec.capture = false;
  spec.own_process_group = false;
  spec.ignore_interrupts = true;
  const ProcessResult p = run_process(spec);
  if (p.failed_to_start) fail("cannot run ", run.command[0], ": ", p.err);
  const pid_t pid = p.pid;

  TraceRunResult result;
  if (p.signal != 0) {
    result.signaled = true;
    result.exit_status = 128 + p.signal;
  } else {
    result.exit_status = p.exit_code;
  }
  result.trace_path = expand_output_path(options.output, static_cast<std::uint32_t>(pid), /*main_process=*/true);
  const fs::path journal = journal_path_for(result.trace_path);
  std::error_code ec;
  if (fs::is_regular_file(result.trace_path, ec)) {
    result.trace_written = true;
    result.message = "wrote " + result.trace_path.string();
  } else if (fs::is_regular_file(journal, ec)) {
    try {
      std::size_t kernels = recover_trace(journal, result.trace_path);
      result.trace_written = true;
      result.recovered = true;
      result.message = "the program did not finish its trace; recovered " + std::to_string(kernels) +
                       " kernels from " + journal.string() + " into " + result.trace_path.string() +
                       " (complete=false)";
    } catch (const Error& e) {
      result.message = std::string("the program did not finish its trace and its journal is unreadable: ") + e.what();
    }
  } else if (std::vector<fs::path> others = child_traces(result.trace_path); others.size() == 1) {
    result.trace_written = true;
    result.trace_path = others.front();
    result.message = "the program wrote no trace itself; the one process it started that used CUDA/NVTX wrote " +
                     result.trace_path.string();
  } else if (!others.empty()) {
    result.message = "the program wrote no trace itself; " + std::to_string(others.size()) +
                     " processes it started did:";
    for (const fs::path& other : others) result.message += " " + other.string();
  } else {
    result.message = "no trace was written to " + result.trace_path.string() +
                     ": the program never initialized CUDA (nor used NVTX, when ranges are recorded), or the "
                     "injection library failed to load "
                     "(its messages, prefixed 'kerneltrace:', are on stderr above)";
  }
  return result;
}

}  // namespace pfx::trace

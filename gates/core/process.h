// Runs a program as a child process with a timeout: the only way gates touch an engine build
// (DESIGN.md seam 1). The child gets its own process group so a hang is killed with everything it
// started; stdout/stderr are captured (tails kept when huge) and the exit is classified.
#pragma once
#include <chrono>
#include <filesystem>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace pfx::gates {

struct ProcessSpec {
  std::vector<std::string> argv;                 // argv[0] is looked up on PATH when it has no '/'
  std::filesystem::path cwd;                     // empty: inherit
  std::map<std::string, std::string> env;        // added to (or overriding) the parent's environment
  double timeout_s = 0;                          // 0: no limit
  std::filesystem::path stdout_file;             // non-empty: stdout goes here instead of memory
  bool merge_stderr_into_stdout = false;
  size_t capture_limit = 4 << 20;                // bytes kept per stream (the tail)
  std::function<void()> on_tick;                 // called about every 100 ms while the child runs
  std::function<void(const std::string&)> on_stdout;  // each chunk of stdout as it arrives (progress)
};

struct ProcessResult {
  int exit_code = -1;        // valid when exited
  int signal = 0;            // non-zero when killed by a signal (not by our timeout)
  bool exited = false;
  bool timed_out = false;
  bool failed_to_start = false;
  std::string out, err;
  double wall_s = 0;

  bool ok() const { return exited && exit_code == 0; }
  bool crashed() const { return signal != 0 && !timed_out; }
  // "exit 0", "exit 3", "killed by signal 11 (SIGSEGV)", "timed out after 5 s (killed)", ...
  std::string describe() const;
  // The last `lines` lines of stderr (or stdout when stderr is empty), for a reason text.
  std::string tail(size_t lines = 12) const;
};

ProcessResult run_process(const ProcessSpec& spec);

// Shell-quoted command line for reports ("reproduce with: ...").
std::string shell_join(const std::vector<std::string>& argv, const std::map<std::string, std::string>& env = {});

// Absolute path of an executable on PATH, or empty.
std::filesystem::path find_on_path(const std::string& name);

}  // namespace pfx::gates

// The one way the project runs a program as a child process (posix_spawn): the gates' engine
// calls (DESIGN.md seam 1: captured output, a wall-clock timeout, the child in its own process
// group so a hang is killed with everything it started) and the tracer's launcher (the program in
// the foreground: it inherits the terminal, Ctrl-C reaches it, and the launcher outlives it to
// recover its journal). Output is captured with its tail kept when huge; the exit is classified.
#pragma once
#include <filesystem>
#include <functional>
#include <map>
#include <string>
#include <vector>

namespace pfx {

struct ProcessSpec {
  std::vector<std::string> argv;                 // argv[0] is looked up on PATH when it has no '/'
  std::filesystem::path cwd;                     // empty: inherit
  std::map<std::string, std::string> env;        // added to (or overriding) the parent's environment
  double timeout_s = 0;                          // 0: no limit (SIGTERM, then SIGKILL 2 s later)
  // true: stdin is /dev/null and stdout/stderr are captured; false: the child inherits all three.
  bool capture = true;
  std::filesystem::path stdout_file;             // with capture: stdout goes here instead of memory
  bool merge_stderr_into_stdout = false;
  size_t capture_limit = 4 << 20;                // bytes kept per stream (the tail)
  // true: the child leads a new process group (timeouts kill the group); false: it stays in ours.
  bool own_process_group = true;
  // true: this process ignores SIGINT/SIGQUIT until the child ends, as system(3) does; the child
  // gets the default dispositions (so Ctrl-C stops the program, not us).
  bool ignore_interrupts = false;
  std::function<void()> on_tick;                 // called about every 100 ms while the child runs
  std::function<void(const std::string&)> on_stdout;  // each chunk of captured stdout as it arrives
};

struct ProcessResult {
  int pid = 0;
  int exit_code = -1;        // valid when exited
  int signal = 0;            // non-zero when killed by a signal (not by our timeout)
  bool exited = false;
  bool timed_out = false;
  bool failed_to_start = false;  // `err` says why
  std::string out, err;
  double wall_s = 0;

  bool ok() const { return exited && exit_code == 0; }
  bool crashed() const { return signal != 0 && !timed_out; }
  // "exit 0", "exit 3", "killed by signal 11 (SIGSEGV)", "timed out after 5 s (killed)", ...
  std::string describe() const;
  // The last `lines` lines of stderr (or stdout when stderr is empty), for a reason text.
  std::string tail(size_t lines = 12) const;
};

// Throws pfx::Error only for a spec it cannot act on (empty argv, an unwritable stdout_file).
ProcessResult run_process(const ProcessSpec& spec);

// Shell-quoted command line for reports ("reproduce with: ...").
std::string shell_join(const std::vector<std::string>& argv, const std::map<std::string, std::string>& env = {});

// Absolute path of an executable on PATH, or empty.
std::filesystem::path find_on_path(const std::string& name);

}  // namespace pfx

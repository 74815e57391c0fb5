// Child processes through posix_spawn: captured output, timeouts, process groups (see process.h).
#include "util/process.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cerrno>
#include <cstring>
#include <sstream>

#include "util/error.h"

extern char** environ;

namespace pfx {

namespace {

using Clock = std::chrono::steady_clock;

void append_capped(std::string& s, const char* data, size_t n, size_t cap) {
  s.append(data, n);
  if (s.size() > cap + cap / 4) s.erase(0, s.size() - cap);  // keep the tail: errors come last
}

std::vector<std::string> merged_environment(const std::map<std::string, std::string>& extra) {
  std::map<std::string, std::string> env;
  for (char** e = environ; e && *e; ++e) {
    std::string kv = *e;
    const auto eq = kv.find('=');
    if (eq != std::string::npos) env[kv.substr(0, eq)] = kv.substr(eq + 1);
  }
  for (const auto& [k, v] : extra) env[k] = v;
  std::vector<std::string> out;
  for (const auto& [k, v] : env) out.push_back(k + "=" + v);
  return out;
}

void kill_group(pid_t pid, bool group, int sig) {
  if (!group || ::kill(-pid, sig) != 0) ::kill(pid, sig);
}

// Owns the descriptors of one spawn: closed on every path out.
struct Fd {
  int fd = -1;
  ~Fd() { reset(); }
  void reset() {
    if (fd >= 0) ::close(fd);
    fd = -1;
  }
};

// SIGINT/SIGQUIT ignored in this process while a foreground child runs (system(3)'s rule).
class IgnoreInterrupts {
 public:
  explicit IgnoreInterrupts(bool on) : on_(on) {
    if (!on_) return;
    struct sigaction ignore {};
    ignore.sa_handler = SIG_IGN;
    sigemptyset(&ignore.sa_mask);
    sigaction(SIGINT, &ignore, &old_int_);
    sigaction(SIGQUIT, &ignore, &old_quit_);
  }
  ~IgnoreInterrupts() {
    if (!on_) return;
    sigaction(SIGINT, &old_int_, nullptr);
    sigaction(SIGQUIT, &old_quit_, nullptr);
  }
  IgnoreInterrupts(const IgnoreInterrupts&) = delete;  // restores process-wide state once
  IgnoreInterrupts& operator=(const IgnoreInterrupts&) = delete;

 private:
  bool on_;
  struct sigaction old_int_ {};
  struct sigaction old_quit_ {};
};

// posix_spawn's attribute and file-action objects, destroyed on every path out.
struct SpawnSetup {
  posix_spawn_file_actions_t actions;
  posix_spawnattr_t attr;
  SpawnSetup() {
    posix_spawn_file_actions_init(&actions);
    posix_spawnattr_init(&attr);
  }
  ~SpawnSetup() {
    posix_spawn_file_actions_destroy(&actions);
    posix_spawnattr_destroy(&attr);
  }
  SpawnSetup(const SpawnSetup&) = delete;  // owns the two objects
  SpawnSetup& operator=(const SpawnSetup&) = delete;
};

// Reads both pipes until they close and the child has exited, enforcing the timeout.
void wait_capturing(const ProcessSpec& spec, pid_t pid, Fd& out, Fd& err, ProcessResult& res, int& wstatus, Clock::time_point t0) {
  pollfd fds[2] = {{out.fd, POLLIN, 0}, {err.fd, POLLIN, 0}};
  bool child_done = false;
  char buf[65536];
  auto deadline = spec.timeout_s > 0 ? t0 + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(spec.timeout_s))
                                     : Clock::time_point::max();
  auto next_tick = t0;
  bool sent_term = false;
  Clock::time_point stop_reading_at{};
  while (fds[0].fd >= 0 || fds[1].fd >= 0 || !child_done) {
    const int rc = ::poll(fds, 2, 100);
    if (rc < 0 && errno != EINTR) break;
    for (int i = 0; i < 2; ++i) {
      if (fds[i].fd < 0 || !(fds[i].revents & (POLLIN | POLLHUP | POLLERR))) continue;
      const ssize_t n = ::read(fds[i].fd, buf, sizeof buf);
      if (n > 0) {
        append_capped(i == 0 ? res.out : res.err, buf, static_cast<size_t>(n), spec.capture_limit);
        if (i == 0 && spec.on_stdout) spec.on_stdout(std::string(buf, static_cast<size_t>(n)));
      } else if (n == 0 || (errno != EINTR && errno != EAGAIN)) {
        (i == 0 ? out : err).reset();
        fds[i].fd = -1;
      }
    }
    if (!child_done && ::waitpid(pid, &wstatus, WNOHANG) == pid) child_done = true;
    const auto now = Clock::now();
    if (child_done) {
      // The child is gone; a grandchild may still hold the pipes. Give it a moment, then stop
      // reading so a leaked background process cannot hang us.
      if (stop_reading_at == Clock::time_point{}) stop_reading_at = now + std::chrono::seconds(2);
      if (now > stop_reading_at) {
        kill_group(pid, spec.own_process_group, SIGKILL);
        break;
      }
      continue;
    }
    if (spec.on_tick && now >= next_tick) {
      spec.on_tick();
      next_tick = now + std::chrono::milliseconds(100);
    }
    if (now >= deadline && !sent_term) {
      res.timed_out = true;
      kill_group(pid, spec.own_process_group, SIGTERM);
      sent_term = true;
      deadline = now + std::chrono::seconds(2);
    } else if (now >= deadline && sent_term) {
      kill_group(pid, spec.own_process_group, SIGKILL);
      deadline = Clock::time_point::max();
    }
  }
  if (!child_done) ::waitpid(pid, &wstatus, 0);
}

// A foreground child: no pipes; the timeout (if any) is enforced by polling waitpid.
void wait_foreground(const ProcessSpec& spec, pid_t pid, ProcessResult& res, int& wstatus, Clock::time_point t0) {
  const bool limited = spec.timeout_s > 0 || spec.on_tick;
  if (!limited) {
    while (::waitpid(pid, &wstatus, 0) < 0)
      if (errno != EINTR) fail("waiting for ", spec.argv[0], " failed: ", std::strerror(errno));
    return;
  }
  auto deadline = spec.timeout_s > 0 ? t0 + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(spec.timeout_s))
                                     : Clock::time_point::max();
  bool sent_term = false;
  while (::waitpid(pid, &wstatus, WNOHANG) != pid) {
    ::usleep(20000);
    if (spec.on_tick) spec.on_tick();
    const auto now = Clock::now();
    if (now < deadline) continue;
    res.timed_out = true;
    kill_group(pid, spec.own_process_group, sent_term ? SIGKILL : SIGTERM);
    deadline = sent_term ? Clock::time_point::max() : now + std::chrono::seconds(2);
    sent_term = true;
  }
}

}  // namespace

std::filesystem::path find_on_path(const std::string& name) {
  if (name.find('/') != std::string::npos) return name;
  const char* path = std::getenv("PATH");
  std::stringstream ss(path ? path : "/usr/bin:/bin");
  std::string dir;
  while (std::getline(ss, dir, ':')) {
    if (dir.empty()) continue;
    std::filesystem::path p = std::filesystem::path(dir) / name;
    if (::access(p.c_str(), X_OK) == 0) return p;
  }
  return {};
}

ProcessResult run_process(const ProcessSpec& spec) {
  ProcessResult res;
  if (spec.argv.empty()) fail("run_process: empty argv");
  const auto t0 = Clock::now();
  const std::string exe = find_on_path(spec.argv[0]).string();
  if (exe.empty()) {
    res.failed_to_start = true;
    res.err = spec.argv[0] + ": not found on PATH";
    return res;
  }
  SpawnSetup setup;
  Fd out_read, out_write, err_read, err_write, out_file;
  if (spec.capture) {
    int p[2];
    if (::pipe2(p, O_CLOEXEC) != 0) fail("run_process: pipe() failed: ", std::strerror(errno));
    out_read.fd = p[0], out_write.fd = p[1];
    if (::pipe2(p, O_CLOEXEC) != 0) fail("run_process: pipe() failed: ", std::strerror(errno));
    err_read.fd = p[0], err_write.fd = p[1];
    if (!spec.stdout_file.empty()) {
      out_file.fd = ::open(spec.stdout_file.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
      if (out_file.fd < 0) fail(spec.stdout_file.string(), ": cannot open for writing: ", std::strerror(errno));
    }
    const int stdout_fd = out_file.fd >= 0 ? out_file.fd : out_write.fd;
    posix_spawn_file_actions_addopen(&setup.actions, 0, "/dev/null", O_RDONLY, 0);
    posix_spawn_file_actions_adddup2(&setup.actions, stdout_fd, 1);
    posix_spawn_file_actions_adddup2(&setup.actions, spec.merge_stderr_into_stdout ? stdout_fd : err_write.fd, 2);
  }
  if (!spec.cwd.empty()) posix_spawn_file_actions_addchdir_np(&setup.actions, spec.cwd.c_str());
  short flags = 0;
  if (spec.own_process_group) {
    flags |= POSIX_SPAWN_SETPGROUP;
    posix_spawnattr_setpgroup(&setup.attr, 0);
  }
  if (spec.ignore_interrupts) {
    // Ignored dispositions survive exec: the program gets the defaults back.
    sigset_t defaults;
    sigemptyset(&defaults);
    sigaddset(&defaults, SIGINT);
    sigaddset(&defaults, SIGQUIT);
    posix_spawnattr_setsigdefault(&setup.attr, &defaults);
    flags |= POSIX_SPAWN_SETSIGDEF;
  }
  posix_spawnattr_setflags(&setup.attr, flags);

  const auto env_strings = merged_environment(spec.env);
  std::vector<char*> envp;
  for (const auto& s : env_strings) envp.push_back(const_cast<char*>(s.c_str()));
  envp.push_back(nullptr);
  std::vector<char*> argvp;
  for (const auto& s : spec.argv) argvp.push_back(const_cast<char*>(s.c_str()));
  argvp.push_back(nullptr);

  IgnoreInterrupts ignore(spec.ignore_interrupts);
  pid_t pid = 0;
  const int rc = posix_spawn(&pid, exe.c_str(), &setup.actions, &setup.attr, argvp.data(), envp.data());
  if (rc != 0) {
    res.failed_to_start = true;
    res.err = "cannot execute " + exe + ": " + std::strerror(rc);
    return res;
  }
  res.pid = pid;
  out_write.reset();
  err_write.reset();
  out_file.reset();
  int wstatus = 0;
  if (spec.capture) wait_capturing(spec, pid, out_read, err_read, res, wstatus, t0);
  else wait_foreground(spec, pid, res, wstatus, t0);
  if (res.timed_out) kill_group(pid, spec.own_process_group, SIGKILL);  // whatever of the group is left

  res.wall_s = std::chrono::duration<double>(Clock::now() - t0).count();
  if (WIFEXITED(wstatus)) {
    res.exited = true;
    res.exit_code = WEXITSTATUS(wstatus);
  } else if (WIFSIGNALED(wstatus)) {
    res.signal = WTERMSIG(wstatus);
  }
  if (res.timed_out) res.exited = false;
  return res;
}

std::string ProcessResult::describe() const {
  std::ostringstream os;
  if (timed_out) {
    os << "timed out after " << static_cast<long>(wall_s + 0.5) << " s (killed)";
  } else if (failed_to_start) {
    os << "could not be started";
  } else if (signal) {
    os << "killed by signal " << signal << " (SIG" << (sigabbrev_np(signal) ? sigabbrev_np(signal) : "?") << ")";
  } else {
    os << "exit " << exit_code;
  }
  return os.str();
}

std::string ProcessResult::tail(size_t lines) const {
  const std::string& s = err.empty() ? out : err;
  std::vector<std::string> all;
  std::stringstream ss(s);
  for (std::string line; std::getline(ss, line);)
    if (!line.empty()) all.push_back(line);
  std::string t;
  for (size_t i = all.size() > lines ? all.size() - lines : 0; i < all.size(); ++i) t += (t.empty() ? "" : "\n") + all[i];
  return t;
}

std::string shell_join(const std::vector<std::string>& argv, const std::map<std::string, std::string>& env) {
  auto quote = [](const std::string& s) {
    if (!s.empty() && s.find_first_not_of("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-./=:,+@%") == std::string::npos)
      return s;
    std::string q = "'";
    for (char c : s) q += (c == '\'') ? std::string("'\\''") : std::string(1, c);
    return q + "'";
  };
  std::string out;
  for (const auto& [k, v] : env) out += k + "=" + quote(v) + " ";
  for (size_t i = 0; i < argv.size(); ++i) out += (i ? " " : "") + quote(argv[i]);
  return out;
}

}  // namespace pfx

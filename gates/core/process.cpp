// fork/exec child processes with captured output, a wall-clock timeout and process-group kill.
#include "core/process.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <sstream>

#include "util/error.h"

extern char** environ;

namespace pfx::gates {

namespace {

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

void kill_group(pid_t pid, int sig) {
  if (::kill(-pid, sig) != 0) ::kill(pid, sig);
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
  const auto t0 = std::chrono::steady_clock::now();

  int out_pipe[2] = {-1, -1}, err_pipe[2] = {-1, -1};
  if (::pipe2(out_pipe, O_CLOEXEC) != 0 || ::pipe2(err_pipe, O_CLOEXEC) != 0)
    fail("run_process: pipe() failed: ", std::strerror(errno));
  int out_file = -1;
  if (!spec.stdout_file.empty()) {
    out_file = ::open(spec.stdout_file.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (out_file < 0) fail(spec.stdout_file.string(), ": cannot open for writing: ", std::strerror(errno));
  }
  // Everything the child needs is prepared before fork (no allocation after it).
  const auto env_strings = merged_environment(spec.env);
  std::vector<char*> envp;
  for (const auto& s : env_strings) envp.push_back(const_cast<char*>(s.c_str()));
  envp.push_back(nullptr);
  std::vector<char*> argvp;
  for (const auto& s : spec.argv) argvp.push_back(const_cast<char*>(s.c_str()));
  argvp.push_back(nullptr);
  const std::string exe = find_on_path(spec.argv[0]).string();
  const std::string cwd = spec.cwd.string();

  const pid_t pid = ::fork();
  if (pid < 0) fail("run_process: fork() failed: ", std::strerror(errno));
  if (pid == 0) {
    ::setpgid(0, 0);
    const int devnull = ::open("/dev/null", O_RDONLY);
    if (devnull >= 0) ::dup2(devnull, 0);
    ::dup2(out_file >= 0 ? out_file : out_pipe[1], 1);
    ::dup2(spec.merge_stderr_into_stdout ? (out_file >= 0 ? out_file : out_pipe[1]) : err_pipe[1], 2);
    if (!cwd.empty() && ::chdir(cwd.c_str()) != 0) {
      const char msg[] = "run_process: cannot chdir to the working directory\n";
      (void)!::write(2, msg, sizeof msg - 1);
      ::_exit(127);
    }
    if (!exe.empty()) ::execve(exe.c_str(), argvp.data(), envp.data());
    const char msg[] = "run_process: cannot execute the program\n";
    (void)!::write(2, msg, sizeof msg - 1);
    ::_exit(127);
  }
  ::setpgid(pid, pid);  // also from the parent: no race with the kill below
  ::close(out_pipe[1]);
  ::close(err_pipe[1]);
  if (out_file >= 0) ::close(out_file);

  pollfd fds[2] = {{out_pipe[0], POLLIN, 0}, {err_pipe[0], POLLIN, 0}};
  bool open_out = true, open_err = true, child_done = false;
  int wstatus = 0;
  char buf[65536];
  auto deadline = spec.timeout_s > 0 ? t0 + std::chrono::duration_cast<std::chrono::steady_clock::duration>(
                                                std::chrono::duration<double>(spec.timeout_s))
                                     : std::chrono::steady_clock::time_point::max();
  auto next_tick = t0;
  bool sent_term = false;
  std::chrono::steady_clock::time_point kill_at{};
  while (open_out || open_err || !child_done) {
    const int rc = ::poll(fds, 2, 100);
    if (rc < 0 && errno != EINTR) break;
    for (int i = 0; i < 2; ++i) {
      if (fds[i].fd < 0 || !(fds[i].revents & (POLLIN | POLLHUP | POLLERR))) continue;
      const ssize_t n = ::read(fds[i].fd, buf, sizeof buf);
      if (n > 0) {
        append_capped(i == 0 ? res.out : res.err, buf, static_cast<size_t>(n), spec.capture_limit);
        if (i == 0 && spec.on_stdout) spec.on_stdout(std::string(buf, static_cast<size_t>(n)));
      } else if (n == 0 || (errno != EINTR && errno != EAGAIN)) {
        ::close(fds[i].fd);
        fds[i].fd = -1;
        (i == 0 ? open_out : open_err) = false;
      }
    }
    if (!child_done) {
      const pid_t w = ::waitpid(pid, &wstatus, WNOHANG);
      if (w == pid) child_done = true;
    }
    const auto now = std::chrono::steady_clock::now();
    if (child_done) {
      // The child is gone; a grandchild may still hold the pipes. Give it a moment, then stop
      // reading so a leaked background process cannot hang us.
      if (kill_at == std::chrono::steady_clock::time_point{}) kill_at = now + std::chrono::seconds(2);
      if (now > kill_at) {
        kill_group(pid, SIGKILL);
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
      kill_group(pid, SIGTERM);
      sent_term = true;
      deadline = now + std::chrono::seconds(2);
    } else if (now >= deadline && sent_term) {
      kill_group(pid, SIGKILL);
      deadline = std::chrono::steady_clock::time_point::max();
    }
  }
  for (auto& f : fds)
    if (f.fd >= 0) ::close(f.fd);
  if (!child_done) ::waitpid(pid, &wstatus, 0);
  if (res.timed_out) kill_group(pid, SIGKILL);  // whatever of the group is left

  res.wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  if (WIFEXITED(wstatus)) {
    res.exited = true;
    res.exit_code = WEXITSTATUS(wstatus);
    if (res.exit_code == 127 && res.err.find("run_process: cannot execute") != std::string::npos)
      res.failed_to_start = true;
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

}  // namespace pfx::gates

// Worktree + CMake builds with a SHA-keyed cache (see build_cache.h).
#include "run/build_cache.h"

#include <fstream>
#include <sstream>
#include <thread>

#include "core/gate_result.h"
#include "core/ids.h"
#include "core/sha256.h"
#include "run/git.h"
#include "util/atomic_file.h"
#include "util/error.h"
#include "util/escape.h"
#include "util/file_lock.h"
#include "util/process.h"

namespace pfx::gates {

namespace fs = std::filesystem;
using nlohmann::json;

bool Build::has_capability(const std::string& flag) const {
  if (!version.is_object() || !version.contains("capabilities")) return false;
  const auto& caps = version["capabilities"];
  return caps.contains(flag) && caps[flag].is_boolean() && caps[flag].get<bool>();
}

bool Build::has_capability(const std::string& list, const std::string& name) const {
  if (!version.is_object() || !version.contains("capabilities")) return false;
  const auto& caps = version["capabilities"];
  if (!caps.contains(list) || !caps[list].is_array()) return false;
  for (const auto& e : caps[list])
    if (e == name) return true;
  return false;
}

bool Build::cuda_compiled() const {
  return version.is_object() && version.contains("capabilities") &&
         version["capabilities"].value("cuda_compiled", false);
}

std::string revision_id(const fs::path& repo, const std::string& rev, const std::vector<std::string>& exclude) {
  if (rev == kWorktreeRev) {
    const auto change = working_change(repo, exclude);
    if (change.empty()) return short_sha(change.base_sha);
    return short_sha(change.base_sha) + "-wt-" + change.hash;
  }
  return short_sha(resolve_commit(repo, rev));
}

std::string extract_build_errors(const std::string& log, size_t max_lines) {
  std::vector<std::string> lines;
  std::stringstream ss(log);
  for (std::string l; std::getline(ss, l);) lines.push_back(l);
  std::vector<bool> keep(lines.size(), false);
  for (size_t i = 0; i < lines.size(); ++i) {
    const auto& l = lines[i];
    const bool hit = l.find("error:") != std::string::npos || l.find("Error:") != std::string::npos ||
                     l.find("CMake Error") != std::string::npos || l.rfind("FAILED:", 0) == 0 ||
                     l.find(" error ") != std::string::npos || l.find("undefined reference") != std::string::npos;
    if (!hit) continue;
    // The error line and a little context after it (the offending source line, the caret).
    for (size_t k = i; k < lines.size() && k < i + 4; ++k) keep[k] = true;
  }
  std::string out;
  size_t n = 0;
  for (size_t i = 0; i < lines.size() && n < max_lines; ++i)
    if (keep[i]) {
      out += lines[i] + "\n";
      ++n;
    }
  if (out.empty()) {  // no recognisable error line: the tail is the best evidence
    for (size_t i = lines.size() > 15 ? lines.size() - 15 : 0; i < lines.size(); ++i) out += lines[i] + "\n";
  }
  return out;
}

namespace {

void ask_version(Build& b) {
  b.prefill_sha256 = sha256_file(b.prefill);
  ProcessSpec spec;
  spec.argv = {b.prefill.string(), "--version", "--json"};
  spec.timeout_s = 60;
  const auto r = run_process(spec);
  if (!r.ok()) {
    b.version = nullptr;
    b.version_error = "`prefill --version --json` " + r.describe() + (r.tail(2).empty() ? "" : ": " + r.tail(2));
    return;
  }
  try {
    b.version = json::parse(r.out.substr(0, r.out.find('\n')));
    if (!b.version.is_object()) throw std::runtime_error("not an object");
  } catch (const std::exception&) {
    b.version = nullptr;
    b.version_error = "`prefill --version --json` printed no JSON object (an older build?): " + r.out.substr(0, 120);
  }
}

}  // namespace

Build prepare_build(const BuildSpec& spec, const Progress& progress) {
  Build b;
  b.label = spec.label;
  b.rev = spec.rev;
  WorkingChange change;
  if (spec.rev == kWorktreeRev) {
    change = working_change(spec.repo, spec.exclude);
    b.sha = change.base_sha;
    b.worktree = !change.empty();
    b.id = b.worktree ? short_sha(b.sha) + "-wt-" + change.hash : short_sha(b.sha);
  } else {
    b.sha = resolve_commit(spec.repo, spec.rev);
    b.id = short_sha(b.sha);
  }
  b.src = spec.cache_dir / "src" / b.id;
  b.dir = spec.cache_dir / "build" / b.id;
  b.prefill = b.dir / spec.prefill_relpath;
  b.log = b.dir / "landing-build.log";
  const fs::path stamp = b.dir / "landing-build.json";

  const bool have_ninja = !find_on_path("ninja").empty();
  std::vector<std::string> configure = {"cmake", "-S", b.src.string(), "-B", b.dir.string()};
  if (have_ninja) configure.insert(configure.end(), {"-G", "Ninja"});
  if (!spec.fixtures_dir.empty()) configure.push_back("-DPFX_FIXTURES_DIR=" + spec.fixtures_dir.string());
  configure.insert(configure.end(), spec.cmake_args.begin(), spec.cmake_args.end());
  const int jobs = spec.jobs > 0 ? spec.jobs : std::max(1u, std::thread::hardware_concurrency());
  const std::vector<std::string> build = {"cmake", "--build", b.dir.string(), "-j", std::to_string(jobs)};
  b.command = shell_join(configure) + " && " + shell_join(build);

  // One run at a time checks, builds and stamps this id (two landings of one commit, a bisect
  // beside a run): the second waits here, then finds the first one's build in the cache.
  fs::create_directories(b.dir.parent_path());
  const FileLock lock(b.dir.string() + ".lock", [&] {
    progress.say(spec.label + " " + b.id + ": another landing run holds " + b.dir.string() + ".lock; waiting for it");
  });

  if (fs::exists(stamp) && fs::exists(b.prefill)) {
    json s;
    try {
      std::ifstream in(stamp);
      s = json::parse(in);
    } catch (const std::exception&) {
      s = nullptr;  // a damaged stamp is not trusted: rebuild
    }
    if (s.is_object() && s.value("ok", false) && s.value("sha", "") == b.sha && s.value("id", "") == b.id) {
      // The stamp alone is not trusted: the binary must say it is that commit.
      ask_version(b);
      const std::string commit = b.version.is_object() ? b.version.value("commit", std::string()) : std::string();
      if (commit == b.sha) {
        b.ok = true;
        b.cached = true;
        b.seconds = s.value("seconds", 0.0);
        progress.say(spec.label + " " + b.id + ": cached build " + b.dir.string());
        return b;
      }
      progress.say(spec.label + " " + b.id + ": the cached build in " + b.dir.string() + " says commit " +
                   (commit.empty() ? "nothing" : quote_untrusted(commit)) + " (`prefill --version --json`" +
                   (b.version_error.empty() ? "" : ": " + b.version_error) + "), not " + b.sha + ": rebuilding");
      b.version = nullptr;
      b.version_error.clear();
    }
  }

  progress.say(spec.label + " " + b.id + ": worktree " + b.src.string());
  if (b.worktree) {
    fs::remove_all(b.src);
    try { git(spec.repo, {"worktree", "prune"}); } catch (const Error&) {}
  }
  ensure_worktree(spec.repo, b.sha, b.src);
  if (b.worktree) apply_working_change(spec.repo, change, b.src);

  fs::create_directories(b.dir);
  fs::remove(stamp);
  const auto t0 = std::chrono::steady_clock::now();
  std::string log;
  bool ok = true;
  const std::vector<std::string>* steps[] = {&configure, &build};
  for (const std::vector<std::string>* step : steps) {
    progress.say(spec.label + " " + b.id + ": " + (step == &configure ? "configure" : "build") + " (" +
                 std::to_string(jobs) + " jobs)");
    ProcessSpec ps;
    ps.argv = *step;
    ps.merge_stderr_into_stdout = true;
    const double spent = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    ps.timeout_s = std::max(1.0, spec.timeout_s - spent);
    // Ninja's "[done/total]" lines become a progress line every 20 s, so a long build shows how far it is.
    auto last_said = std::chrono::steady_clock::now();
    ps.on_stdout = [&](const std::string& chunk) {
      const auto open = chunk.rfind('[');
      const auto slash = open == std::string::npos ? std::string::npos : chunk.find('/', open);
      const auto close = slash == std::string::npos ? std::string::npos : chunk.find(']', slash);
      if (close == std::string::npos) return;
      const auto now = std::chrono::steady_clock::now();
      if (now - last_said < std::chrono::seconds(20)) return;
      last_said = now;
      progress.say(spec.label + " " + b.id + ": build step " + chunk.substr(open + 1, close - open - 1));
    };
    const auto r = run_process(ps);
    log += "$ " + shell_join(*step) + "\n" + r.out + "\n";
    if (!r.ok()) {
      ok = false;
      b.error = (step == &configure ? "configure " : "build ") + r.describe() + "\n" + extract_build_errors(r.out);
      break;
    }
  }
  b.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  write_file_atomic(b.log, log);
  if (ok && !fs::exists(b.prefill)) {
    ok = false;
    b.error = "the build succeeded but produced no " + b.prefill.string() + " (build.prefill in the gate profile)";
  }
  b.ok = ok;
  if (ok) {
    write_file_atomic(stamp, json{{"ok", true}, {"sha", b.sha}, {"id", b.id}, {"seconds", b.seconds},
                                  {"time_utc", utc_now_iso8601()}}.dump(1));
    progress.say(spec.label + " " + b.id + ": built in " + std::to_string(static_cast<long>(b.seconds)) + " s");
    ask_version(b);
  } else {
    progress.say(spec.label + " " + b.id + ": BUILD FAILED (log " + b.log.string() + ")");
  }
  return b;
}

Build prebuilt_build(const std::string& label, const fs::path& dir, const std::string& prefill_relpath, const fs::path& src,
                     const std::string& id) {
  Build b;
  b.label = label;
  b.dir = fs::absolute(dir);
  b.src = fs::absolute(src);
  b.prefill = b.dir / prefill_relpath;
  b.rev = "prebuilt " + b.dir.string();
  b.cached = true;
  if (!fs::exists(b.prefill)) fail(b.prefill.string(), ": no prefill binary in the prebuilt ", label, " build folder");
  b.ok = true;
  ask_version(b);
  if (b.version.is_object()) b.sha = b.version.value("commit", std::string());
  if (b.sha.empty() || b.sha == "unknown") b.sha = "unknown";
  b.id = !id.empty() ? id : short_sha(b.sha);
  // The id names folders (results, models, work): from a flag or a binary, it is checked first.
  require_candidate_id(b.id, b.dir.string(), id.empty() ? "the commit its prefill reports (pass --" + label + "-id)" : "--" + label + "-id");
  b.command = "(prebuilt in " + b.dir.string() + ")";
  return b;
}

json to_json(const Build& b) {
  return {{"label", b.label}, {"rev", b.rev}, {"sha", b.sha}, {"id", b.id}, {"worktree", b.worktree},
          {"src", b.src.string()}, {"dir", b.dir.string()}, {"prefill", b.prefill.string()},
          {"prefill_sha256", b.prefill_sha256}, {"log", b.log.string()}, {"ok", b.ok}, {"cached", b.cached}, {"seconds", b.seconds},
          {"error", b.error}, {"command", b.command}, {"version", b.version}, {"version_error", b.version_error}};
}

}  // namespace pfx::gates

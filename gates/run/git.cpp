// git as a subprocess (see git.h).
#include "run/git.h"

#include <unistd.h>

#include <fstream>
#include <sstream>

#include "util/error.h"
#include "util/process.h"
#include "util/unique_name.h"

namespace pfx::gates {

namespace fs = std::filesystem;

namespace {
ProcessResult run_git(const fs::path& repo, const std::vector<std::string>& args) {
  ProcessSpec spec;
  spec.argv = {"git", "-C", repo.string()};
  spec.argv.insert(spec.argv.end(), args.begin(), args.end());
  spec.timeout_s = 600;
  spec.env["GIT_TERMINAL_PROMPT"] = "0";
  return run_process(spec);
}
std::string chomp(std::string s) {
  while (!s.empty() && (s.back() == '\n' || s.back() == '\r')) s.pop_back();
  return s;
}
}  // namespace

ProcessResult git_result(const fs::path& repo, const std::vector<std::string>& args) { return run_git(repo, args); }

std::string git(const fs::path& repo, const std::vector<std::string>& args) {
  const auto r = run_git(repo, args);
  if (!r.ok()) {
    std::vector<std::string> argv = {"git", "-C", repo.string()};
    argv.insert(argv.end(), args.begin(), args.end());
    fail(shell_join(argv), ": ", r.describe(), ": ", r.tail(6));
  }
  return chomp(r.out);
}

fs::path repo_root(const fs::path& dir) { return git(dir, {"rev-parse", "--show-toplevel"}); }

std::string resolve_commit(const fs::path& repo, const std::string& rev) {
  const auto r = run_git(repo, {"rev-parse", "--verify", "--quiet", rev + "^{commit}"});
  if (!r.ok()) fail(repo.string(), ": revision '", rev, "' does not name a commit");
  return chomp(r.out);
}

WorkingChange working_change(const fs::path& repo, const std::vector<std::string>& exclude) {
  WorkingChange c;
  c.base_sha = resolve_commit(repo, "HEAD");
  std::vector<std::string> spec = {"--", "."};
  for (const auto& e : exclude)
    if (!e.empty()) spec.push_back(":(exclude)" + e);
  std::vector<std::string> diff = {"diff", "--binary", "HEAD"};
  diff.insert(diff.end(), spec.begin(), spec.end());
  c.patch = run_git(repo, diff).out;
  std::vector<std::string> ls = {"ls-files", "--others", "--exclude-standard", "-z"};
  ls.insert(ls.end(), spec.begin(), spec.end());
  const std::string list = git(repo, ls);
  std::string cur;
  for (char ch : list) {
    if (ch == '\0') {
      if (!cur.empty()) c.untracked.push_back(cur);
      cur.clear();
    } else {
      cur += ch;
    }
  }
  if (!cur.empty()) c.untracked.push_back(cur);
  // Hash the change with git's own object hash: no crypto code here, stable across machines.
  const fs::path tmp = fs::temp_directory_path() / ("landing-change-" + unique_suffix() + ".bin");  // per run and thread
  {
    std::ofstream out(tmp, std::ios::binary);
    out << c.patch;
    for (const auto& p : c.untracked) {
      out << "\nuntracked " << p << "\n";
      std::ifstream in(repo / p, std::ios::binary);
      out << in.rdbuf();
    }
  }
  c.hash = git(repo, {"hash-object", tmp.string()}).substr(0, 12);
  fs::remove(tmp);
  return c;
}

void ensure_worktree(const fs::path& repo, const std::string& sha, const fs::path& dir) {
  if (fs::exists(dir / ".git")) {
    const auto r = run_git(dir, {"rev-parse", "HEAD"});
    if (r.ok() && chomp(r.out) == sha) return;
    fs::remove_all(dir);
    git(repo, {"worktree", "prune"});
  } else if (fs::exists(dir)) {
    fs::remove_all(dir);
    git(repo, {"worktree", "prune"});
  }
  fs::create_directories(dir.parent_path());
  git(repo, {"worktree", "add", "--detach", "--force", dir.string(), sha});
}

void apply_working_change(const fs::path& repo, const WorkingChange& change, const fs::path& dir) {
  if (!change.patch.empty()) {
    const fs::path patch = dir.parent_path() / (dir.filename().string() + ".patch");
    {
      std::ofstream out(patch, std::ios::binary);
      out << change.patch;
    }
    git(dir, {"apply", "--binary", "--whitespace=nowarn", patch.string()});
  }
  for (const auto& p : change.untracked) {
    fs::create_directories((dir / p).parent_path());
    fs::copy_file(repo / p, dir / p, fs::copy_options::overwrite_existing);
  }
}

bool show_file(const fs::path& repo, const std::string& sha, const std::string& path, std::string& out) {
  const auto r = run_git(repo, {"show", sha + ":" + path});
  if (!r.ok()) return false;
  out = r.out;
  return true;
}

}  // namespace pfx::gates

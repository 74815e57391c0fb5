// The few git operations landing needs, run as `git` processes: resolve revisions, describe the
// working tree's uncommitted change, and add detached worktrees for builds.
#pragma once
#include <filesystem>
#include <string>
#include <vector>

#include "util/process.h"

namespace pfx::gates {

// Runs `git -C repo args...`; returns stdout without the trailing newline; throws pfx::Error with
// git's stderr on failure.
std::string git(const std::filesystem::path& repo, const std::vector<std::string>& args);
// The same without throwing: the finished process (exit code, stdout, stderr), for commands whose
// failure is an answer (`merge-base --is-ancestor`, `bisect skip`).
ProcessResult git_result(const std::filesystem::path& repo, const std::vector<std::string>& args);
std::filesystem::path repo_root(const std::filesystem::path& dir);
// Full SHA of a commit-ish; throws naming `rev` when it does not resolve.
std::string resolve_commit(const std::filesystem::path& repo, const std::string& rev);
inline std::string short_sha(const std::string& sha) { return sha.substr(0, 12); }

// The uncommitted change of `repo` (tracked diff vs HEAD plus untracked, non-ignored files).
struct WorkingChange {
  std::string base_sha;
  std::string patch;                         // `git diff --binary HEAD`
  std::vector<std::string> untracked;        // paths relative to the repo root
  std::string hash;                          // 12 hex digits over patch + untracked names/contents
  bool empty() const { return patch.empty() && untracked.empty(); }
};
// `exclude`: repo-relative paths left out (the reports folder and the build cache, which a landing
// run itself writes and which must not change the candidate's id).
WorkingChange working_change(const std::filesystem::path& repo, const std::vector<std::string>& exclude = {});

// Creates (or reuses) a detached worktree of `sha` at `dir`.
void ensure_worktree(const std::filesystem::path& repo, const std::string& sha, const std::filesystem::path& dir);
// Applies a working change into a fresh worktree of its base commit.
void apply_working_change(const std::filesystem::path& repo, const WorkingChange& change, const std::filesystem::path& dir);

// Contents of `path` at commit `sha`, or nullopt-like empty + false when the file does not exist there.
bool show_file(const std::filesystem::path& repo, const std::string& sha, const std::string& path, std::string& out);

}  // namespace pfx::gates

// Builds of a baseline or candidate revision: a git worktree plus a CMake build directory under
// the cache (default <repo>/.landing/), keyed by commit SHA — or, for WORKTREE, by the base SHA
// plus a hash of the uncommitted change — so a second landing of the same commit builds nothing.
#pragma once
#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "core/gate_profile.h"
#include "core/progress.h"

namespace pfx::gates {

inline constexpr const char* kWorktreeRev = "WORKTREE";

struct BuildSpec {
  std::filesystem::path repo;
  std::string rev;                    // a commit-ish or "WORKTREE"
  std::string label;                  // "baseline" | "candidate"
  std::filesystem::path cache_dir;    // worktrees in <cache>/src/<id>, builds in <cache>/build/<id>
  std::filesystem::path fixtures_dir; // passed as -DPFX_FIXTURES_DIR
  std::vector<std::string> cmake_args;
  std::string prefill_relpath = "engine/cli/prefill";
  double timeout_s = 5400;
  int jobs = 0;
  std::vector<std::string> exclude;   // repo-relative paths not part of a WORKTREE change (reports, cache)
};

struct Build {
  std::string label, rev;
  std::string sha;          // the commit (for WORKTREE: its base commit)
  std::string id;           // report id: short SHA, or short base SHA + "-wt-" + change hash
  bool worktree = false;
  std::filesystem::path src, dir, prefill, log;
  std::string prefill_sha256;  // of the binary the gates run (what an imported result must match)
  bool ok = false;
  bool cached = false;
  double seconds = 0;
  std::string error;        // a build failure: the compiler's error lines
  std::string command;      // the configure + build commands, for reproducing
  nlohmann::json version;   // `prefill --version --json`, or null
  std::string version_error;

  // True where the build's `--version --json` lists `name` under capabilities.<list>.
  bool has_capability(const std::string& list, const std::string& name) const;
  // A boolean capability (`"info_tensors": true`); false when absent.
  bool has_capability(const std::string& flag) const;
  bool cuda_compiled() const;
};

// The id a revision would get, without building (for `landing report`, imports, locking).
std::string revision_id(const std::filesystem::path& repo, const std::string& rev, const std::vector<std::string>& exclude = {});

// Creates the worktree, configures and builds (or reuses a cached successful build), then asks the
// binary for its version. A failed build returns ok=false with `error`; only tool failures
// (git missing, cache not writable) throw.
Build prepare_build(const BuildSpec& spec, const Progress& progress);

// A build made elsewhere (a folder carried to a GPU host without git): `dir` holds `prefill_relpath`;
// sha and id come from its `prefill --version --json` (commit) unless `id` is given; `src` is the
// source tree the gate profile's relative paths (synth model profiles) are resolved in.
Build prebuilt_build(const std::string& label, const std::filesystem::path& dir, const std::string& prefill_relpath,
                     const std::filesystem::path& src, const std::string& id);

// The lines of a build log that carry the error (compiler "error:" lines with their context,
// "CMake Error" blocks, ninja "FAILED:" lines), at most `max_lines`.
std::string extract_build_errors(const std::string& log, size_t max_lines = 40);

nlohmann::json to_json(const Build& b);

}  // namespace pfx::gates

// Which kernels' code changed between the two builds, for the timing gate's "unchanged code": each
// build's SASS hash per kernel (kernel-sass.json beside kernel-resources.json, schema kernel-sass/1,
// written by scripts/kernel_sass.py from `cuobjdump --dump-sass`), joined with the kernels the
// traces saw (CUPTI's demangled name → mangled name, and which kernels ran under each role).
// Where a build has no hashes (no cuobjdump anywhere) every kernel is "unavailable" and nothing
// is called unchanged code.
#pragma once
#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <string>

#include "run/build_cache.h"
#include "trace/trace_model.h"

namespace pfx::gates {

struct SassHashes {
  bool available = false;
  std::string reason;                                // why not, when not
  std::map<std::string, std::string> by_mangled;     // mangled kernel name → sha256 of its SASS
  nlohmann::json origin = nlohmann::json::object();  // file, tool: what the report shows
};
// Reads <prefill dir>/kernel-sass.json; when absent, runs `python3 <repo>/scripts/kernel_sass.py`
// on the build's prefill to write it (the hashes are then cached there). Never throws.
SassHashes load_sass_hashes(const Build& b, const std::filesystem::path& repo);
// Parses a kernel-sass.json text (`origin` names it in errors).
SassHashes parse_sass_hashes(const std::string& text, const std::string& origin);

struct TraceCode {
  std::map<std::string, std::string> mangled;                  // demangled (as the diff keys it) → mangled
  std::map<std::string, std::set<std::string>> role_kernels;   // role → demangled kernel names
  std::set<std::string> candidate_launched;                    // mangled names in the candidate's traces
};
void collect_trace_code(const pfx::trace::Trace& trace, TraceCode& code, bool candidate_side = false);

// {status, reason, kernels: {name: unchanged|changed|unavailable}, roles: {role: …}}; a role is
// unchanged only when every kernel that ran under it is.
nlohmann::json kernel_code_status(const TraceCode& code, const SassHashes& baseline, const SassHashes& candidate);

}  // namespace pfx::gates

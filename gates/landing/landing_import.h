// `landing import DIR`: adds gate results produced elsewhere (say, the GPU gates run on a GPU host
// with `landing gate` or `landing run`) to the same candidate's report here, and re-renders it.
#pragma once
#include <filesystem>
#include <string>

namespace pfx::gates {

// DIR: a report folder (landing.json), a results folder (gates/*.json), or a folder of gate
// result files. Target: `into` (a report id) or the newest report of the results' candidate.
// An imported result replaces the local one unless it is SKIPPED and the local one is not.
int landing_import(const std::filesystem::path& dir, const std::filesystem::path& reports, const std::string& into, bool quiet);

}  // namespace pfx::gates

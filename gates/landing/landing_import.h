// `landing import DIR`: adds gate results produced elsewhere (say, the GPU gates run on a GPU host
// with `landing gate` or `landing run`) to the same candidate's report here, and re-renders it.
// What an imported result must prove, and how it is re-judged: landing/import_rules.h.
#pragma once
#include <filesystem>
#include <string>

namespace pfx::gates {

// DIR: a report folder (landing.json), a results folder (gates/*.json), or a folder of gate
// result files. Target: `into` (a report id) or the newest report of the results' candidate.
// Refused (pfx::Error, exit 3) when a result is not importable or not bound to the report, unless
// `accept_mismatch` gives the reason to take unbound results anyway (the report shows it). Each
// result is re-judged under the report's profile; it never replaces a local FAIL; a suite result
// joins the local suite run; every replaced or refused result stays in landing.json (superseded).
int landing_import(const std::filesystem::path& dir, const std::filesystem::path& reports, const std::string& into,
                   const std::string& accept_mismatch, bool quiet);

}  // namespace pfx::gates

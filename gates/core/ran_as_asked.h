// Did a `prefill` call run what the gate asked for? A gate selects the engine's work with flags
// (--backend, --path, --gemm, --decode-graph) and files the numbers under that name; a build that
// accepts `--gemm pipelined` and silently runs its default would pass "gemm=pipelined" on the
// default's logits, and one that runs the fast path when asked for the generic one makes parity
// compare a path with itself. The build's own JSON output names what it ran (docs/prefill-cli.md:
// logits, greedy and bench print backend, path, gemm, decode_graph), so every call whose figures a
// gate uses is compared with what was asked:
//   - a field that contradicts the ask is wrong: the check FAILs, not waivable (the numbers are not
//     those of what was asked, so no threshold or waiver applies to them);
//   - a field the build must report (its `--version --json` shows it is new enough) but did not
//     is wrong too: the build did not prove what it ran;
//   - a field an older build cannot report is unchecked, and the check's reason says so.
// An unflagged selector (no --gemm, no --decode-graph) asks for the build's default: the first
// entry of the capability list, which the parity plan also takes as the default variant.
// This checks the build's word against itself: it catches a build that ignores or misreads a flag
// and says so, not one that reports the asked name while running something else.
// The rule reads stored evidence only (what was asked, what was reported, the build's version), so
// `landing import` re-verifies results from another host with it (landing/import_ran_as_asked.h).
#pragma once
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace pfx::gates {

// The flags a gate passed to select what one `prefill` call runs.
struct AskedRun {
  std::string subcommand;    // logits | greedy | bench: which fields its output reports
  std::string backend;       // --backend (bench without it: cuda, its default)
  std::string path;          // --path; "" = not passed (the build's default, not checked)
  std::string gemm;          // --gemm; "" = not passed: the build's default, first of capabilities.gemm_variants
  std::string decode_graph;  // --decode-graph; "" = not passed: first of capabilities.decode_graph
};
nlohmann::json to_json(const AskedRun& a);

// The selecting fields of a call's JSON output, verbatim (absent ones stay absent): what a check
// stores as "reported", so the verdict can be redone from the result alone.
nlohmann::json reported_selection(const nlohmann::json& output);

struct RanAsAsked {
  std::vector<std::string> wrong;      // contradictions, and fields the build must report but did not
  std::vector<std::string> unchecked;  // what this build's output cannot report (an older build)
  bool ok() const { return wrong.empty(); }
  RanAsAsked& add(const RanAsAsked& other);  // the calls behind one check, judged together
  std::string reason() const;  // the wrong items, "; "-joined
  std::string note() const;    // "; not verified: …" for the unchecked items (each once), or ""
};

// `reported`: reported_selection of the call's output; `version`: the build's `--version --json`
// (null where it gave none); `who`: the build as the reasons name it ("the candidate ca4d1da7e000").
RanAsAsked verify_ran_as_asked(const AskedRun& asked, const nlohmann::json& reported, const nlohmann::json& version,
                               const std::string& who);

// The evidence one check stores per call under metrics["ran"][role]: {asked, reported}.
nlohmann::json ran_evidence(const AskedRun& asked, const nlohmann::json& reported);

}  // namespace pfx::gates

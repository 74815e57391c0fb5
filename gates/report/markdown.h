// landing.md: the report a reviewer reads, in GitHub-flavoured Markdown (it is also the CI step
// summary): a result line, "Before merge" (a task list: what blocks the merge), §4 Verification
// (a list item per gate with its evidence, reason, waivers and reproduce command), §5 Results
// (before → after, Δ%), the gate details (checks and the tables flagged in_markdown, folded in
// <details>), the gate profile with every baseline → candidate difference (loosened thresholds and
// new waivers highlighted), and the environment block. Paths are relative to the repository.
#pragma once
#include <string>

#include "report/landing_record.h"

namespace pfx::gates {

// step_summary: for a CI step summary (GitHub's $GITHUB_STEP_SUMMARY: each report's summary.md): no
// links into the ledger folder, which the summary page does not have.
struct MarkdownOptions {
  bool step_summary = false;
};
std::string render_markdown(const LandingRecord& r, const MarkdownOptions& opts = {});
// `text` with the repository's absolute folder as relative paths: "<repo>/x" → "x", the folder
// beside it "<repo>/../shared" → "../shared", the bare folder → ".".
std::string relative_paths(std::string text, const std::string& repo);
// The status marker of the Markdown report: "✅", "❌", "⏭️", "❔", "⚠️".
std::string status_icon(Status s);

}  // namespace pfx::gates

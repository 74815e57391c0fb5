// The bisect report, OUT/bisect.md and OUT/bisect.json (see bisect.h).
#include <sstream>

#include "run/git.h"
#include "landing/bisect.h"

namespace pfx::gates {

using nlohmann::json;

namespace {

const BisectStep* step_of(const BisectOutcome& o, const std::string& sha) {
  for (const auto& s : o.steps)
    if (s.sha == sha) return &s;
  return nullptr;
}

std::string cell(std::string s) {
  for (auto& c : s)
    if (c == '|' || c == '\n') c = c == '|' ? '/' : ' ';
  return s;
}

std::string what(const BisectOptions& opt) {
  return "gate `" + opt.gate + "`" + (opt.metric.empty() ? "" : " (checks matching `" + opt.metric + "`)");
}

}  // namespace

std::string render_bisect_markdown(const BisectOptions& opt, const BisectOutcome& o) {
  std::ostringstream md;
  const BisectStep* first = o.first_bad.empty() ? nullptr : step_of(o, o.first_bad);
  if (first)
    md << "# Bisect: first bad commit " << short_sha(first->sha) << " — " << cell(first->subject) << "\n\n";
  else if (!o.problem.empty())
    md << "# Bisect: nothing to bisect\n\n";
  else
    md << "# Bisect: undecided (skipped commits left)\n\n";
  md << what(opt) << ", good `" << short_sha(o.good) << "` (" << opt.good << "), bad `" << short_sha(o.bad) << "` (" << opt.bad << "), " << o.steps.size()
     << " gate runs (both ends first; each commit built once, cached by commit).\n\n";
  if (!o.problem.empty()) md << "**" << o.problem << ".**\n\n";
  if (first) {
    md << "## First bad commit\n\n"
       << "- commit: `" << first->sha << "` " << cell(first->subject) << "\n"
       << "- " << opt.gate << ": **" << to_string(first->result.status) << "** — " << cell(first->result.reason) << "\n";
    if (!first->result.evidence.empty()) md << "- evidence: " << cell(first->result.evidence) << "\n";
    md << "- decided by: " << cell(first->why) << "\n"
       << "- reproduce: `landing gate " << opt.gate << " --baseline " << short_sha(o.good) << " --candidate " << short_sha(first->sha) << " --gates " << opt.run.gates_profile << "`\n"
       << "- gate result: [" << first->evidence << "](" << first->evidence << ")\n\n";
  }
  if (!o.could_be.empty()) {
    md << "## The first bad commit is one of\n\n";
    for (const auto& c : o.could_be) {
      const BisectStep* s = step_of(o, c);
      md << "- `" << short_sha(c) << "`" << (s ? " " + cell(s->subject) + " (" + cell(s->why) + ")" : "") << "\n";
    }
    md << "\n";
  }
  md << "## Steps\n\n| # | commit | subject | " << opt.gate << " | marked | why | evidence |\n|---|---|---|---|---|---|---|\n";
  for (size_t i = 0; i < o.steps.size(); ++i) {
    const auto& s = o.steps[i];
    md << "| " << i << " " << s.role << " | `" << short_sha(s.sha) << "` | " << cell(s.subject) << " | "
       << to_string(s.result.status) << " | " << to_string(s.verdict) << " | " << cell(s.why) << " | [json](" << s.evidence << ") |\n";
  }
  return md.str();
}

json bisect_to_json(const BisectOptions& opt, const BisectOutcome& o) {
  json steps = json::array();
  for (const auto& s : o.steps)
    steps.push_back({{"sha", s.sha}, {"subject", s.subject}, {"role", s.role}, {"status", to_string(s.result.status)},
                     {"verdict", to_string(s.verdict)}, {"why", s.why}, {"evidence", s.evidence}});
  return {{"schema", "landing-bisect/1"},
          {"gate", opt.gate},
          {"metric", opt.metric},
          {"good", o.good},
          {"bad", o.bad},
          {"profile", opt.run.gates_profile},
          {"first_bad", o.first_bad.empty() ? json(nullptr) : json(o.first_bad)},
          {"could_be", o.could_be},
          {"problem", o.problem},
          {"steps", steps}};
}

}  // namespace pfx::gates

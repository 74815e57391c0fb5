// Markdown rendering of a landing record (see markdown.h).
#include "report/markdown.h"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <sstream>

#include "junit/xml.h"
#include "report/checklist.h"
#include "util/escape.h"
#include "util/text_format.h"

namespace pfx::gates {

using nlohmann::json;

namespace {

std::string short_id(const json& build) {
  const std::string sha = build.value("sha", "");
  return build.value("id", sha.substr(0, 12));
}

std::string md_escape_cell(const std::string& s) { return markdown_cell(s); }

// Text inside a list item or paragraph: line breaks kept inside the item (a break, then the
// item's indentation), '<' not read as HTML.
std::string md_escape_inline(const std::string& s) {
  std::string out;
  for (char c : s) {
    if (c == '\n') out += "<br>";
    else if (c == '<') out += "&lt;";
    else out += c;
  }
  return out;
}

std::string one_line(const std::string& s) {
  std::string out = s.substr(0, s.find('\n'));
  return out.size() > 160 ? out.substr(0, 157) + "..." : out;
}

// A code span holding `s`, whatever backticks it holds (CommonMark: a longer fence).
std::string code_span(const std::string& s) {
  size_t run = 0, longest = 0;
  for (char c : s) {
    run = c == '`' ? run + 1 : 0;
    longest = std::max(longest, run);
  }
  const std::string fence(longest + 1, '`');
  const bool pad = !s.empty() && (s.front() == '`' || s.back() == '`');
  return fence + (pad ? " " : "") + s + (pad ? " " : "") + fence;
}

std::string gpu_line(const json& env) {
  if (!env.is_object()) return "unknown";
  if (env.contains("gpu") && env["gpu"].is_object()) {
    const auto& g = env["gpu"];
    std::string s = g.value("name", "?") + ", driver " + g.value("driver_version", "?") + ", CUDA (driver) " +
                    g.value("cuda_driver_version", "?");
    if (g.contains("idle_sample"))
      s += "; SM clock " + std::to_string(g["idle_sample"].value("sm_clock_mhz", 0u)) + "/" +
           std::to_string(g["idle_sample"].value("max_sm_clock_mhz", 0u)) + " MHz, " +
           std::to_string(g["idle_sample"].value("temperature_c", 0u)) + " °C (" + g.value("source", "") + ")";
    return s;
  }
  return "none (" + env.value("gpu_unavailable_reason", std::string("no GPU")) + ")";
}

// A gate's table: a bold title, a header naming each column's unit, numbers right-aligned.
// Numeric columns right-aligned; rows a check judged get a last column with its status.
std::string markdown_table(const Table& t) {
  const bool judged = std::any_of(t.rows.begin(), t.rows.end(), [](const TableRow& row) { return row.verdict.has_value(); });
  std::ostringstream md;
  md << "\n**" << md_escape_cell(t.title) << "**\n\n|";
  for (const auto& c : t.columns) md << " " << md_escape_cell(column_header(c)) << " |";
  if (judged) md << " verdict |";
  md << "\n|";
  for (size_t i = 0; i < t.columns.size(); ++i) {
    // Numbers right-aligned: a column holding any number.
    const bool numeric = i > 0 && std::any_of(t.rows.begin(), t.rows.end(), [&](const TableRow& row) {
      return i < row.cells.size() && row.cells[i].value && row.cells[i].text.empty();
    });
    md << (numeric ? "---:|" : "---|");
  }
  if (judged) md << "---|";
  md << "\n";
  for (const auto& row : t.rows) {
    md << "|";
    for (size_t i = 0; i < t.columns.size() && i < row.cells.size(); ++i) {
      const Cell& c = row.cells[i];
      md << " " << md_escape_cell(cell_text(c, t.columns[i].format) + (c.note.empty() ? "" : " (" + c.note + ")")) << " |";
    }
    if (judged) md << " " << (row.verdict ? status_icon(*row.verdict) + " " + std::string(to_string(*row.verdict)) : "") << " |";
    md << "\n";
  }
  if (!t.note.empty()) md << "\n" << t.note << "\n";
  return md.str();
}

}  // namespace

std::string status_icon(Status s) {
  switch (s) {
    case Status::Pass: return "✅";
    case Status::Fail: return "❌";
    case Status::Skipped: return "⏭️";
    case Status::Inconclusive: return "❔";
    case Status::Waived: return "⚠️";
  }
  return "";
}

std::string relative_paths(std::string text, const std::string& repo) {
  // The repository's own absolute folder, then the folder beside it (../shared), as the
  // repository-relative paths a reader can type in their own checkout.
  auto replace_all = [&](const std::string& from, const std::string& to) {
    if (from.size() < 2) return;
    for (size_t at = text.find(from); at != std::string::npos; at = text.find(from, at + to.size())) text.replace(at, from.size(), to);
  };
  if (repo.empty() || repo == "/" || repo[0] != '/') return text;
  const std::string root = repo.back() == '/' ? repo.substr(0, repo.size() - 1) : repo;
  replace_all(root + "/", "");
  const std::string parent = std::filesystem::path(root).parent_path().string();
  if (parent != "/") replace_all(parent + "/", "../");
  // The bare folder (`cmake -S /abs/repo`): "." where it ends a word.
  for (size_t at = text.find(root); at != std::string::npos; at = text.find(root, at + 1)) {
    const size_t after = at + root.size();
    if (after == text.size() || text[after] == ' ' || text[after] == '`' || text[after] == '\n' || text[after] == ')')
      text.replace(at, root.size(), ".");
  }
  return text;
}

std::string render_markdown(const LandingRecord& r, const MarkdownOptions& opts) {
  std::ostringstream md;
  const std::string cand = short_id(r.candidate), base = short_id(r.baseline);
  md << "# " << r.seq << " · landing " << cand << " vs " << base << " — " << to_string(r.verdict) << "\n\n";
  if (!opts.step_summary)
    md << (r.prev.empty() ? std::string("(first)") : "← [" + std::to_string(r.seq - 1) + " · " + r.prev + "](../" + r.prev + "/landing.md)")
       << " · [Index](../index.md) · [Trends](../index.html) · "
       << (r.next.empty() ? std::string("(newest when written)") : "[" + std::to_string(r.seq + 1) + " · " + r.next + "](../" + r.next + "/landing.md) →")
       << "\n\n";
  md << "**Verdict: " << to_string(r.verdict) << "** — " << r.verdict_reason << "\n\n";
  // Result line, like the seed's: headline numbers first.
  md << "Result: ";
  if (const Row* h = r.headline_row())
    md << h->metric << " " << cell_text(h->baseline, h->format) << " → " << cell_text(h->candidate, h->format) << " (" << delta_text(*h)
       << ")";
  else
    md << "no A/B measurement";
  for (const auto& g : r.gates)
    if (const GateInfo* info = gate_info(g.gate); info && info->evidence_in_result_line && !g.evidence.empty() && g.status != Status::Skipped)
      md << "; " << g.evidence;
  md << ". Candidate: " << r.candidate.value("sha", std::string()).substr(0, 12) << " (" << md_escape_cell(r.candidate.value("rev", std::string()))
     << (r.candidate.value("worktree", false) ? ", uncommitted working tree" : "") << "). Baseline: "
     << r.baseline.value("sha", std::string()).substr(0, 12) << " (" << md_escape_cell(r.baseline.value("rev", std::string())) << "). Date: " << r.created
     << ".\n\n";

  // What blocks the merge, first: a GFM task list, one item per gate of the profile and per
  // loosened profile key; an unticked item says what is missing.
  md << "## Before merge\n\n";
  size_t open_items = 0;
  for (const auto& it : checklist_items(r)) {
    const GateResult* g = it.result;
    const std::string mark = it.gate.empty() ? "⚠️" : g ? status_icon(g->status) : "⏳";
    const std::string name = it.gate.empty() ? "gate profile" : it.gate + " " + (g ? std::string(to_string(g->status)) : "NOT RUN");
    const bool ticked = it.done && (it.todo.empty() || (g && g->status == Status::Pass));
    // The item names its gate already: the todo without its "gate: " prefix.
    std::string todo = it.todo;
    const std::string prefix = (it.gate.empty() ? std::string("gate profile") : it.gate) + ": ";
    if (todo.rfind(prefix, 0) == 0) todo = todo.substr(prefix.size());
    md << "- [" << (ticked ? "x" : " ") << "] " << mark << " **" << md_escape_inline(name) << "**"
       << (g && !g->required ? " (not required)" : "") << (todo.empty() ? "" : " — " + md_escape_inline(todo)) << "\n";
    open_items += !ticked;
  }
  md << "\n" << (open_items ? std::to_string(open_items) + " open item(s) before merge." : std::string("Nothing blocks the merge."))
     << "\n\n";

  md << "## 4. Verification\n\n";
  for (const auto& g : r.gates) {
    md << "- " << status_icon(g.status) << " **" << g.gate << " " << to_string(g.status) << "**" << (g.required ? "" : " (not required)")
       << ": " << md_escape_inline(g.evidence.empty() ? g.reason : g.evidence) << "\n";
    if (!g.evidence.empty() && g.status != Status::Pass) md << "  - " << md_escape_inline(g.reason) << "\n";
    if (g.gate == "build" && g.details.contains("errors"))
      for (const auto& [side, text] : g.details["errors"].items()) {
        md << "  - " << side << " build error:\n\n    ```\n";
        std::stringstream lines(text.get<std::string>());
        for (std::string line; std::getline(lines, line);) md << "    " << line << "\n";
        md << "    ```\n\n";
      }
    for (const auto& c : g.checks)
      if (c.status == Status::Waived)
        md << "  - WAIVED " << md_escape_inline(c.name) << ": " << md_escape_inline(c.reason) << " — waiver: \"" << md_escape_inline(c.waiver)
           << "\"\n";
    if (!g.command.empty()) md << "  - reproduce: " << code_span(g.command) << "\n";
  }
  for (const auto& name : r.enabled_gates)
    if (!r.gate(name)) md << "- ⏳ **" << name << " NOT RUN**: no result for this gate yet (run it, or `landing import` it)\n";
  md << "\n## 5. Results\n\n";
  const auto rows = r.result_rows();
  if (rows.empty()) {
    md << "No before → after figures: the measuring gates did not run here.\n";
  } else {
    md << "| metric | before | after | Δ |\n|---|---:|---:|---:|\n";
    for (const Row* row : rows)
      md << "| " << md_escape_cell(row->shown_label()) << " | " << cell_text(row->baseline, row->format) << " | "
         << cell_text(row->candidate, row->format) << " | " << delta_text(*row) << " |\n";
  }

  // Each gate's checks and tables folded (<details>, open where the gate failed): the summary
  // stays one screen, the evidence one click away. Blank lines around the Markdown inside, as
  // GFM requires for it to render as Markdown within the HTML block.
  md << "\n## Gate details\n";
  for (const auto& g : r.gates) {
    md << "\n<details" << (g.status == Status::Fail ? " open" : "") << "><summary><b>" << xml_escape(g.gate) << "</b> — "
       << to_string(g.status) << ": " << xml_escape(one_line(g.reason)) << "</summary>\n\n" << md_escape_inline(g.reason) << "\n";
    if (g.host.is_object() && g.host.contains("host") && r.environment.is_object() &&
        g.host.value("host", std::string()) != r.environment.value("host", std::string()))
      md << "\nRan on host " << md_escape_cell(g.host.value("host", std::string())) << " (GPU: " << gpu_line(g.host) << ").\n";
    if (!g.checks.empty()) {
      md << "\n| check | status | evidence |\n|---|---|---|\n";
      size_t shown = 0;
      for (const auto& c : g.checks) {
        // Long passing lists (the suite) are summarized; failures are always listed.
        if (c.status == Status::Pass && shown >= 25) continue;
        ++shown;
        md << "| " << md_escape_cell(c.name) << " | " << status_icon(c.status) << " " << to_string(c.status) << " | "
           << md_escape_cell(c.reason.substr(0, 400)) << (c.waiver.empty() ? "" : " — waiver: " + md_escape_cell(c.waiver)) << " |\n";
      }
      if (shown < g.checks.size()) md << "| … | | " << g.checks.size() - shown << " more passing checks in landing.json |\n";
    }
    for (const auto& t : g.tables)
      if (t.in_markdown) md << markdown_table(t);
    for (const auto& c : g.checks)
      if (c.status == Status::Fail && !c.command.empty()) {
        md << "\nReproduce " << c.name << ":\n\n```\n" << c.command << "\n```\n";
        break;
      }
    md << "\n</details>\n";
  }

  md << "\n## Gate profile\n\n";
  md << "Candidate's `" << r.profile_path << "` governs this landing. ";
  if (!r.baseline_profile_note.empty()) md << r.baseline_profile_note << " ";
  if (r.profile_changes.empty()) {
    md << "No difference from the baseline's profile.\n";
  } else {
    int loosened = 0;
    for (const auto& c : r.profile_changes) loosened += c.loosened;
    md << r.profile_changes.size() << " difference(s) from the baseline's profile";
    if (loosened) md << ", **" << loosened << " LOOSENED** (highlighted)";
    md << ":\n\n| key | baseline | candidate | note |\n|---|---|---|---|\n";
    for (const auto& c : r.profile_changes) {
      const std::string key = c.loosened ? "**" + c.key + "**" : c.key;
      md << "| " << md_escape_cell(key) << " | " << md_escape_cell(c.before.empty() ? "—" : c.before) << " | "
         << md_escape_cell(c.after.empty() ? "—" : c.after) << " | "
         << (c.loosened ? "⚠️ **LOOSENED: " + c.note + "**" : c.kind) << " |\n";
    }
  }
  if (r.profile.contains("waivers") && r.profile["waivers"].is_array() && !r.profile["waivers"].empty()) {
    md << "\nWaivers in the candidate's profile:\n\n";
    for (const auto& w : r.profile["waivers"])
      md << "- " << w.value("gate", std::string("?")) << " (" << w.value("match", std::string("*")) << "): " << w.value("reason", std::string())
         << "\n";
  }

  md << "\n## Environment\n\n| | |\n|---|---|\n";
  const auto& e = r.environment;
  md << "| host | " << md_escape_cell(e.value("host", std::string("?"))) << " — " << md_escape_cell(e.value("cpu", std::string("?"))) << ", "
     << e.value("cores", 0) << " cores, " << fixed(e.value("memory_gib", 0.0), 0) << " GiB |\n";
  md << "| OS | " << md_escape_cell(e.value("os", std::string("?"))) << " |\n";
  md << "| GPU | " << md_escape_cell(gpu_line(e)) << " |\n";
  md << "| CUDA toolkit | " << md_escape_cell(e.value("nvcc", std::string("?"))) << " |\n";
  md << "| CMake | " << md_escape_cell(e.value("cmake", std::string("?"))) << " |\n";
  for (const auto* b : {&r.baseline, &r.candidate}) {
    md << "| " << b->value("label", std::string()) << " | " << b->value("sha", std::string()) << " (" << md_escape_cell(b->value("rev", std::string()))
       << ")" << (b->value("worktree", false) ? " + uncommitted change" : "") << "; build "
       << (b->value("ok", false) ? (b->value("cached", false) ? "cached" : "built in " + fixed(b->value("seconds", 0.0), 0) + " s")
                                  : std::string("FAILED"))
       << "; prefill " << md_escape_cell(b->contains("version") && (*b)["version"].is_object()
                                              ? (*b)["version"].value("version", std::string("?"))
                                              : std::string("version unknown"))
       << " |\n";
  }
  md << "| time | " << r.created << " |\n";
  md << "| gate profile | `" << r.profile_path << "` (candidate's) |\n";
  if (r.harness.is_object())
    md << "| harness | " << (r.harness.value("pinned", false) ? "pinned: " : "**NOT PINNED**: ") << md_escape_cell(r.harness.value("how", std::string()))
       << "; landing " << md_escape_cell(r.harness.value("version", std::string())) << ", commit "
       << md_escape_cell(r.harness.value("commit", std::string())) << (r.harness.value("dirty", false) ? " (dirty)" : "") << ", sha256 "
       << md_escape_cell(r.harness.value("sha256", std::string())) << " |\n";
  else
    md << "| harness | not recorded (report written before harness pinning) |\n";
  if (!r.profile_sha256.empty()) md << "| effective profile sha256 | " << md_escape_cell(r.profile_sha256) << " |\n";
  // Per gate: where it ran, on which GPU and driver, at which SM clocks, judged by which harness.
  for (const auto& g : r.gates) {
    if (!g.host.is_object() || !g.host.contains("host")) continue;
    std::string clocks;
    if (g.host.contains("sm_clock_range_mhz") && g.host["sm_clock_range_mhz"].is_array() && g.host["sm_clock_range_mhz"].size() == 2)
      clocks = "; SM clock " + g.host["sm_clock_range_mhz"][0].dump() + "-" + g.host["sm_clock_range_mhz"][1].dump() + " MHz";
    const json harness = g.binding.is_object() ? g.binding.value("harness", json::object()) : json::object();
    md << "| " << g.gate << " ran on | " << md_escape_cell(g.host.value("host", std::string())) << " — GPU " << md_escape_cell(gpu_line(g.host))
       << md_escape_cell(clocks)
       << (harness.empty() ? std::string()
                           : "; harness " + md_escape_cell(harness.value("commit", std::string()).substr(0, 12)) +
                                 (harness.value("pinned", false) ? "" : " NOT PINNED"))
       << " |\n";
  }
  for (const auto& imp : r.imports) {
    md << "| imported | " << md_escape_cell(imp.value("from", std::string())) << " at " << md_escape_cell(imp.value("time", std::string())) << ": "
       << md_escape_cell(imp.value("gates", json::array()).dump());
    if (imp.contains("accepted_mismatch"))
      md << "; **binding mismatch accepted**: \"" << md_escape_cell(imp.value("accepted_mismatch", std::string())) << "\" for "
         << md_escape_cell(imp.value("mismatches", json::array()).dump());
    md << " |\n";
  }
  for (const auto& sup : r.superseded)
    md << "| superseded | " << md_escape_cell(sup.value("result", json::object()).value("gate", std::string())) << " "
       << md_escape_cell(sup.value("result", json::object()).value("status", std::string())) << " at "
       << md_escape_cell(sup.value("when", std::string())) << ": " << md_escape_cell(sup.value("why", std::string())) << " (kept in landing.json) |\n";
  if (opts.step_summary)
    md << "\nFiles (in the report artifact, folder " << r.id << "): `landing.json` (every number and raw sample), `landing.md`, "
          "`landing.html`, `junit.xml`.\n";
  else
    md << "\nFiles: [landing.json](landing.json) (every number and raw sample), [landing.html](landing.html), [junit.xml](junit.xml).\n";
  // Fields not laid out above (reasons, evidence) may carry candidate output: no control bytes
  // reach a reader's terminal or viewer (hostile input, issue 12).
  return escape_control(relative_paths(md.str(), r.repo));
}

}  // namespace pfx::gates

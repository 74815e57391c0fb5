// Markdown rendering of a landing record (see markdown.h).
#include "report/markdown.h"

#include <algorithm>
#include <cmath>
#include <sstream>

#include "util/text_format.h"

namespace pfx::gates {

using nlohmann::json;

namespace {

std::string short_id(const json& build) {
  const std::string sha = build.value("sha", "");
  return build.value("id", sha.substr(0, 12));
}

std::string md_escape_cell(std::string s) {
  std::string out;
  for (char c : s) {
    if (c == '|') out += "\\|";
    else if (c == '\n') out += "<br>";
    else out += c;
  }
  return out;
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

std::string render_markdown(const LandingRecord& r) {
  std::ostringstream md;
  const std::string cand = short_id(r.candidate), base = short_id(r.baseline);
  md << "# " << r.seq << " · landing " << cand << " vs " << base << " — " << to_string(r.verdict) << "\n\n";
  md << (r.prev.empty() ? std::string("(first)") : "← [" + std::to_string(r.seq - 1) + " · " + r.prev + "](../" + r.prev + "/landing.md)")
     << " · [Index](../index.md) · "
     << (r.next.empty() ? std::string("(latest)") : "[" + std::to_string(r.seq + 1) + " · " + r.next + "](../" + r.next + "/landing.md) →")
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
  md << ". Candidate: " << r.candidate.value("sha", std::string()).substr(0, 12) << " (" << r.candidate.value("rev", std::string())
     << (r.candidate.value("worktree", false) ? ", uncommitted working tree" : "") << "). Baseline: "
     << r.baseline.value("sha", std::string()).substr(0, 12) << " (" << r.baseline.value("rev", std::string()) << "). Date: " << r.created
     << ".\n\n";

  md << "## 4. Verification\n\n";
  for (const auto& g : r.gates) {
    md << "• " << status_icon(g.status) << " **" << g.gate << " " << to_string(g.status) << "**"
       << (g.required ? "" : " (not required)") << ": " << (g.evidence.empty() ? g.reason : g.evidence) << "\n";
    if (!g.evidence.empty() && g.status != Status::Pass) md << "  — " << g.reason << "\n";
    if (g.gate == "build" && g.details.contains("errors"))
      for (const auto& [side, text] : g.details["errors"].items())
        md << "\n  " << side << " build error:\n\n```\n" << text.get<std::string>() << "```\n\n";
    for (const auto& c : g.checks)
      if (c.status == Status::Waived) md << "  — WAIVED " << c.name << ": " << c.reason << " — waiver: \"" << c.waiver << "\"\n";
    if (!g.command.empty()) md << "  — reproduce: `" << g.command << "`\n";
  }
  for (const auto& name : r.enabled_gates)
    if (!r.gate(name)) md << "• ⏳ **" << name << " NOT RUN**: no result for this gate yet (run it, or `landing import` it)\n";
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

  md << "\n## Gate details\n";
  for (const auto& g : r.gates) {
    md << "\n### " << g.gate << " — " << to_string(g.status) << "\n\n" << g.reason << "\n";
    if (g.host.is_object() && g.host.contains("host") && r.environment.is_object() &&
        g.host.value("host", std::string()) != r.environment.value("host", std::string()))
      md << "\nRan on host " << g.host.value("host", std::string()) << " (GPU: " << gpu_line(g.host) << ").\n";
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
  md << "| host | " << e.value("host", std::string("?")) << " — " << md_escape_cell(e.value("cpu", std::string("?"))) << ", "
     << e.value("cores", 0) << " cores, " << fixed(e.value("memory_gib", 0.0), 0) << " GiB |\n";
  md << "| OS | " << e.value("os", std::string("?")) << " |\n";
  md << "| GPU | " << md_escape_cell(gpu_line(e)) << " |\n";
  md << "| CUDA toolkit | " << md_escape_cell(e.value("nvcc", std::string("?"))) << " |\n";
  md << "| CMake | " << md_escape_cell(e.value("cmake", std::string("?"))) << " |\n";
  for (const auto* b : {&r.baseline, &r.candidate}) {
    md << "| " << b->value("label", std::string()) << " | " << b->value("sha", std::string()) << " (" << b->value("rev", std::string())
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
  for (const auto& g : r.gates)
    if (g.host.is_object() && g.host.contains("host") && g.host.value("host", std::string()) != e.value("host", std::string()))
      md << "| " << g.gate << " ran on | " << g.host.value("host", std::string()) << " — GPU " << md_escape_cell(gpu_line(g.host)) << " |\n";
  for (const auto& imp : r.imports)
    md << "| imported | " << md_escape_cell(imp.value("from", std::string())) << " at " << imp.value("time", std::string()) << ": "
       << md_escape_cell(imp.value("gates", json::array()).dump()) << " |\n";
  md << "\nFiles: `landing.json` (every number and raw sample), `landing.html`, `junit.xml`.\n";
  return md.str();
}

}  // namespace pfx::gates

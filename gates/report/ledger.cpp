// Reports ledger (see ledger.h).
#include "report/ledger.h"

#include <fstream>
#include <iostream>
#include <sstream>
#include <system_error>

#include "core/ids.h"
#include "report/history.h"
#include "report/html.h"
#include "report/index_html.h"
#include "report/junit_out.h"
#include "report/markdown.h"
#include "run/git.h"
#include "util/error.h"
#include "util/escape.h"
#include "util/text_format.h"

namespace pfx::gates {

namespace fs = std::filesystem;
using nlohmann::json;

namespace {
const fs::path& created(const fs::path& dir) {
  fs::create_directories(dir);
  return dir;
}
}  // namespace

Ledger::Ledger(fs::path reports_dir) : dir_(std::move(reports_dir)), lock_(created(dir_) / ".landing.lock") {}

json Ledger::index() const {
  const fs::path p = dir_ / "index.json";
  if (!fs::exists(p)) return {{"schema", "landing-index/1"}, {"reports", json::array()}};
  std::ifstream in(p);
  try {
    json j = json::parse(in);
    if (j.value("schema", "") != "landing-index/1" || !j.contains("reports") || !j["reports"].is_array())
      fail(p.string(), ": expected schema landing-index/1 with a 'reports' list");
    // Entry ids become paths (append links the previous report): checked before use.
    for (size_t i = 0; i < j["reports"].size(); ++i)
      require_report_id(j["reports"][i].value("id", ""), p.string() + ": reports[" + std::to_string(i) + "]", "field 'id'");
    return j;
  } catch (const json::exception& e) {
    fail(p.string(), ": not valid JSON: ", e.what());
  }
}

std::string Ledger::reserve(const std::string& candidate_id) {
  require_candidate_id(candidate_id, dir_.string(), "candidate id");
  for (int n = 1;; ++n) {
    const std::string id = n == 1 ? candidate_id : candidate_id + "-" + std::to_string(n);
    if (fs::create_directory(dir_ / id)) return id;  // false when it exists: never overwrite
  }
}

void Ledger::write_index(const json& idx) const {
  write_text_atomic(dir_ / "index.json", idx.dump(1) + "\n");
  write_text_atomic(dir_ / "index.md", render_index_md(idx));
  write_history_page();
  point_latest();
}

void Ledger::write_history_page() const {
  // The trend page is a view of the reports already written; a report it cannot read (a foreign
  // or damaged landing.json) must not fail the landing that is being recorded, so it says why on
  // stderr and leaves the previous index.html in place.
  try {
    std::optional<fs::path> repo;
    if (git_result(dir_, {"rev-parse", "--show-toplevel"}).ok()) repo = repo_root(dir_);
    write_text_atomic(dir_ / "index.html", render_index_html(load_history(dir_, repo)));
  } catch (const std::exception& e) {
    std::cerr << "landing: warning: " << (dir_ / "index.html").string() << " not updated: " << e.what() << "\n";
  }
}

void Ledger::point_latest() const {
  // reports/latest -> <newest id>: a relative symlink, swapped in by rename so a reader never
  // sees it missing. Only a symlink is ever replaced: a real folder named latest is left alone.
  const auto newest = latest();
  if (!newest) return;
  const fs::path link = dir_ / "latest", tmp = dir_ / ".latest.tmp";
  std::error_code ec;
  if (fs::exists(fs::symlink_status(link)) && !fs::is_symlink(fs::symlink_status(link))) {
    std::cerr << "landing: warning: " << link.string() << " is not a symlink; not pointing it at " << *newest << "\n";
    return;
  }
  fs::remove(tmp, ec);
  fs::create_directory_symlink(*newest, tmp, ec);
  if (!ec) fs::rename(tmp, link, ec);
  if (ec) std::cerr << "landing: warning: " << link.string() << " -> " << *newest << ": " << ec.message() << "\n";
}

void Ledger::append(LandingRecord& rec) {
  require_report_id(rec.id, dir_.string());
  json idx = index();
  int max_seq = 0;
  std::string last;
  for (const auto& e : idx["reports"])
    if (e.value("seq", 0) > max_seq) {
      max_seq = e.value("seq", 0);
      last = e.value("id", "");
    }
  rec.seq = max_seq + 1;
  rec.prev = last;
  // A written report is never touched again: the previous one gets no "next" link (its files stay
  // byte for byte what its own run wrote); newer reports are found through index.md and latest/.
  rec.next.clear();
  write_report_files(dir_ / rec.id, rec);
  idx["reports"].push_back(index_entry(rec));
  write_index(idx);
}

void Ledger::update(const LandingRecord& rec) {
  require_report_id(rec.id, dir_.string());
  json idx = index();
  bool found = false;
  for (auto& e : idx["reports"])
    if (e.value("id", "") == rec.id) {
      e = index_entry(rec);
      found = true;
    }
  if (!found) idx["reports"].push_back(index_entry(rec));
  write_report_files(dir_ / rec.id, rec);
  write_index(idx);
}

std::optional<std::string> Ledger::find(const std::string& key) const {
  // A report id, a candidate id or a SHA prefix: all of the report-id grammar, checked before
  // `key` becomes part of a path.
  require_report_id(key, dir_.string(), "report or candidate id");
  if (fs::exists(dir_ / key / "landing.json")) return key;
  std::optional<std::string> best;
  int best_seq = -1;
  const json idx = index();  // kept alive: range-for would not extend a temporary's member
  for (const auto& e : idx["reports"])
    if ((e.value("candidate_id", "") == key || e.value("candidate_sha", "").rfind(key, 0) == 0) && e.value("seq", 0) > best_seq) {
      best_seq = e.value("seq", 0);
      best = e.value("id", "");
    }
  return best;
}

std::optional<std::string> Ledger::latest() const {
  std::optional<std::string> best;
  int best_seq = -1;
  const json idx = index();
  for (const auto& e : idx["reports"])
    if (e.value("seq", 0) > best_seq) {
      best_seq = e.value("seq", 0);
      best = e.value("id", "");
    }
  return best;
}

void write_report_files(const fs::path& dir, const LandingRecord& rec) {
  write_text_atomic(dir / "landing.json", to_json(rec).dump(1) + "\n");
  // gates/*.json say what the report says (an import rewrites them too).
  for (const auto& g : rec.gates) write_text_atomic(dir / "gates" / (g.gate + ".json"), to_json(g).dump(1) + "\n");
  write_text_atomic(dir / "landing.md", render_markdown(rec));
  write_text_atomic(dir / "summary.md", render_markdown(rec, MarkdownOptions{true}));
  write_text_atomic(dir / "landing.html", render_html(rec));
  write_text_atomic(dir / "junit.xml", render_junit(rec));
}

json index_entry(const LandingRecord& rec) {
  return {{"id", rec.id}, {"seq", rec.seq}, {"candidate_id", rec.candidate_id},
          {"candidate_sha", rec.candidate.value("sha", std::string())}, {"candidate_rev", rec.candidate.value("rev", std::string())},
          {"baseline_sha", rec.baseline.value("sha", std::string())}, {"verdict", to_string(rec.verdict)},
          {"headline", rec.headline()}, {"failing", rec.failing_lines()}, {"created", rec.created}};
}

std::string render_index_md(const json& idx) {
  std::vector<json> entries(idx["reports"].begin(), idx["reports"].end());
  std::sort(entries.begin(), entries.end(), [](const json& a, const json& b) { return a.value("seq", 0) > b.value("seq", 0); });
  std::ostringstream o;
  o << "# Landing ledger\n\nOne entry per `landing run`, newest first. Each report folder holds landing.md, landing.html, "
       "landing.json and junit.xml. Trends per metric across the ledger: [index.html](index.html); the newest report: "
       "[latest/](latest/landing.md).\n\n";
  for (const auto& e : entries) {
    const std::string verdict = e.value("verdict", "");
    // Every field is from a record the candidate's run produced: escaped (util/escape.h).
    const std::string id = markdown_cell(e.value("id", ""));
    o << "- **" << e.value("seq", 0) << "** · [" << id << "](" << id << "/landing.md) · candidate "
      << markdown_cell(e.value("candidate_sha", "").substr(0, 12)) << " (" << markdown_cell(e.value("candidate_rev", ""))
      << ") vs baseline " << markdown_cell(e.value("baseline_sha", "").substr(0, 12)) << " · " << (verdict == "PASS" ? "✅" : verdict == "FAIL" ? "❌" : "⏳") << " **"
      << markdown_cell(verdict) << "**";
    const auto& h = e["headline"];
    if (h.is_object())
      o << " · " << markdown_cell(h.value("metric", std::string())) << " " << fixed(h.value("before", 0.0), 1) << " → " << fixed(h.value("after", 0.0), 1)
        << " (" << signed_percent(h.value("delta_pct", 0.0)) << ")";
    o << " · " << markdown_cell(e.value("created", "")) << "\n";
    for (const auto& f : e.value("failing", json::array())) o << "  - ❌ " << markdown_cell(f.get<std::string>()) << "\n";
  }
  return o.str();
}

}  // namespace pfx::gates

// Reports ledger (see ledger.h).
#include "report/ledger.h"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <fstream>
#include <sstream>

#include "report/html.h"
#include "report/junit_out.h"
#include "report/markdown.h"
#include "util/error.h"
#include "util/text_format.h"

namespace pfx::gates {

namespace fs = std::filesystem;
using nlohmann::json;

Ledger::Ledger(fs::path reports_dir) : dir_(std::move(reports_dir)) {
  fs::create_directories(dir_);
  const fs::path lock = dir_ / ".landing.lock";
  lock_fd_ = ::open(lock.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
  if (lock_fd_ < 0) fail(lock.string(), ": cannot open the reports lock file");
  if (::flock(lock_fd_, LOCK_EX) != 0) fail(lock.string(), ": cannot lock");
}

Ledger::~Ledger() {
  if (lock_fd_ >= 0) ::close(lock_fd_);  // closing releases the flock
}

json Ledger::index() const {
  const fs::path p = dir_ / "index.json";
  if (!fs::exists(p)) return {{"schema", "landing-index/1"}, {"reports", json::array()}};
  std::ifstream in(p);
  try {
    json j = json::parse(in);
    if (j.value("schema", "") != "landing-index/1" || !j.contains("reports") || !j["reports"].is_array())
      fail(p.string(), ": expected schema landing-index/1 with a 'reports' list");
    return j;
  } catch (const json::exception& e) {
    fail(p.string(), ": not valid JSON: ", e.what());
  }
}

std::string Ledger::reserve(const std::string& candidate_id) {
  for (int n = 1;; ++n) {
    const std::string id = n == 1 ? candidate_id : candidate_id + "-" + std::to_string(n);
    if (fs::create_directory(dir_ / id)) return id;  // false when it exists: never overwrite
  }
}

void Ledger::write_index(const json& idx) const {
  write_text_atomic(dir_ / "index.json", idx.dump(1) + "\n");
  write_text_atomic(dir_ / "index.md", render_index_md(idx));
}

void Ledger::append(LandingRecord& rec) {
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
  rec.next.clear();
  write_report_files(dir_ / rec.id, rec);
  idx["reports"].push_back(index_entry(rec));
  write_index(idx);
  if (!last.empty() && fs::exists(dir_ / last / "landing.json")) {
    LandingRecord prev = read_landing_record(dir_ / last / "landing.json");
    prev.next = rec.id;
    write_report_files(dir_ / last, prev);
  }
}

void Ledger::update(const LandingRecord& rec) {
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
  write_text_atomic(dir / "landing.md", render_markdown(rec));
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
       "landing.json and junit.xml.\n\n";
  for (const auto& e : entries) {
    const std::string verdict = e.value("verdict", "");
    o << "- **" << e.value("seq", 0) << "** · [" << e.value("id", "") << "](" << e.value("id", "") << "/landing.md) · candidate "
      << e.value("candidate_sha", "").substr(0, 12) << " (" << e.value("candidate_rev", "") << ") vs baseline "
      << e.value("baseline_sha", "").substr(0, 12) << " · " << (verdict == "PASS" ? "✅" : verdict == "FAIL" ? "❌" : "⏳") << " **"
      << verdict << "**";
    const auto& h = e["headline"];
    if (h.is_object())
      o << " · " << h.value("metric", std::string()) << " " << fixed(h.value("before", 0.0), 1) << " → " << fixed(h.value("after", 0.0), 1)
        << " (" << signed_percent(h.value("delta_pct", 0.0)) << ")";
    o << " · " << e.value("created", "") << "\n";
    for (const auto& f : e.value("failing", json::array())) {
      std::string line = f.get<std::string>();
      for (auto& ch : line)
        if (ch == '\n') ch = ' ';
      o << "  - ❌ " << line << "\n";
    }
  }
  return o.str();
}

}  // namespace pfx::gates

// The reports folder as a ledger: reports/<id>/ per landing run, never overwritten (a rerun of the
// same candidate gets "-2", "-3"...), reports/index.json (machine-readable) and reports/index.md
// (newest first: sequence, commit, verdict, headline tok/s, one line per failing gate),
// reports/index.html (the trends over the ledger), reports/latest (a symlink to the newest report),
// sequence numbers and a link to the previous report (a written report is never rewritten, so it
// has no link to the next; the index has the order). A lock file serializes concurrent landings on one folder.
#pragma once
#include <filesystem>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>

#include "report/landing_record.h"
#include "util/file_lock.h"

namespace pfx::gates {

class Ledger {
 public:
  explicit Ledger(std::filesystem::path reports_dir);  // takes the lock (blocks while another holds it)

  const std::filesystem::path& dir() const { return dir_; }
  // Reserves reports/<candidate_id>[-N]/ (created empty) and returns its name.
  std::string reserve(const std::string& candidate_id);
  // Gives `rec` its sequence number and previous report, writes its files, adds it to the index,
  // and links the previous report forward (its navigation line is re-rendered).
  void append(LandingRecord& rec);
  // Rewrites an existing report (after an import or `landing report`) and its index entry.
  void update(const LandingRecord& rec);
  // A report folder by exact id, or the newest report of a candidate id; nullopt if none.
  std::optional<std::string> find(const std::string& id_or_candidate) const;
  std::optional<std::string> latest() const;
  nlohmann::json index() const;

 private:
  // index.json, index.md, index.html (the trend page, report/index_html.h) and latest/.
  void write_index(const nlohmann::json& idx) const;
  void write_history_page() const;
  void point_latest() const;
  std::filesystem::path dir_;
  FileLock lock_;  // <reports>/.landing.lock, held for the ledger's lifetime
};

// Writes landing.json, landing.md, summary.md (the CI step summary form), landing.html,
// junit.xml and gates/<gate>.json of a record into `dir`.
void write_report_files(const std::filesystem::path& dir, const LandingRecord& rec);
nlohmann::json index_entry(const LandingRecord& rec);
std::string render_index_md(const nlohmann::json& index);

}  // namespace pfx::gates

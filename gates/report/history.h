// The ledger over time: every number the landings measured, per metric and per commit, in commit
// order, with change points (stats/change_points.h: a windowed Mann-Whitney U test). One landing
// measures two commits — its baseline and its candidate — so a commit that was one landing's
// candidate and the next one's baseline has two measurements, and machine drift between the two
// windows shows (landing 1 measured 1496b59 at 27,407 tok/s, landing 2 measured it at 26,886).
// `landing history`, reports/index.html and the Bencher export (report/bencher.h) read it.
#pragma once
#include <filesystem>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "stats/change_points.h"

namespace pfx::gates {

struct HistoryReport {
  std::string id;         // report folder
  int seq = 0;
  std::string created;
  std::string candidate, baseline;  // full SHAs
  std::string verdict;
};

struct HistoryMeasurement {
  size_t report = 0;      // index into History::reports
  std::string side;       // "candidate" | "baseline"
  double value = 0;
  std::vector<double> samples;  // the repetitions behind value, where the report kept them
};

struct HistoryPoint {
  std::string commit;     // full SHA
  std::vector<HistoryMeasurement> measurements;
  std::vector<double> samples() const;  // every repetition, else every value
};

// One commit measured by two landings (one's candidate, a later one's baseline): how far the
// second measurement is from the first. Machine drift of this size is what a landing's claimed
// gain has to be read against.
struct HistoryDrift {
  size_t point = 0;             // index into HistorySeries::points
  size_t first = 0, second = 0; // indices into that point's measurements, in ledger order
  double pct = 0;               // 100 · (second − first) / first
  std::optional<double> p;      // two-sided U-test p of their repetitions (both kept samples)
};

struct HistorySeries {
  std::string key;        // "ab: pp512 tok/s", "timing: role attn_v (ns)" — what --metric matches
  std::string gate, metric, unit;
  bool headline = false;  // charted first: the report's headline row, and every judged table row
  bool primary = false;   // the report's own headline (ab's pp512 tok/s): the first chart
  std::vector<HistoryPoint> points;  // commit order, commits this metric was measured at
  std::vector<ChangePoint> changes;  // ChangePoint::index into points
  std::vector<HistoryDrift> drifts;  // commits measured more than once
};

struct History {
  std::vector<HistoryReport> reports;   // ledger order (sequence)
  std::vector<std::string> commits;     // every measured commit, in commit order
  bool git_order = false;               // commit order from git (else: first seen in the ledger)
  std::vector<HistorySeries> series;
};

// Reads REPORTS/index.json and every report's landing.json. `repo`: a git repository to order the
// commits by (topological order, oldest first); without one, or for commits it does not know, the
// order they first appear in the ledger (each report's baseline before its candidate).
History load_history(const std::filesystem::path& reports, const std::optional<std::filesystem::path>& repo);

// Series whose key matches the glob (all for "").
std::vector<const HistorySeries*> select_series(const History& h, const std::string& glob);

nlohmann::json history_to_json(const History& h, const std::vector<const HistorySeries*>& series);
std::string render_history_text(const History& h, const std::vector<const HistorySeries*>& series);

}  // namespace pfx::gates

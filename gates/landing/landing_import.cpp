// Import of gate results into an existing report (see landing_import.h).
#include "landing/landing_import.h"

#include <fstream>
#include <iostream>

#include "core/progress.h"
#include "landing/gate_lines.h"
#include "report/ledger.h"
#include "util/error.h"

namespace pfx::gates {

namespace fs = std::filesystem;
using nlohmann::json;

namespace {
std::vector<GateResult> collect(const fs::path& dir) {
  std::vector<GateResult> out;
  if (fs::exists(dir / "landing.json")) {
    const auto rec = read_landing_record(dir / "landing.json");
    for (const auto& g : rec.gates)
      if (g.gate != "build") out.push_back(g);
    return out;
  }
  fs::path folder = fs::exists(dir / "gates") ? dir / "gates" : dir;
  if (!fs::is_directory(folder)) fail(dir.string(), ": not a folder of gate results or a report folder");
  for (const auto& e : fs::directory_iterator(folder)) {
    if (e.path().extension() != ".json") continue;
    std::ifstream in(e.path());
    json j;
    try {
      j = json::parse(in);
    } catch (const json::exception& ex) {
      fail(e.path().string(), ": not valid JSON: ", ex.what());
    }
    out.push_back(gate_result_from_json(j, e.path().string()));
  }
  if (out.empty()) fail(dir.string(), ": no gate result files (*.json with schema ", kGateResultSchema, ") found");
  return out;
}
}  // namespace

int landing_import(const fs::path& dir, const fs::path& reports, const std::string& into, bool quiet) {
  Progress progress(quiet);
  const auto results = collect(dir);
  const std::string cand = results.front().candidate_id;
  for (const auto& r : results)
    if (r.candidate_id != cand)
      fail(dir.string(), ": results are for different candidates (", cand, " and ", r.candidate_id, ")");
  Ledger ledger(reports);
  const auto id = into.empty() ? ledger.find(cand) : ledger.find(into);
  if (!id) fail(reports.string(), ": no report for candidate ", cand, " — run `landing run` for it first (or name one with --into)");
  LandingRecord rec = read_landing_record(reports / *id / "landing.json");
  if (rec.candidate_id != cand)
    fail(dir.string(), ": results are for candidate ", cand, " but report ", *id, " is for ", rec.candidate_id);
  json taken = json::array();
  for (const auto& r : results) {
    const GateResult* local = rec.gate(r.gate);
    if (local && r.status == Status::Skipped && local->status != Status::Skipped) {
      progress.say("import " + r.gate + ": kept the local " + std::string(to_string(local->status)) + " (imported one is SKIPPED)");
      continue;
    }
    if (!r.baseline_id.empty() && rec.baseline.value("id", std::string()) != r.baseline_id)
      progress.say("import " + r.gate + ": note — produced against baseline " + r.baseline_id + ", report's baseline is " +
                   rec.baseline.value("id", std::string()));
    rec.put(r);
    taken.push_back(r.gate);
    progress.say("import " + r.gate + ": " + std::string(to_string(r.status)) + " from host " + r.host.value("host", std::string("?")));
  }
  rec.imports.push_back({{"from", fs::absolute(dir).string()}, {"time", utc_now_iso8601()}, {"gates", taken}});
  rec.recompute_verdict();
  ledger.update(rec);
  std::cout << "report: " << (reports / rec.id).string() << "\nverdict: " << to_string(rec.verdict) << "\n";
  std::cout << gate_lines(rec.gates);
  return exit_code_for(rec.verdict);
}

}  // namespace pfx::gates

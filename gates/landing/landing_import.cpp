// Import of gate results into an existing report (see landing_import.h; the rules are
// landing/import_rules.h).
#include "landing/landing_import.h"

#include <fstream>
#include <iostream>

#include "run/gate_context.h"
#include "core/ids.h"
#include "core/progress.h"
#include "landing/gate_lines.h"
#include "landing/import_rules.h"
#include "report/ledger.h"
#include "suite/suite_judge.h"
#include "util/error.h"

namespace pfx::gates {

namespace fs = std::filesystem;
using nlohmann::json;

namespace {

std::vector<GateResult> collect(const fs::path& dir) {
  std::vector<GateResult> out;
  if (fs::exists(dir / "landing.json")) {
    const auto rec = read_landing_record(dir / "landing.json");
    for (const auto& g : rec.gates) out.push_back(g);
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

json superseded_entry(const GateResult& r, const std::string& why) {
  return {{"when", utc_now_iso8601()}, {"why", why}, {"result", to_json(r)}};
}

}  // namespace

int landing_import(const fs::path& dir, const fs::path& reports, const std::string& into, const std::string& accept_mismatch,
                   bool quiet) {
  Progress progress(quiet);
  const auto results = collect(dir);
  const std::string cand = results.front().candidate_id;
  if (cand.empty()) fail(dir.string(), ": the results name no candidate_id");
  for (const auto& r : results)
    if (r.candidate_id != cand)
      fail(dir.string(), ": results are for different candidates (", cand, " and ", r.candidate_id, ")");
  if (!into.empty()) require_report_id(into, "--into");
  Ledger ledger(reports);
  const auto id = into.empty() ? ledger.find(cand) : ledger.find(into);
  if (!id) fail(reports.string(), ": no report for candidate ", cand, " — run `landing run` for it first (or name one with --into)");
  LandingRecord rec = read_landing_record(reports / *id / "landing.json");
  const GateProfile profile = GateProfile::from_json(rec.profile, rec.profile_path);

  // Refuse first, change nothing: a gate that cannot be imported, or a result bound to other
  // binaries, another profile, other commits or an unpinned harness.
  std::vector<std::string> refusals, mismatches;
  std::vector<GateResult> importable;
  for (const auto& r : results) {
    if (r.gate == "ptxas") {
      progress.say("import ptxas: left out (" + not_importable("ptxas", profile) + ")");
      continue;
    }
    if (const std::string why = not_importable(r.gate, profile); !why.empty()) refusals.push_back(r.gate + ": " + why);
    for (const auto& m : binding_mismatches(r, rec)) mismatches.push_back(m);
    importable.push_back(r);
  }
  if (!refusals.empty()) {
    std::string text;
    for (const auto& x : refusals) text += "\n  " + x;
    fail(dir.string(), ": refused, these results cannot be imported into report ", *id, ":", text);
  }
  if (!mismatches.empty() && accept_mismatch.empty()) {
    std::string text;
    for (const auto& x : mismatches) text += "\n  " + x;
    fail(dir.string(), ": refused, the results are not bound to report ", *id, ":", text,
         "\n(rerun the gates on the report's builds and profile, or pass --accept-mismatch REASON to import them anyway; the "
         "reason is shown in the report)");
  }

  json taken = json::array();
  for (const auto& imported : importable) {
    GateResult r = rejudge_imported(imported, profile, rec);
    const std::string from = "import from " + fs::absolute(dir).string();
    if (r.status != imported.status)
      progress.say("import " + r.gate + ": claimed " + std::string(to_string(imported.status)) + ", re-judged " +
                   std::string(to_string(r.status)) + " — " + r.reason);
    const GateResult* local = rec.gate(r.gate);
    if (local && local->status == Status::Fail) {
      // A failure is not overwritten by a later success: a rerun is a new landing.
      rec.superseded.push_back(superseded_entry(r, "not taken: the report's " + r.gate + " FAIL stands (" + from +
                                                       "; a rerun is a new `landing run`)"));
      progress.say("import " + r.gate + ": kept the report's FAIL; the imported " + std::string(to_string(r.status)) +
                   " is recorded as not taken");
      continue;
    }
    if (local && r.gate == "suite" && local->details.contains("tests") && r.details.contains("tests")) {
      rec.superseded.push_back(superseded_entry(*local, "joined with the suite run " + from));
      GateResult joined = join_suite(*local, r);
      finish(joined, profile, joined.duration_s + r.duration_s);
      rec.put(joined);
      taken.push_back(r.gate);
      progress.say("import suite: joined with the local run: " + std::string(to_string(joined.status)) + " — " + joined.reason);
      continue;
    }
    if (local && r.status == Status::Skipped && local->status != Status::Skipped) {
      rec.superseded.push_back(superseded_entry(r, "not taken: SKIPPED, the report's " + std::string(to_string(local->status)) +
                                                       " says more (" + from + ")"));
      progress.say("import " + r.gate + ": kept the local " + std::string(to_string(local->status)) + " (imported one is SKIPPED)");
      continue;
    }
    if (local) rec.superseded.push_back(superseded_entry(*local, "replaced by the " + std::string(to_string(r.status)) + " " + from));
    rec.put(r);
    taken.push_back(r.gate);
    progress.say("import " + r.gate + ": " + std::string(to_string(r.status)) + " from host " + r.host.value("host", std::string("?")));
  }
  json entry = {{"from", fs::absolute(dir).string()}, {"time", utc_now_iso8601()}, {"gates", taken}};
  if (!mismatches.empty()) {
    entry["accepted_mismatch"] = accept_mismatch;
    entry["mismatches"] = mismatches;
  }
  rec.imports.push_back(entry);
  rec.recompute_verdict();
  ledger.update(rec);
  std::cout << "report: " << (reports / rec.id).string() << "\nverdict: " << to_string(rec.verdict) << "\n";
  std::cout << gate_lines(rec.gates);
  return exit_code_for(rec.verdict);
}

}  // namespace pfx::gates

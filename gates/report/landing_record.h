// The landing record: everything one landing run knows (landing.json, schema "landing/1"):
// the two builds, environment, gate profile and its diff against the baseline's, every gate
// result, the verdict, the headline numbers, and its place in the ledger (sequence number, previous
// and next report). Markdown, HTML, JUnit and the checklist are all rendered from it, so
// `landing report ID` can re-render any report from disk.
#pragma once
#include <filesystem>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "core/gate_profile.h"
#include "core/profile_diff.h"
#include "core/gate_result.h"
#include "core/status.h"

namespace pfx::gates {

inline constexpr const char* kLandingSchema = "landing/1";

struct LandingRecord {
  std::string id;             // report folder name: candidate id, plus "-2", "-3" on reruns
  std::string candidate_id;
  int seq = 0;
  std::string prev, next;     // neighbouring report ids in the ledger ("" at the ends)
  std::string created;        // ISO-8601 UTC
  std::string repo;
  nlohmann::json baseline = nlohmann::json::object();   // Build as JSON (sha, rev, id, ok, error, version...)
  nlohmann::json candidate = nlohmann::json::object();
  nlohmann::json environment = nlohmann::json::object();
  std::string profile_path;
  nlohmann::json profile = nlohmann::json::object();           // the candidate's gate profile
  nlohmann::json baseline_profile;                               // null when the baseline has none
  std::string baseline_profile_note;
  std::vector<ProfileChange> profile_changes;
  std::vector<GateResult> gates;
  std::vector<std::string> enabled_gates;                        // what the profile asked for, in order
  Verdict verdict = Verdict::Incomplete;
  std::string verdict_reason;
  nlohmann::json imports = nlohmann::json::array();              // where imported results came from
  // The effective candidate profile's sha256 (core/profile_schema.h): what results must match.
  std::string profile_sha256;
  // The landing that judged: {exe, version, commit, dirty, sha256, pinned, how} (landing/harness.h);
  // null in reports written before harness pinning.
  nlohmann::json harness;
  // Results an import replaced or was refused to replace, never dropped: [{result, when, why}].
  nlohmann::json superseded = nlohmann::json::array();

  const GateResult* gate(const std::string& name) const;
  // Replaces (or adds) a gate result, keeping report order.
  void put(const GateResult& r);
  // Verdict from the gate results and which gates the candidate's profile requires; a required,
  // enabled gate without a result counts as "not run" (INCOMPLETE). A failed build is a FAIL. A
  // report judged by a harness that is not pinned (landing/harness.h) is never PASS.
  void recompute_verdict();
  // Every gate's rows for the report's results table: by the gate's results_rank
  // (core/gate_catalog.h), each gate's rows in its own order.
  std::vector<const Row*> result_rows() const;
  // The first flagged headline row in results order, or nullptr.
  const Row* headline_row() const;
  // headline_row() as {"metric", "before", "after", "delta_pct"} (landing.json, index.json), or null.
  nlohmann::json headline() const;
  // One line per failing gate, for the index.
  std::vector<std::string> failing_lines() const;
};

nlohmann::json to_json(const LandingRecord& r);
LandingRecord landing_record_from_json(const nlohmann::json& j, const std::string& where);
LandingRecord read_landing_record(const std::filesystem::path& landing_json);
// Creates the folder, then writes crash-safe (util/atomic_file.h: a unique temporary file beside
// `path`, every write and the close checked, fsync, rename, fsync of the folder): readers never
// see half a file, and on a full disk the old file stays and pfx::Error says what failed.
void write_text_atomic(const std::filesystem::path& path, const std::string& text);

}  // namespace pfx::gates

// One gate's result: status, reason, one-line evidence, the command that reproduces it, the
// individual checks it made, its typed figures (`rows`, `tables`: core/gate_output.h) and every
// raw number it measured (`details`). Stored per (candidate, gate) as JSON (schema
// "landing-gate-result/2", docs/schemas/gate-result.md) so results from several machines join in
// one report.
#pragma once
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "core/gate_output.h"
#include "core/status.h"

namespace pfx::gates {

inline constexpr const char* kGateResultSchema = "landing-gate-result/2";
// Version 1 had no rows or tables; reading one asks the gate's registered legacy reader (below) to
// derive them from its details, so an older ledger entry or an imported result renders as it did.
inline constexpr const char* kGateResultSchemaV1 = "landing-gate-result/1";

// One comparison inside a gate (one case, one kernel, one path...).
struct Check {
  std::string name;
  Status status = Status::Pass;
  std::string reason;
  std::string command;       // the exact process that produced the evidence, where there is one
  bool waivable = true;      // crashes, hangs, NaN and "checked nothing" cannot be waived
  std::string waiver;        // the waiver's reason when status became WAIVED
  nlohmann::json metrics = nlohmann::json::object();
};

struct GateResult {
  std::string gate;
  Status status = Status::Fail;
  std::string reason;        // why this status, one sentence
  std::string evidence;      // the §4 line: numbers a reviewer reads
  std::string command;       // reproduces the whole gate
  bool required = true;
  bool needs_gpu = false;
  std::string candidate_id, baseline_id;
  std::string started;       // ISO-8601 UTC
  double duration_s = 0;
  nlohmann::json host = nlohmann::json::object();   // environment of the machine that ran it
  // What it judged and who judged it (`landing import` compares these with the report's):
  // {profile_sha256, baseline: {id, prefill_sha256}, candidate: {…}, harness: {version, commit,
  // sha256, pinned, how}}. Empty in results written before binding existed.
  nlohmann::json binding = nlohmann::json::object();
  nlohmann::json details = nlohmann::json::object();
  std::vector<Check> checks;
  std::vector<Row> rows;      // before → after figures; the one flagged `headline` heads the report
  std::vector<Table> tables;  // the gate's full tables (per kernel, per role, per case, samples)

  // The flagged headline row, or nullptr.
  const Row* headline() const;
};

// A FAIL no waiver excuses: a crash, a hang, NaN, unreadable output, nothing compared.
Check hard_failure(std::string name, std::string reason, std::string command = {});
// Turns `c` into such a failure, keeping its name, command and metrics.
void fail_hard(Check& c, std::string reason);

nlohmann::json to_json(const Check& c);
Check check_from_json(const nlohmann::json& j, const std::string& where);
nlohmann::json to_json(const GateResult& r);
// Validates schema and fields; errors name `where` (a file path) and the field.
GateResult gate_result_from_json(const nlohmann::json& j, const std::string& where);

// A gate's reader of its own version-1 `details` into rows and tables (registered by the gate
// module, see gates/landing/gate_registry.h); gates without one read back without figures.
using LegacyOutputReader = void (*)(GateResult&);
void register_legacy_output_reader(const std::string& gate, LegacyOutputReader reader);

// Copies each named check's status into the rows and table rows that name it (`check`), so a
// figure shows the verdict its check ended with, waivers included.
void sync_verdicts(GateResult& r);

// Derives a gate status from its checks: any FAIL → FAIL; else INCONCLUSIVE; else SKIPPED;
// no checks at all → FAIL ("checked nothing"); else WAIVED if any waived; else PASS. Sets
// status and, when `reason` is empty, a reason counting the checks; then sync_verdicts.
void settle_from_checks(GateResult& r);

// A gate result that could not run at all (capability missing, no GPU, no build).
GateResult skipped_result(const std::string& gate, const std::string& reason);

std::string utc_now_iso8601();

}  // namespace pfx::gates

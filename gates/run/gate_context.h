// What a gate gets to work with: the gate profile, the two builds, the fixtures, a scratch
// directory, the models it names (fixture files or synthesized by the candidate build), a per-gate
// deadline, and helpers that turn engine calls into checks uniformly (crash/hang/NaN → FAIL that no
// waiver can excuse; exit 3 → SKIPPED).
#pragma once
#include <chrono>
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "run/build_cache.h"
#include "run/engine_runner.h"
#include "core/gate_profile.h"
#include "core/gate_result.h"
#include "core/progress.h"
#include "core/ran_as_asked.h"

namespace pfx::gates {

class Deadline {
 public:
  explicit Deadline(double limit_s) : limit_s_(limit_s), t0_(std::chrono::steady_clock::now()) {}
  double elapsed() const { return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0_).count(); }
  double remaining() const { return std::max(0.5, limit_s_ - elapsed()); }
  bool expired() const { return elapsed() >= limit_s_; }
  double limit() const { return limit_s_; }

 private:
  double limit_s_;
  std::chrono::steady_clock::time_point t0_;
};

struct ModelRef {
  std::filesystem::path path;
  bool ok = false;
  bool unavailable = false;  // the candidate build cannot synthesize it (capability missing)
  std::string error;
};

// models.<name> from the profile: {fixture: <path under the fixtures dir>} | {synth: <model profile
// path in the candidate tree>, seed: N} | {path: <file>}. Also "fixture:<path>" names directly.
class ModelStore {
 public:
  ModelStore(const GateProfile& profile, const Build& candidate, std::filesystem::path fixtures_dir,
             std::filesystem::path cache_dir, const Progress& progress);
  ModelRef resolve(const std::string& name, double timeout_s);

 private:
  const GateProfile& profile_;
  const Build& candidate_;
  std::filesystem::path fixtures_, cache_;
  const Progress& progress_;
  std::map<std::string, ModelRef> done_;
};

struct GateCase {
  std::string name;
  std::string model;        // a models.<name> key or "fixture:<path>"
  PromptInput input;
  std::string oracle;       // fixtures oracle case this came from, if any
  std::filesystem::path oracle_root;  // the fixtures folder holding it (oracle/, models/)
  std::vector<int> oracle_greedy;
};
// gates.<gate>.cases: [{name, model, text | tokens | oracle}] or plain oracle case names. An
// oracle case is looked up in fixtures_dir, then in project_fixtures_dir (the candidate's
// tests/fixtures: the llama3/qwen2 fixtures the shared folder lacks), when given.
std::vector<GateCase> parse_cases(const GateProfile& profile, const std::string& gate,
                                  const std::filesystem::path& fixtures_dir,
                                  const std::filesystem::path& project_fixtures_dir = {});
// The candidate tree's own fixtures folder (tests/fixtures).
inline std::filesystem::path project_fixtures(const Build& candidate) { return candidate.src / "tests" / "fixtures"; }
// The names parse_cases gives the cases (the check names of parity and greedy), without the fixtures.
std::vector<std::string> case_names(const GateProfile& profile, const std::string& gate);

// A capability a gate needs of a build: `name` in the list `list` of `prefill --version --json`
// (contract::capability), e.g. {"subcommands", "bench"}.
struct Capability {
  std::string list, name;
};

struct GateContext {
  std::string gate;
  const GateProfile& profile;
  const Build& baseline;
  const Build& candidate;
  std::filesystem::path repo, cache_dir, fixtures_dir, work_dir;
  const Progress& progress;
  ModelStore& models;
  std::string reproduce;  // `landing gate <name> --baseline … --candidate … --gates …`
  Deadline deadline;
  // suite only: the CTest labels of a GPU host's share (landing gate suite --suite-labels); empty
  // = the whole suite.
  std::vector<std::string> suite_labels = {};

  EngineRunner engine(const Build& b) const;
  void say(const std::string& msg) const { progress.say("gate " + gate + ": " + msg); }
  GateResult start() const;  // a result with gate/required/ids/host/started filled

  // When one of `builds` lacks one of `needs`, makes `r` SKIPPED (skip_gate: one check with the
  // reason, naming the build and the capability) and returns true; the gate then returns `r`.
  bool skipped_without(GateResult& r, const std::vector<const Build*>& builds, const std::vector<Capability>& needs) const;
  // models.<name> for the check `check`: its path, or nullopt after adding the check that says why
  // there is none (SKIPPED where the candidate build cannot synthesize it, else a hard failure).
  std::optional<std::filesystem::path> model_or_check(GateResult& r, const std::string& check, const std::string& name) const;
};

// A check for an engine call that did not succeed: SKIPPED for exit 3, otherwise a FAIL that
// cannot be waived (crash, hang, error, unreadable output).
Check failed_call_check(const std::string& name, const EngineCall& call, const std::string& what);
// A successful call of build `b` checked against what it was asked (core/ran_as_asked.h): the
// verdict, whose reasons name the build ("the candidate ca4d1da7e000 was asked for …"), and the
// evidence a check stores under metrics["ran"][role] so `landing import` can redo it.
struct VerifiedCall {
  RanAsAsked verdict;
  nlohmann::json evidence;
};
VerifiedCall verify_call(const AskedRun& asked, const EngineCall& call, const Build& b);
// The same for a call run otherwise (the timing gate's, under the tracer): `output` is what it
// printed (printed_json_object; null when nothing).
VerifiedCall verify_call(const AskedRun& asked, const nlohmann::json& output, const Build& b);
// Reason the build cannot serve a gate (capability missing in `--version --json`), or nullopt.
std::optional<std::string> missing_capability(const Build& b, const std::string& list, const std::string& name);
// Asks the candidate build whether a GPU answers, with a short `prefill bench` on the profile's
// gpu_probe_model (cached per build), before a gate prepares big inputs (a 7B model). Returns the
// check to record when it does not (SKIPPED for exit 3, FAIL for a crash), nullopt when it does or
// when the profile names no probe model.
std::optional<Check> gpu_probe(const GateContext& ctx);
// A gate that cannot run here (a capability missing, no tracer): SKIPPED through one check that
// says why, so no result is ever empty (a result without checks is a FAIL, gate_result.h).
GateResult skip_gate(GateResult r, const std::string& reason, double elapsed_s);
// Applies the profile's waivers to FAIL checks, then settles the gate status; a gate disabled by
// the profile never gets here.
void finish(GateResult& r, const GateProfile& profile, double started_elapsed_s);

}  // namespace pfx::gates

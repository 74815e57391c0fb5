// The gate profile (profiles/gates/*.yaml): which gates run, which are required, thresholds,
// budgets, inputs (models, prompts), timeouts and waivers. Loaded from YAML into JSON so the
// report can store it verbatim; checked against the schema (core/profile_schema.h), read by the
// gates after defaults, and diffed baseline vs candidate (core/profile_diff.h) so a loosened
// threshold or a new waiver can never slip in unseen.
#pragma once
#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "core/gate_catalog.h"

namespace pfx::gates {

inline constexpr const char* kGateProfileSchema = "gate-profile/1";

struct Waiver {
  std::string gate;
  std::string match = "*";  // glob over check names (case name, kernel name)
  std::string reason;
};

class GateProfile {
 public:
  // Throws ProfileError (a pfx::Error) naming the file, the line and the key on malformed YAML
  // (base/yaml: at most 100k nodes with aliases expanded, no duplicate keys) and on schema
  // violations (unknown key, wrong type, negative threshold). `strict` false: only the structure
  // is checked (a baseline's profile from before a schema change still diffs).
  static GateProfile load(const std::filesystem::path& path);
  static GateProfile parse(const std::string& yaml_text, const std::string& origin, bool strict = true);
  // From a stored record (no schema check: a report written under an older schema re-renders).
  static GateProfile from_json(const nlohmann::json& j, const std::string& origin);

  // As written; and after defaults (what the gates read, what results' profile hash covers).
  const nlohmann::json& data() const { return root_; }
  const nlohmann::json& effective() const { return effective_; }
  std::string sha256() const;
  const std::string& origin() const { return origin_; }

  // gates.<name> (an empty object when absent).
  const nlohmann::json& gate(const std::string& name) const;
  bool enabled(const std::string& name) const;
  bool required(const std::string& name) const;
  double timeout_s(const std::string& name) const;  // gates.<name>.timeout_s, default 600

  // Typed lookups inside gates.<gate>; errors name origin and "gates.<gate>.<key>".
  double number(const std::string& gate, const std::string& key, double dflt) const;
  long integer(const std::string& gate, const std::string& key, long dflt) const;
  std::string string(const std::string& gate, const std::string& key, const std::string& dflt) const;
  std::vector<std::string> strings(const std::string& gate, const std::string& key) const;

  const std::vector<Waiver>& waivers() const { return waivers_; }
  // The waiver covering check `check_name` of `gate`, or nullptr.
  const Waiver* waiver_for(const std::string& gate, const std::string& check_name) const;

  // build.* settings
  std::vector<std::string> cmake_args() const;
  std::string prefill_relpath() const;   // default engine/cli/prefill
  double build_timeout_s() const;        // default 5400
  int build_jobs() const;                // 0: all cores

 private:
  void validate();
  // "<origin>: line N" for the node at JSON pointer `pointer` (or its nearest parent with a
  // line); just the origin for a profile made from JSON.
  std::string at(const std::string& pointer) const;
  nlohmann::json root_, effective_;
  std::string origin_;
  std::map<std::string, int> lines_;  // JSON pointer -> 1-based line, from parse()
  std::vector<Waiver> waivers_;
};

// YAML text → JSON (plain scalars become bool/int/float where they parse as such), through
// base/yaml's bounded, duplicate-refusing load.
nlohmann::json yaml_to_json(const std::string& yaml_text, const std::string& origin);

}  // namespace pfx::gates

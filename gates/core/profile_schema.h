// The gate profile's schema: every key landing reads, its type, its default and which way a change
// of it moves the bar. One table serves three jobs: an invalid profile (unknown key, wrong type,
// negative threshold) is a usage error naming the key and its line; the effective profile (after
// defaults) is what the gates run with and what every result's profile hash covers; and the
// loosening diff (core/profile_diff.h) judges baseline → candidate on effective values.
#pragma once
#include <map>
#include <nlohmann/json.hpp>
#include <string>

#include "util/error.h"

namespace pfx::gates {

// A gate profile that breaks the schema: the user must fix the file (landing exits 4, usage).
class ProfileError : public pfx::Error {
 public:
  using pfx::Error::Error;
};

// Which way a change of a setting moves the bar.
enum class Bar {
  Flag,        // enabled, required: true → false loosens
  UpperLimit,  // max_*: raised or removed loosens
  LowerLimit,  // min_*, confidence, alpha: lowered or removed loosens
  Count,       // reps, pairs, tokens: fewer loosens
  Input,       // what is run (path, backend, model, cases, build): any change or removal loosens
  Exclusion,   // suite.exclude_labels: an added label loosens
  Neutral,     // timeouts, warm-up, step sizes, jobs: listed, never loosening
};

// Line numbers (1-based) of every key and sequence element in a YAML text, by the path the
// validator and the diff use: "gates.parity.max_rel_dev", "gates.parity.cases[2].name".
std::map<std::string, int> yaml_key_lines(const std::string& yaml_text);

// Checks a profile (YAML already converted to JSON) against the schema; throws ProfileError
// "<origin>: line L: <key>: <what was expected>". `lines` from yaml_key_lines (may be empty).
void validate_profile(const nlohmann::json& profile, const std::map<std::string, int>& lines, const std::string& origin);

// The profile after defaults: each listed gate gets every setting that has a default (enabled and
// required default to true); known gates not listed become {enabled: false}; build gets its
// defaults; waivers default to []. Pure: never throws on a profile validate_profile accepts.
nlohmann::json effective_profile(const nlohmann::json& literal);

// The bar kind of gates.<gate>.<key> (Neutral for keys the schema does not know).
Bar bar_of(const std::string& gate, const std::string& key);
// The bar kind of a field inside a list element of gates.<gate>.<list> (cases, budgets).
Bar element_field_bar(const std::string& field);

// sha256 of the effective profile's canonical JSON (sorted keys, no spaces): the "profile hash"
// every gate result carries and `landing import` compares.
std::string profile_sha256(const nlohmann::json& effective);

}  // namespace pfx::gates

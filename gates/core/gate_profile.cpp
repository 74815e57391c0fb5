// Gate profile loading, validation and baseline-vs-candidate diff (see gate_profile.h).
#include "core/gate_profile.h"

#include <fnmatch.h>
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <charconv>
#include <fstream>
#include <map>
#include <sstream>

#include "core/profile_schema.h"
#include "util/error.h"

namespace pfx::gates {

using nlohmann::json;

namespace {

json scalar_to_json(const YAML::Node& n) {
  const std::string& s = n.Scalar();
  if (n.Tag() == "!") return s;  // quoted: always a string
  if (s == "true" || s == "True" || s == "yes") return true;
  if (s == "false" || s == "False" || s == "no") return false;
  if (s == "null" || s == "~" || s.empty()) return nullptr;
  long long iv = 0;
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), iv);
  if (ec == std::errc() && p == s.data() + s.size()) return iv;
  try {
    size_t used = 0;
    const double dv = std::stod(s, &used);
    if (used == s.size()) return dv;
  } catch (...) {
  }
  return s;
}

json node_to_json(const YAML::Node& n) {
  switch (n.Type()) {
    case YAML::NodeType::Null:
    case YAML::NodeType::Undefined: return nullptr;
    case YAML::NodeType::Scalar: return scalar_to_json(n);
    case YAML::NodeType::Sequence: {
      json a = json::array();
      for (const auto& e : n) a.push_back(node_to_json(e));
      return a;
    }
    case YAML::NodeType::Map: {
      json o = json::object();
      for (const auto& kv : n) o[kv.first.as<std::string>()] = node_to_json(kv.second);
      return o;
    }
  }
  return nullptr;
}

}  // namespace

json yaml_to_json(const std::string& yaml_text, const std::string& origin) {
  try {
    return node_to_json(YAML::Load(yaml_text));
  } catch (const YAML::Exception& e) {
    throw ProfileError(origin + ": line " + std::to_string(e.mark.line + 1) + ", column " + std::to_string(e.mark.column + 1) +
                       ": invalid YAML: " + e.msg);
  }
}

namespace {
// A profile that breaks the schema is the user's to fix: a usage error, not a tool error.
template <class... Args>
[[noreturn]] void profile_error(const Args&... args) {
  std::ostringstream os;
  (os << ... << args);
  throw ProfileError(os.str());
}
}  // namespace

GateProfile GateProfile::load(const std::filesystem::path& path) {
  std::ifstream in(path);
  if (!in) fail(path.string(), ": cannot open gate profile");
  std::stringstream ss;
  ss << in.rdbuf();
  return parse(ss.str(), path.string());
}

GateProfile GateProfile::parse(const std::string& yaml_text, const std::string& origin, bool strict) {
  json j = yaml_to_json(yaml_text, origin);
  GateProfile p = from_json(j, origin);
  if (strict) validate_profile(j, yaml_key_lines(yaml_text), origin);
  return p;
}

GateProfile GateProfile::from_json(const json& j, const std::string& origin) {
  GateProfile p;
  p.root_ = j;
  p.origin_ = origin;
  p.validate();
  p.effective_ = effective_profile(j);
  return p;
}

std::string GateProfile::sha256() const { return profile_sha256(effective_); }

void GateProfile::validate() {
  if (!root_.is_object()) profile_error(origin_, ": expected a YAML mapping at the top level (a gate profile)");
  if (!root_.contains("schema") || root_["schema"] != kGateProfileSchema)
    profile_error(origin_, ": key 'schema' must be '", kGateProfileSchema, "'");
  if (!root_.contains("gates") || !root_["gates"].is_object())
    profile_error(origin_, ": key 'gates' must be a mapping of gate name to settings");
  for (const auto& [name, settings] : root_["gates"].items()) {
    bool known = false;
    for (const auto& g : known_gates()) known |= g == name;
    if (!known) profile_error(origin_, ": gates.", name, ": unknown gate (expected one of parity, accuracy, greedy, ptxas, suite, timing, ab)");
    if (!settings.is_object() && !settings.is_null()) profile_error(origin_, ": gates.", name, ": expected a mapping");
  }
  waivers_.clear();
  if (root_.contains("waivers") && !root_["waivers"].is_null()) {
    if (!root_["waivers"].is_array()) profile_error(origin_, ": key 'waivers' must be a list");
    for (size_t i = 0; i < root_["waivers"].size(); ++i) {
      const auto& w = root_["waivers"][i];
      const std::string where = origin_ + ": waivers[" + std::to_string(i) + "]";
      if (!w.is_object()) profile_error(where, ": expected a mapping with gate, reason and optional match");
      Waiver wv;
      if (!w.contains("gate") || !w["gate"].is_string()) profile_error(where, ": missing 'gate'");
      wv.gate = w["gate"];
      bool known = false;
      for (const auto& g : known_gates()) known |= g == wv.gate;
      if (!known) profile_error(where, ": gate '", wv.gate, "' is not a known gate");
      if (!w.contains("reason") || !w["reason"].is_string() || w["reason"].get<std::string>().find_first_not_of(" \t") == std::string::npos)
        profile_error(where, ": a waiver needs a non-empty 'reason' (why the change is intended)");
      wv.reason = w["reason"];
      if (w.contains("match")) {
        if (!w["match"].is_string()) profile_error(where, ": 'match' must be a string glob");
        wv.match = w["match"];
      }
      waivers_.push_back(wv);
    }
  }
}

const json& GateProfile::gate(const std::string& name) const {
  static const json empty = json::object();
  const auto& g = effective_["gates"];
  auto it = g.find(name);
  if (it == g.end() || !it->is_object()) return empty;
  return *it;
}

bool GateProfile::enabled(const std::string& name) const {
  if (!effective_["gates"].contains(name)) return false;
  const auto& g = gate(name);
  return !g.contains("enabled") || g["enabled"] == true;
}

bool GateProfile::required(const std::string& name) const {
  const auto& g = gate(name);
  return !g.contains("required") || g["required"] == true;
}

double GateProfile::timeout_s(const std::string& name) const { return number(name, "timeout_s", 600); }

double GateProfile::number(const std::string& g, const std::string& key, double dflt) const {
  const auto& s = gate(g);
  if (!s.contains(key) || s[key].is_null()) return dflt;
  if (!s[key].is_number()) fail(origin_, ": gates.", g, ".", key, ": expected a number, got ", s[key].dump());
  return s[key].get<double>();
}

long GateProfile::integer(const std::string& g, const std::string& key, long dflt) const {
  const auto& s = gate(g);
  if (!s.contains(key) || s[key].is_null()) return dflt;
  if (!s[key].is_number_integer()) fail(origin_, ": gates.", g, ".", key, ": expected an integer, got ", s[key].dump());
  return s[key].get<long>();
}

std::string GateProfile::string(const std::string& g, const std::string& key, const std::string& dflt) const {
  const auto& s = gate(g);
  if (!s.contains(key) || s[key].is_null()) return dflt;
  if (!s[key].is_string()) fail(origin_, ": gates.", g, ".", key, ": expected a string, got ", s[key].dump());
  return s[key];
}

std::vector<std::string> GateProfile::strings(const std::string& g, const std::string& key) const {
  const auto& s = gate(g);
  std::vector<std::string> out;
  if (!s.contains(key) || s[key].is_null()) return out;
  if (!s[key].is_array()) fail(origin_, ": gates.", g, ".", key, ": expected a list of strings");
  for (const auto& e : s[key]) {
    if (!e.is_string()) fail(origin_, ": gates.", g, ".", key, ": expected strings, got ", e.dump());
    out.push_back(e);
  }
  return out;
}

const Waiver* GateProfile::waiver_for(const std::string& g, const std::string& check_name) const {
  for (const auto& w : waivers_)
    if (w.gate == g && ::fnmatch(w.match.c_str(), check_name.c_str(), 0) == 0) return &w;
  return nullptr;
}

std::vector<std::string> GateProfile::cmake_args() const {
  std::vector<std::string> out;
  if (!root_.contains("build") || !root_["build"].contains("cmake_args")) return out;
  const auto& a = root_["build"]["cmake_args"];
  if (!a.is_array()) fail(origin_, ": build.cmake_args: expected a list of strings");
  for (const auto& e : a) {
    if (!e.is_string()) fail(origin_, ": build.cmake_args: expected strings, got ", e.dump());
    out.push_back(e);
  }
  return out;
}

std::string GateProfile::prefill_relpath() const {
  if (root_.contains("build") && root_["build"].contains("prefill")) {
    if (!root_["build"]["prefill"].is_string()) fail(origin_, ": build.prefill: expected a path string");
    return root_["build"]["prefill"];
  }
  return "engine/cli/prefill";
}

double GateProfile::build_timeout_s() const {
  if (root_.contains("build") && root_["build"].contains("timeout_s")) {
    if (!root_["build"]["timeout_s"].is_number()) fail(origin_, ": build.timeout_s: expected a number");
    return root_["build"]["timeout_s"];
  }
  return 5400;
}

int GateProfile::build_jobs() const {
  if (root_.contains("build") && root_["build"].contains("jobs")) {
    if (!root_["build"]["jobs"].is_number_integer()) fail(origin_, ": build.jobs: expected an integer");
    return root_["build"]["jobs"];
  }
  return 0;
}

}  // namespace pfx::gates

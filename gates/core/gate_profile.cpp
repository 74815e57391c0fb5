// Gate profile loading, validation and defaults (see gate_profile.h; the diff: core/profile_diff.cpp).
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
#include "util/escape.h"
#include "yaml/safe_yaml.h"

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

// One JSON-pointer token (RFC 6901: '~' as ~0, '/' as ~1).
std::string pointer_token(const std::string& key) {
  std::string t;
  for (const char c : key) t += c == '~' ? "~0" : c == '/' ? "~1" : std::string(1, c);
  return t;
}

// gates.<g>.<key> of `gate` when set and of the type `is_type` tests; nullptr when unset or null;
// otherwise fails "<where(pointer)>: gates.<g>.<key>: expected <what>, got <value>".
template <class Where>
const json* typed_field(const json& gate, const std::string& g, const std::string& key, bool (json::*is_type)() const noexcept,
                        const char* what, const Where& where) {
  if (!gate.contains(key) || gate[key].is_null()) return nullptr;
  if (!(gate[key].*is_type)())
    fail(where("/gates/" + pointer_token(g) + "/" + pointer_token(key)), ": gates.", g, ".", key, ": expected ", what, ", got ",
         escape_control(gate[key].dump()));
  return &gate[key];
}

// The strings of list `list` (at JSON pointer `ptr`, named `name` in messages), each checked.
template <class Where>
std::vector<std::string> string_list(const json& list, const std::string& ptr, const std::string& name, const Where& where) {
  if (!list.is_array()) fail(where(ptr), ": ", name, ": expected a list of strings");
  std::vector<std::string> out;
  for (size_t i = 0; i < list.size(); ++i) {
    const auto& e = list[i];
    if (!e.is_string()) fail(where(ptr + "/" + std::to_string(i)), ": ", name, ": expected strings, got ", escape_control(e.dump()));
    out.push_back(e);
  }
  return out;
}

// The tree as JSON; `lines` (if given) gets each node's 1-based line under its JSON pointer, for
// messages. yaml::load() has already bounded the walk (aliases counted) and refused duplicates.
json node_to_json(const YAML::Node& n, const std::string& pointer, std::map<std::string, int>* lines) {
  if (lines && n.IsDefined() && n.Mark().line >= 0) lines->emplace(pointer, n.Mark().line + 1);
  switch (n.Type()) {
    case YAML::NodeType::Null:
    case YAML::NodeType::Undefined: return nullptr;
    case YAML::NodeType::Scalar: return scalar_to_json(n);
    case YAML::NodeType::Sequence: {
      json a = json::array();
      for (const auto& e : n) a.push_back(node_to_json(e, pointer + "/" + std::to_string(a.size()), lines));
      return a;
    }
    case YAML::NodeType::Map: {
      json o = json::object();
      for (const auto& kv : n) {
        const std::string key = kv.first.Scalar();
        if (lines && kv.first.Mark().line >= 0) lines->emplace(pointer + "/" + pointer_token(key), kv.first.Mark().line + 1);
        o[key] = node_to_json(kv.second, pointer + "/" + pointer_token(key), lines);
      }
      return o;
    }
  }
  return nullptr;
}

json yaml_to_json_lines(const std::string& yaml_text, const std::string& origin, std::map<std::string, int>* lines) {
  // The candidate commit controls its gate profile: bounded, duplicate-free (base/yaml). A profile
  // that is not valid YAML is the user's to fix: a usage error (ProfileError), like a schema one.
  YAML::Node root;
  try {
    root = pfx::yaml::load(yaml_text, origin);
  } catch (const ProfileError&) {
    throw;
  } catch (const pfx::Error& e) {
    throw ProfileError(e.what());
  }
  return node_to_json(root, "", lines);
}

// A profile that breaks the schema is the user's to fix: a usage error, not a tool error.
template <class... Args>
[[noreturn]] void profile_error(const Args&... args) {
  std::ostringstream os;
  (os << ... << args);
  throw ProfileError(os.str());
}

}  // namespace

json yaml_to_json(const std::string& yaml_text, const std::string& origin) {
  return yaml_to_json_lines(yaml_text, origin, nullptr);
}

std::string GateProfile::at(const std::string& pointer) const {
  // The nearest node with a known line: the key itself, else the mapping or list holding it.
  for (std::string p = pointer;; p = p.substr(0, p.rfind('/'))) {
    if (const auto it = lines_.find(p); it != lines_.end()) return origin_ + ": line " + std::to_string(it->second);
    if (p.empty()) return origin_;
  }
}

GateProfile GateProfile::load(const std::filesystem::path& path) {
  std::ifstream in(path);
  if (!in) fail(path.string(), ": cannot open gate profile");
  std::stringstream ss;
  ss << in.rdbuf();
  return parse(ss.str(), path.string());
}

GateProfile GateProfile::parse(const std::string& yaml_text, const std::string& origin, bool strict) {
  GateProfile p;
  p.root_ = yaml_to_json_lines(yaml_text, origin, &p.lines_);
  p.origin_ = origin;
  p.validate();
  p.effective_ = effective_profile(p.root_);
  if (strict) validate_profile(p.root_, yaml_key_lines(yaml_text), origin);
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
  if (!root_.is_object()) profile_error(at(""), ": expected a YAML mapping at the top level (a gate profile)");
  if (!root_.contains("schema"))
    profile_error(at(""), ": required key 'schema' is missing (expected schema: ", kGateProfileSchema, ")");
  if (root_["schema"] != kGateProfileSchema)
    profile_error(at("/schema"), ": key 'schema' must be '", kGateProfileSchema, "', not ", escape_control(root_["schema"].dump()));
  if (!root_.contains("gates")) profile_error(at(""), ": required key 'gates' is missing (a mapping of gate name to settings)");
  if (!root_["gates"].is_object()) profile_error(at("/gates"), ": key 'gates' must be a mapping of gate name to settings");
  for (const auto& [name, settings] : root_["gates"].items()) {
    bool known = false;
    for (const auto& g : known_gates()) known |= g == name;
    const std::string ptr = "/gates/" + pointer_token(name);
    if (!known)
      profile_error(at(ptr), ": gates.", escape_control(name), ": unknown gate (expected one of parity, accuracy, greedy, ptxas, suite, timing, ab)");
    if (!settings.is_object() && !settings.is_null()) profile_error(at(ptr), ": gates.", name, ": expected a mapping");
  }
  waivers_.clear();
  if (root_.contains("waivers") && !root_["waivers"].is_null()) {
    if (!root_["waivers"].is_array()) profile_error(at("/waivers"), ": key 'waivers' must be a list");
    for (size_t i = 0; i < root_["waivers"].size(); ++i) {
      const auto& w = root_["waivers"][i];
      const std::string where = at("/waivers/" + std::to_string(i)) + ": waivers[" + std::to_string(i) + "]";
      if (!w.is_object()) profile_error(where, ": expected a mapping with gate, reason and optional match");
      Waiver wv;
      if (!w.contains("gate")) profile_error(where, ": required key 'gate' is missing");
      if (!w["gate"].is_string()) profile_error(where, ": 'gate' must be a gate name");
      wv.gate = w["gate"];
      bool known = false;
      for (const auto& g : known_gates()) known |= g == wv.gate;
      if (!known) profile_error(where, ": gate ", quote_untrusted(wv.gate), " is not a known gate");
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
  const json* v = typed_field(gate(g), g, key, &json::is_number, "a number", [this](const std::string& p) { return at(p); });
  return v ? v->get<double>() : dflt;
}

long GateProfile::integer(const std::string& g, const std::string& key, long dflt) const {
  const json* v = typed_field(gate(g), g, key, &json::is_number_integer, "an integer", [this](const std::string& p) { return at(p); });
  return v ? v->get<long>() : dflt;
}

std::string GateProfile::string(const std::string& g, const std::string& key, const std::string& dflt) const {
  const json* v = typed_field(gate(g), g, key, &json::is_string, "a string", [this](const std::string& p) { return at(p); });
  return v ? v->get<std::string>() : dflt;
}

std::vector<std::string> GateProfile::strings(const std::string& g, const std::string& key) const {
  const auto& s = gate(g);
  if (!s.contains(key) || s[key].is_null()) return {};
  return string_list(s[key], "/gates/" + pointer_token(g) + "/" + pointer_token(key), "gates." + g + "." + key,
                     [this](const std::string& p) { return at(p); });
}

const Waiver* GateProfile::waiver_for(const std::string& g, const std::string& check_name) const {
  for (const auto& w : waivers_)
    if (w.gate == g && ::fnmatch(w.match.c_str(), check_name.c_str(), 0) == 0) return &w;
  return nullptr;
}

std::vector<std::string> GateProfile::cmake_args() const {
  std::vector<std::string> out;
  if (!root_.contains("build") || !root_["build"].contains("cmake_args")) return out;
  return string_list(root_["build"]["cmake_args"], "/build/cmake_args", "build.cmake_args", [this](const std::string& p) { return at(p); });
}

std::string GateProfile::prefill_relpath() const {
  if (root_.contains("build") && root_["build"].contains("prefill")) {
    if (!root_["build"]["prefill"].is_string()) fail(at("/build/prefill"), ": build.prefill: expected a path string");
    return root_["build"]["prefill"];
  }
  return "engine/cli/prefill";
}

double GateProfile::build_timeout_s() const {
  if (root_.contains("build") && root_["build"].contains("timeout_s")) {
    if (!root_["build"]["timeout_s"].is_number()) fail(at("/build/timeout_s"), ": build.timeout_s: expected a number");
    return root_["build"]["timeout_s"];
  }
  return 5400;
}

int GateProfile::build_jobs() const {
  if (root_.contains("build") && root_["build"].contains("jobs")) {
    if (!root_["build"]["jobs"].is_number_integer()) fail(at("/build/jobs"), ": build.jobs: expected an integer");
    return root_["build"]["jobs"];
  }
  return 0;
}

}  // namespace pfx::gates

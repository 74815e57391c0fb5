// The gate profile schema table, its validator and the effective profile (see profile_schema.h).
#include "core/profile_schema.h"

#include <yaml-cpp/yaml.h>

#include <cmath>
#include <limits>
#include <set>
#include <vector>

#include "core/gate_profile.h"
#include "core/sha256.h"
#include "yaml/safe_yaml.h"

namespace pfx::gates {

using nlohmann::json;

namespace {

enum class Type { Bool, Number, Integer, String, Strings, Cases, Budgets, RoleBudgets };

constexpr double kInf = std::numeric_limits<double>::infinity();

struct Setting {
  const char* key;
  Type type;
  Bar bar;
  json dflt;              // null: no default (the setting is off unless written)
  double lo = 0;          // numbers and integers: the smallest valid value
  double hi = kInf;       // ... and the largest
};

const std::vector<Setting>& common_settings() {
  static const std::vector<Setting> s = {
      {"enabled", Type::Bool, Bar::Flag, true},
      {"required", Type::Bool, Bar::Flag, true},
      {"timeout_s", Type::Number, Bar::Neutral, 600.0, 1e-3},
  };
  return s;
}

// gates.<gate>.<key>: what each gate reads. The defaults are the gates' own (they read the
// effective profile, so this table is where a default lives).
const std::map<std::string, std::vector<Setting>>& gate_settings() {
  static const std::map<std::string, std::vector<Setting>> s = {
      {"parity",
       {{"backend", Type::String, Bar::Input, "cuda"},
        {"path", Type::String, Bar::Input, "fast"},
        {"reference_path", Type::String, Bar::Input, "generic"},
        {"max_rel_dev", Type::Number, Bar::UpperLimit, 1e-3},
        {"max_nmse", Type::Number, Bar::UpperLimit, nullptr},
        {"min_top1", Type::Number, Bar::LowerLimit, nullptr, 0, 1},
        {"cases", Type::Cases, Bar::Input, json::array()},
        // The fast path's GEMM variants (prefill --gemm, capabilities.gemm_variants): "all" = every
        // one the candidate offers; the baseline's are added whatever this says (parity/parity_plan.h);
        // the cases rerun on each non-default variant ([] = all cases).
        {"gemm_variants", Type::Strings, Bar::Input, json::array({"all"})},
        {"gemm_variant_cases", Type::Strings, Bar::Input, json::array()}}},
      {"accuracy",
       {{"backend", Type::String, Bar::Input, "cuda"},
        {"paths", Type::Strings, Bar::Input, json::array({"fast", "generic"})},
        {"max_rel_dev", Type::Number, Bar::UpperLimit, 1e-2},
        {"max_nmse", Type::Number, Bar::UpperLimit, 1e-4},
        {"min_top1", Type::Number, Bar::LowerLimit, 0.95, 0, 1},
        {"greedy_tokens", Type::Integer, Bar::Count, 8},
        {"cases", Type::Cases, Bar::Input, json::array()}}},
      {"greedy",
       {{"backend", Type::String, Bar::Input, "auto"},
        {"path", Type::String, Bar::Input, "fast"},
        {"tokens", Type::Integer, Bar::Count, 32, 1},
        {"cases", Type::Cases, Bar::Input, json::array()}}},
      {"ptxas", {{"budgets", Type::Budgets, Bar::Input, json::array()}}},
      {"suite",
       {{"exclude_labels", Type::Strings, Bar::Exclusion, json::array({"landing-e2e"})},
        {"test_timeout_s", Type::Number, Bar::Neutral, 0.0},
        {"jobs", Type::Integer, Bar::Neutral, 0}}},
      {"timing",
       {{"models", Type::Strings, Bar::Input, json::array()},
        {"prompt_tokens", Type::Integer, Bar::Input, 512, 1},
        // Five repetitions per side is the fewest at which a rank test can reach α = 0.05 at all
        // (two-sided Mann-Whitney U: the smallest p for 5 vs 5 is 0.008, for 3 vs 3 it is 0.1).
        {"reps", Type::Integer, Bar::Count, 5, 5},
        {"warmup", Type::Integer, Bar::Neutral, 1},
        {"path", Type::String, Bar::Input, "fast"},
        {"busy_range", Type::String, Bar::Input, "prefill"},
        {"alpha", Type::Number, Bar::LowerLimit, 0.05, 1e-6, 0.5},
        {"role_budgets", Type::RoleBudgets, Bar::Input, json::array()}}},
      {"ab",
       {{"model", Type::String, Bar::Input, ""},
        {"prompt_tokens", Type::Integer, Bar::Input, 512, 1},
        {"reps", Type::Integer, Bar::Count, 3, 1},
        {"warmup", Type::Integer, Bar::Neutral, 1},
        {"path", Type::String, Bar::Input, "fast"},
        {"aa_pairs", Type::Integer, Bar::Count, 4, 1},
        {"min_pairs", Type::Integer, Bar::Count, 6, 2},
        {"max_pairs", Type::Integer, Bar::Count, 24, 2},
        {"step_pairs", Type::Integer, Bar::Neutral, 4, 1},
        {"max_regression_pct", Type::Number, Bar::UpperLimit, 2.0},
        {"confidence", Type::Number, Bar::LowerLimit, 0.95, 0.5, 0.9999},
        // More metrics judged like the headline one: pp<N> (prefill N tokens), tg<N> (decode N).
        {"extra_metrics", Type::Strings, Bar::Input, json::array()}}},
  };
  return s;
}

const std::vector<Setting>& build_settings() {
  static const std::vector<Setting> s = {
      {"cmake_args", Type::Strings, Bar::Input, json::array()},
      {"prefill", Type::String, Bar::Input, "engine/cli/prefill"},
      {"timeout_s", Type::Number, Bar::Neutral, 5400.0, 1e-3},
      {"jobs", Type::Integer, Bar::Neutral, 0},
  };
  return s;
}

const std::set<std::string> kCaseFields = {"name", "model", "text", "tokens", "random_tokens", "oracle", "no_bos"};
const std::set<std::string> kBudgetLimits = {"max_regs", "max_spill_bytes", "max_stack_bytes", "max_smem_bytes",
                                             "min_blocks_per_sm"};

const Setting* find_setting(const std::vector<Setting>& list, const std::string& key) {
  for (const auto& s : list)
    if (key == s.key) return &s;
  return nullptr;
}

// Errors carry the line of the key (or of its nearest enclosing key that has one).
class Reporter {
 public:
  Reporter(const std::map<std::string, int>& lines, std::string origin) : lines_(lines), origin_(std::move(origin)) {}
  [[noreturn]] void error(const std::string& path, const std::string& what) const {
    std::string p = path;
    int line = 0;
    while (true) {
      if (auto it = lines_.find(p); it != lines_.end()) {
        line = it->second;
        break;
      }
      const auto cut = p.find_last_of(".[");
      if (cut == std::string::npos || cut == 0) break;
      p = p.substr(0, cut);
    }
    throw ProfileError(origin_ + ": " + (line ? "line " + std::to_string(line) + ": " : std::string()) + path + ": " + what);
  }

 private:
  const std::map<std::string, int>& lines_;
  std::string origin_;
};

std::string names_of(const std::vector<Setting>& a, const std::vector<Setting>& b = {}) {
  std::string out;
  for (const auto* list : {&a, &b})
    for (const auto& s : *list) out += (out.empty() ? "" : ", ") + std::string(s.key);
  return out;
}

void check_range(const Reporter& rep, const std::string& path, double v, double lo, double hi) {
  if (!std::isfinite(v)) rep.error(path, "expected a finite number, got " + json(v).dump());
  if (v < lo) {
    if (lo == 0) rep.error(path, "must not be negative, got " + json(v).dump());
    rep.error(path, "must be at least " + json(lo).dump() + ", got " + json(v).dump());
  }
  if (v > hi) rep.error(path, "must be at most " + json(hi).dump() + ", got " + json(v).dump());
}

void check_value(const Reporter& rep, const std::string& path, const json& v, const Setting& s);

void check_string_list(const Reporter& rep, const std::string& path, const json& v) {
  if (!v.is_array()) rep.error(path, "expected a list of strings, got " + v.dump());
  for (size_t i = 0; i < v.size(); ++i)
    if (!v[i].is_string()) rep.error(path + "[" + std::to_string(i) + "]", "expected a string, got " + v[i].dump());
}

void check_cases(const Reporter& rep, const std::string& path, const json& v, const json& models) {
  if (!v.is_array()) rep.error(path, "expected a list of cases ({name, model, text | tokens} or an oracle case name)");
  std::set<std::string> names;
  for (size_t i = 0; i < v.size(); ++i) {
    const std::string p = path + "[" + std::to_string(i) + "]";
    const auto& c = v[i];
    std::string name;
    if (c.is_string()) {
      name = c;
    } else if (c.is_object()) {
      for (const auto& [k, f] : c.items()) {
        if (!kCaseFields.count(k))
          rep.error(p + "." + k, "unknown case field (expected name, model, text, tokens, random_tokens, oracle, no_bos)");
        if (k == "tokens") {
          if (!f.is_array()) rep.error(p + ".tokens", "expected a list of token ids");
          for (size_t t = 0; t < f.size(); ++t)
            if (!f[t].is_number_integer() || f[t].get<long long>() < 0)
              rep.error(p + ".tokens[" + std::to_string(t) + "]", "expected a non-negative token id, got " + f[t].dump());
        } else if (k == "random_tokens") {
          // {count, seed, below}: a deterministic prompt of exactly `count` ids in [3, below).
          if (!f.is_object()) rep.error(p + ".random_tokens", "expected {count, seed, below}");
          for (const auto& [rk, rv] : f.items()) {
            if (rk != "count" && rk != "seed" && rk != "below") rep.error(p + ".random_tokens." + rk, "unknown key (expected count, seed, below)");
            if (!rv.is_number_integer()) rep.error(p + ".random_tokens." + rk, "expected an integer, got " + rv.dump());
          }
          if (!f.contains("count") || f["count"].get<long long>() < 1) rep.error(p + ".random_tokens.count", "expected a count ≥ 1");
          if (!f.contains("below") || f["below"].get<long long>() < 4) rep.error(p + ".random_tokens.below", "expected an id bound > 3");
        } else if (k == "no_bos") {
          if (!f.is_boolean()) rep.error(p + ".no_bos", "expected true or false, got " + f.dump());
        } else if (!f.is_string()) {
          rep.error(p + "." + k, "expected a string, got " + f.dump());
        }
      }
      if (!c.contains("oracle")) {
        if (!c.contains("model")) rep.error(p, "a case needs 'oracle', or 'model' with 'text' or 'tokens'");
        if (!c.contains("text") && !c.contains("tokens") && !c.contains("random_tokens"))
          rep.error(p, "a case with 'model' needs 'text', 'tokens' or 'random_tokens'");
        const std::string m = c["model"];
        if (m.rfind("fixture:", 0) != 0 && !(models.is_object() && models.contains(m)))
          rep.error(p + ".model", "model '" + m + "' is not defined under 'models'");
      }
      name = c.value("name", c.value("oracle", std::string()));
    } else {
      rep.error(p, "expected a case mapping or an oracle case name, got " + c.dump());
    }
    if (!name.empty() && !names.insert(name).second) rep.error(p, "case '" + name + "' is listed twice");
  }
}

void check_budgets(const Reporter& rep, const std::string& path, const json& v, const char* id_key,
                   const std::set<std::string>& limits) {
  if (!v.is_array()) rep.error(path, std::string("expected a list of budgets ({") + id_key + ": <glob>, limits})");
  std::set<std::string> ids;
  for (size_t i = 0; i < v.size(); ++i) {
    const std::string p = path + "[" + std::to_string(i) + "]";
    const auto& b = v[i];
    if (!b.is_object()) rep.error(p, std::string("expected a mapping {") + id_key + ": <glob>, limits}");
    if (!b.contains(id_key) || !b[id_key].is_string()) rep.error(p, std::string("missing '") + id_key + "' (a glob)");
    if (!ids.insert(b[id_key].get<std::string>()).second)
      rep.error(p, std::string("a second budget for ") + id_key + " '" + b[id_key].get<std::string>() + "'");
    bool any = false;
    for (const auto& [k, f] : b.items()) {
      if (k == id_key) continue;
      if (!limits.count(k)) {
        std::string allowed;
        for (const auto& l : limits) allowed += (allowed.empty() ? "" : ", ") + l;
        rep.error(p + "." + k, "unknown budget limit (expected " + allowed + ")");
      }
      if (!f.is_number()) rep.error(p + "." + k, "expected a number, got " + f.dump());
      check_range(rep, p + "." + k, f.get<double>(), 0, kInf);
      any = true;
    }
    if (!any) rep.error(p, "a budget with no limit checks nothing");
  }
}

void check_value(const Reporter& rep, const std::string& path, const json& v, const Setting& s) {
  switch (s.type) {
    case Type::Bool:
      if (!v.is_boolean()) rep.error(path, "expected true or false, got " + v.dump());
      return;
    case Type::Number:
      if (!v.is_number()) rep.error(path, "expected a number, got " + v.dump());
      check_range(rep, path, v.get<double>(), s.lo, s.hi);
      return;
    case Type::Integer:
      if (!v.is_number_integer()) rep.error(path, "expected an integer, got " + v.dump());
      check_range(rep, path, static_cast<double>(v.get<long long>()), s.lo, s.hi);
      return;
    case Type::String:
      if (!v.is_string()) rep.error(path, "expected a string, got " + v.dump());
      return;
    case Type::Strings: check_string_list(rep, path, v); return;
    case Type::Budgets: check_budgets(rep, path, v, "kernels", kBudgetLimits); return;
    case Type::RoleBudgets: check_budgets(rep, path, v, "role", {"max_regression_pct"}); return;
    case Type::Cases: return;  // needs the models: checked by the caller
  }
}

void check_settings(const Reporter& rep, const std::string& path, const json& obj, const std::vector<Setting>& own,
                    const std::vector<Setting>& common, const json& models) {
  if (!obj.is_object()) rep.error(path, "expected a mapping, got " + obj.dump());
  for (const auto& [k, v] : obj.items()) {
    const Setting* s = find_setting(own, k);
    if (!s) s = find_setting(common, k);
    if (!s) rep.error(path + "." + k, "unknown key (expected one of " + names_of(common, own) + ")");
    if (v.is_null() && s->type != Type::Cases) rep.error(path + "." + k, "has no value");
    if (s->type == Type::Cases) check_cases(rep, path + "." + k, v, models);
    else check_value(rep, path + "." + k, v, *s);
  }
}

void check_models(const Reporter& rep, const json& models) {
  if (!models.is_object()) rep.error("models", "expected a mapping of model name to {fixture | synth (+ seed) | path}");
  for (const auto& [name, m] : models.items()) {
    const std::string p = "models." + name;
    if (!m.is_object()) rep.error(p, "expected a mapping with fixture, synth or path");
    int sources = 0;
    for (const auto& [k, v] : m.items()) {
      if (k == "fixture" || k == "synth" || k == "path") {
        ++sources;
        if (!v.is_string()) rep.error(p + "." + k, "expected a path string, got " + v.dump());
      } else if (k == "seed") {
        if (!v.is_number_integer()) rep.error(p + ".seed", "expected an integer, got " + v.dump());
      } else {
        rep.error(p + "." + k, "unknown key (expected fixture, synth, path or seed)");
      }
    }
    if (sources != 1) rep.error(p, "expected exactly one of fixture, synth or path");
  }
}

void check_waivers(const Reporter& rep, const json& w) {
  if (w.is_null()) return;
  if (!w.is_array()) rep.error("waivers", "expected a list of {gate, match, reason}");
  for (size_t i = 0; i < w.size(); ++i) {
    const std::string p = "waivers[" + std::to_string(i) + "]";
    if (!w[i].is_object()) continue;  // GateProfile::validate names it
    for (const auto& [k, v] : w[i].items()) {
      if (k != "gate" && k != "match" && k != "reason") rep.error(p + "." + k, "unknown key (expected gate, match, reason)");
      if (!v.is_string()) rep.error(p + "." + k, "expected a string, got " + v.dump());
    }
  }
}

void record_lines(const YAML::Node& n, const std::string& path, std::map<std::string, int>& out) {
  if (n.IsMap()) {
    for (const auto& kv : n) {
      const std::string key = kv.first.Scalar();
      const std::string p = path.empty() ? key : path + "." + key;
      out.emplace(p, kv.first.Mark().line + 1);
      record_lines(kv.second, p, out);
    }
  } else if (n.IsSequence()) {
    for (size_t i = 0; i < n.size(); ++i) {
      const std::string p = path + "[" + std::to_string(i) + "]";
      out.emplace(p, n[i].Mark().line + 1);
      record_lines(n[i], p, out);
    }
  }
}

void fill_defaults(json& obj, const std::vector<Setting>& list) {
  for (const auto& s : list)
    if (!s.dflt.is_null() && (!obj.contains(s.key) || obj[s.key].is_null())) obj[s.key] = s.dflt;
}

}  // namespace

std::map<std::string, int> yaml_key_lines(const std::string& yaml_text) {
  std::map<std::string, int> out;
  try {
    // Bounded like every load of a profile (base/yaml): record_lines walks aliases too.
    record_lines(pfx::yaml::load(yaml_text, "(gate profile)"), "", out);
  } catch (const pfx::Error&) {
    // yaml_to_json reports malformed or unbounded YAML with its position; no lines to give here.
  } catch (const YAML::Exception&) {
  }
  return out;
}

void validate_profile(const json& p, const std::map<std::string, int>& lines, const std::string& origin) {
  const Reporter rep(lines, origin);
  if (!p.is_object()) throw ProfileError(origin + ": expected a YAML mapping at the top level (a gate profile)");
  static const std::set<std::string> top = {"schema", "build", "models", "gpu_probe_model", "gates", "waivers"};
  for (const auto& [k, v] : p.items())
    if (!top.count(k)) rep.error(k, "unknown key (expected schema, build, models, gpu_probe_model, gates, waivers)");
  const json models = p.value("models", json::object());
  if (p.contains("models")) check_models(rep, p["models"]);
  if (p.contains("build")) check_settings(rep, "build", p["build"], build_settings(), {}, models);
  if (p.contains("gpu_probe_model")) {
    const auto& g = p["gpu_probe_model"];
    if (!g.is_string()) rep.error("gpu_probe_model", "expected a model name, got " + g.dump());
    if (!models.contains(g.get<std::string>())) rep.error("gpu_probe_model", "model '" + g.get<std::string>() + "' is not defined under 'models'");
  }
  if (p.contains("gates") && p["gates"].is_object()) {
    for (const auto& [name, settings] : p["gates"].items()) {
      auto it = gate_settings().find(name);
      if (it == gate_settings().end()) continue;  // GateProfile::validate names unknown gates
      if (settings.is_null()) continue;
      check_settings(rep, "gates." + name, settings, it->second, common_settings(), models);
      const json eff = [&] {
        json e = settings;
        fill_defaults(e, it->second);
        return e;
      }();
      // Model names a gate uses must be defined: a typo is a usage error, not a FAIL at run time.
      if (name == "ab" && !eff["model"].get<std::string>().empty() && !models.contains(eff["model"].get<std::string>()))
        rep.error("gates.ab.model", "model '" + eff["model"].get<std::string>() + "' is not defined under 'models'");
      if (name == "timing")
        for (size_t i = 0; i < eff["models"].size(); ++i)
          if (!models.contains(eff["models"][i].get<std::string>()))
            rep.error("gates.timing.models[" + std::to_string(i) + "]",
                      "model '" + eff["models"][i].get<std::string>() + "' is not defined under 'models'");
      if (name == "ab")
        for (size_t i = 0; i < eff["extra_metrics"].size(); ++i) {
          const std::string m = eff["extra_metrics"][i];
          const bool shaped = m.size() > 2 && (m.rfind("pp", 0) == 0 || m.rfind("tg", 0) == 0) &&
                              m.find_first_not_of("0123456789", 2) == std::string::npos && m[2] != '0';
          if (!shaped) rep.error("gates.ab.extra_metrics[" + std::to_string(i) + "]", "expected pp<N> or tg<N> (N > 0), got '" + m + "'");
        }
      if (name == "ab" && eff["max_pairs"].get<long>() < eff["min_pairs"].get<long>())
        rep.error("gates.ab.max_pairs", "must be at least min_pairs (" + eff["min_pairs"].dump() + ")");
    }
  }
  if (p.contains("waivers")) check_waivers(rep, p["waivers"]);
}

json effective_profile(const json& literal) {
  json e = literal.is_object() ? literal : json::object();
  if (!e.contains("build") || !e["build"].is_object()) e["build"] = json::object();
  fill_defaults(e["build"], build_settings());
  if (!e.contains("models") || !e["models"].is_object()) e["models"] = json::object();
  if (!e.contains("waivers") || !e["waivers"].is_array()) e["waivers"] = json::array();
  if (!e.contains("gates") || !e["gates"].is_object()) e["gates"] = json::object();
  for (const auto& name : known_gates()) {
    json& g = e["gates"][name];
    if (!e["gates"].contains(name) || g.is_null()) {
      // Listed with no settings: on, with defaults. Not listed at all: off.
      const bool listed = literal.is_object() && literal.contains("gates") && literal["gates"].is_object() &&
                          literal["gates"].contains(name);
      g = listed ? json::object() : json{{"enabled", false}};
      if (!listed) continue;
    }
    if (!g.is_object()) continue;
    fill_defaults(g, common_settings());
    if (auto it = gate_settings().find(name); it != gate_settings().end()) fill_defaults(g, it->second);
  }
  return e;
}

Bar bar_of(const std::string& gate, const std::string& key) {
  if (const Setting* s = find_setting(common_settings(), key)) return s->bar;
  if (auto it = gate_settings().find(gate); it != gate_settings().end())
    if (const Setting* s = find_setting(it->second, key)) return s->bar;
  if (gate == "build")
    if (const Setting* s = find_setting(build_settings(), key)) return s->bar;
  return Bar::Neutral;
}

Bar element_field_bar(const std::string& field) {
  if (field.rfind("max_", 0) == 0) return Bar::UpperLimit;
  if (field.rfind("min_", 0) == 0) return Bar::LowerLimit;
  return Bar::Input;  // a case's text, tokens, model, oracle; a budget's glob
}

std::string profile_sha256(const json& effective) { return sha256_hex(effective.dump()); }

}  // namespace pfx::gates

// Loosening diff of two gate profiles on effective values (see profile_diff.h).
#include "core/profile_diff.h"

#include <algorithm>
#include <map>

#include "core/profile_schema.h"

namespace pfx::gates {

using nlohmann::json;

namespace {

// One compared item: a scalar setting, one element of a list of names, one list element as a
// whole (a case, a budget) or one field inside such an element.
struct Item {
  json value;
  Bar bar = Bar::Neutral;
  std::string element;  // for a field inside a list element: the element's key ("" otherwise)
};
using Items = std::map<std::string, Item>;

// A list element's identity, so reordering a list is no change: a case's name (or oracle), a
// budget's glob, a plain string itself.
std::string element_id(const json& e, size_t index) {
  if (e.is_string()) return e.get<std::string>();
  if (e.is_object())
    for (const char* k : {"name", "oracle", "kernels", "role"})
      if (e.contains(k) && e[k].is_string()) return e[k].get<std::string>();
  return "#" + std::to_string(index);
}

void add_list(Items& out, const std::string& key, const json& list, Bar bar) {
  if (!list.is_array()) {
    out[key] = {list, bar, ""};
    return;
  }
  for (size_t i = 0; i < list.size(); ++i) {
    const auto& e = list[i];
    const std::string ek = key + "[" + element_id(e, i) + "]";
    out[ek] = {e, bar, ""};
    if (!e.is_object()) continue;
    for (const auto& [f, v] : e.items()) out[ek + "." + f] = {v, element_field_bar(f), ek};
  }
}

Items flatten(const json& eff) {
  Items out;
  for (const auto& [k, v] : eff["build"].items()) {
    if (v.is_array()) add_list(out, "build." + k, v, bar_of("build", k));
    else out["build." + k] = {v, bar_of("build", k), ""};
  }
  // A model definition is an input as a whole: another seed or file is another model.
  for (const auto& [name, m] : eff["models"].items()) out["models." + name] = {m, Bar::Input, ""};
  if (eff.contains("gpu_probe_model")) out["gpu_probe_model"] = {eff["gpu_probe_model"], Bar::Neutral, ""};
  for (const auto& [gate, settings] : eff["gates"].items()) {
    if (!settings.is_object()) continue;
    for (const auto& [k, v] : settings.items()) {
      const std::string key = "gates." + gate + "." + k;
      if (v.is_array()) add_list(out, key, v, bar_of(gate, k));
      else out[key] = {v, bar_of(gate, k), ""};
    }
  }
  // A waiver is one item (gate:match → reason), so a new waiver is one highlighted line.
  for (const auto& w : eff["waivers"])
    if (w.is_object())
      out["waivers." + w.value("gate", std::string("?")) + ":" + w.value("match", std::string("*"))] = {
          w.value("reason", std::string()), Bar::Input, ""};
  return out;
}

bool gate_on(const json& eff, const std::string& gate) {
  const auto& g = eff["gates"][gate];
  return g.is_object() && g.value("enabled", true) == true;
}

// The gate a key belongs to ("" for build, models, waivers).
std::string gate_of(const std::string& key) {
  if (key.rfind("gates.", 0) != 0) return "";
  const auto dot = key.find('.', 6);
  return key.substr(6, dot == std::string::npos ? std::string::npos : dot - 6);
}

std::string leaf_of(const std::string& key) {
  const auto dot = key.rfind('.');
  std::string leaf = dot == std::string::npos ? key : key.substr(dot + 1);
  return leaf.substr(0, leaf.find('['));
}

bool is_number(const json* j) { return j && j->is_number(); }

void classify(ProfileChange& c, const Item* before, const Item* after) {
  const Item& it = before ? *before : *after;
  const json* b = before ? &before->value : nullptr;
  const json* a = after ? &after->value : nullptr;
  const bool is_element = it.element.empty() && c.key.back() == ']';
  const bool waiver = c.key.rfind("waivers.", 0) == 0;
  auto loosen = [&](const std::string& note) {
    c.loosened = true;
    c.note = note;
  };
  if (waiver) {
    if (!b) loosen("new waiver");
    else if (a) loosen("waiver changed");
    return;
  }
  switch (it.bar) {
    case Bar::Flag:
      if (b && *b == true && (!a || *a == false))
        loosen(leaf_of(c.key) == "enabled" ? "gate disabled" : "gate made optional");
      return;
    case Bar::UpperLimit:
      if (!a) loosen("limit removed");
      else if (is_number(b) && is_number(a) && a->get<double>() > b->get<double>()) loosen("limit raised");
      return;
    case Bar::LowerLimit:
      if (!a) loosen("limit removed");
      else if (is_number(b) && is_number(a) && a->get<double>() < b->get<double>()) loosen("limit lowered");
      return;
    case Bar::Count:
      if (!a) loosen("check removed");
      else if (is_number(b) && is_number(a) && a->get<double>() < b->get<double>()) loosen("checks less: fewer " + leaf_of(c.key));
      return;
    case Bar::Exclusion:
      if (!b) loosen("more tests excluded");
      return;
    case Bar::Input:
      // More coverage (an added case, path, model or budget) is no loosening; anything else
      // changes what is checked.
      if (!a) loosen(is_element ? "dropped: " + leaf_of(c.key) + " entry" : "input removed");
      else if (b) loosen("input changed: " + leaf_of(c.key));
      // A field added inside a case (no_bos, tokens) or an added build argument changes what runs.
      else if (!it.element.empty() || c.key.rfind("build.", 0) == 0) loosen("input changed: " + leaf_of(c.key) + " added");
      return;
    case Bar::Neutral: return;
  }
}

}  // namespace

std::vector<ProfileChange> diff_profiles(const json& baseline, const json& candidate) {
  const json eb = effective_profile(baseline), ec = effective_profile(candidate);
  const Items a = flatten(eb), b = flatten(ec);
  // A gate that is off on either side: only its switch is compared (its other settings are
  // moot when it does not run, and all new when it starts running).
  auto moot = [&](const std::string& key) {
    const std::string g = gate_of(key);
    if (g.empty() || leaf_of(key) == "enabled") return false;
    return !gate_on(eb, g) || !gate_on(ec, g);
  };
  std::vector<ProfileChange> out;
  auto emit = [&](const std::string& key, const Item* before, const Item* after) {
    // A field of an element that was added or dropped as a whole is part of that one line.
    const Item& it = before ? *before : *after;
    if (!it.element.empty() && (!a.count(it.element) || !b.count(it.element))) return;
    ProfileChange c;
    c.key = key;
    if (before) c.before = before->value.dump();
    if (after) c.after = after->value.dump();
    c.kind = !before ? "added" : !after ? "removed" : "changed";
    // A list element that is an object changes through its fields: its own line is only for
    // being added or dropped.
    if (before && after && it.value.is_object() && it.element.empty() && key.back() == ']') return;
    classify(c, before, after);
    out.push_back(c);
  };
  for (const auto& [k, v] : a) {
    if (moot(k)) continue;
    auto it = b.find(k);
    if (it == b.end()) emit(k, &v, nullptr);
    else if (it->second.value != v.value) emit(k, &v, &it->second);
  }
  for (const auto& [k, v] : b)
    if (!a.count(k) && !moot(k)) emit(k, nullptr, &v);
  std::stable_sort(out.begin(), out.end(), [](const ProfileChange& x, const ProfileChange& y) { return x.loosened > y.loosened; });
  return out;
}

json to_json(const ProfileChange& c) {
  return {{"key", c.key}, {"before", c.before}, {"after", c.after}, {"kind", c.kind}, {"loosened", c.loosened}, {"note", c.note}};
}

ProfileChange profile_change_from_json(const json& j) {
  ProfileChange c;
  c.key = j.value("key", "");
  c.before = j.value("before", "");
  c.after = j.value("after", "");
  c.kind = j.value("kind", "");
  c.loosened = j.value("loosened", false);
  c.note = j.value("note", "");
  return c;
}

}  // namespace pfx::gates

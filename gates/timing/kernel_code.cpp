// SASS hashes and the traces' kernel names (see kernel_code.h).
#include "timing/kernel_code.h"

#include <fstream>
#include <sstream>

#include "util/process.h"
#include "trace/roles.h"

namespace pfx::gates {

namespace fs = std::filesystem;
using nlohmann::json;

SassHashes parse_sass_hashes(const std::string& text, const std::string& origin) {
  SassHashes h;
  h.origin = {{"file", origin}};
  json j;
  try {
    j = json::parse(text);
  } catch (const json::exception& e) {
    h.reason = origin + ": not valid JSON: " + e.what();
    return h;
  }
  if (!j.is_object() || j.value("schema", "") != "kernel-sass/1") {
    h.reason = origin + ": expected schema kernel-sass/1";
    return h;
  }
  h.origin["tool"] = j.value("tool", "");
  if (!j.value("available", false)) {
    h.reason = j.value("reason", std::string("no reason given"));
    return h;
  }
  const json kernels = j.value("kernels", json::object());  // kept alive: items() refers into it
  for (const auto& [name, hash] : kernels.items())
    if (hash.is_string()) h.by_mangled[name] = hash.get<std::string>();
  h.available = !h.by_mangled.empty();
  if (!h.available) h.reason = origin + ": lists no kernel";
  return h;
}

SassHashes load_sass_hashes(const Build& b, const fs::path& repo) {
  const fs::path file = b.prefill.parent_path() / "kernel-sass.json";
  if (!fs::exists(file)) {
    const fs::path script = repo / "scripts" / "kernel_sass.py";
    if (!fs::exists(script)) {
      SassHashes h;
      h.reason = b.label + " build has no kernel-sass.json and " + script.string() + " is not there to make one";
      return h;
    }
    ProcessSpec spec;
    spec.argv = {"python3", script.string(), "--binary", b.prefill.string(), "--out", file.string()};
    spec.timeout_s = 600;
    spec.merge_stderr_into_stdout = true;
    const auto r = run_process(spec);
    if (!r.ok() || !fs::exists(file)) {
      SassHashes h;
      h.reason = b.label + " build: scripts/kernel_sass.py " + r.describe() + ": " + r.tail(3);
      return h;
    }
  }
  std::ifstream in(file);
  std::stringstream ss;
  ss << in.rdbuf();
  return parse_sass_hashes(ss.str(), file.string());
}

void collect_trace_code(const pfx::trace::Trace& trace, TraceCode& code, bool candidate_side) {
  for (const auto& k : trace.kernels) {
    code.mangled.emplace(k.name, k.mangled);
    if (candidate_side) code.candidate_launched.insert(k.mangled);
    const auto* r = trace.find_range(k.range);
    code.role_kernels[r ? pfx::trace::role_of(r->name) : pfx::trace::kNoRangeRole].insert(k.name);
  }
}

json kernel_code_status(const TraceCode& code, const SassHashes& base, const SassHashes& cand) {
  json out = {{"kernels", json::object()}, {"roles", json::object()}};
  const bool available = base.available && cand.available;
  auto kernel_status = [&](const std::string& name) -> std::string {
    if (!available) return "unavailable";
    auto m = code.mangled.find(name);
    if (m == code.mangled.end()) return "unavailable";
    auto x = base.by_mangled.find(m->second), y = cand.by_mangled.find(m->second);
    if (x == base.by_mangled.end() || y == cand.by_mangled.end()) return "changed";  // one build lacks it
    return x->second == y->second ? "unchanged" : "changed";
  };
  for (const auto& [name, mangled] : code.mangled) out["kernels"][name] = kernel_status(name);
  for (const auto& [role, kernels] : code.role_kernels) {
    std::string st = "unchanged";
    for (const auto& k : kernels) {
      const std::string ks = kernel_status(k);
      if (ks == "unavailable") st = "unavailable";
      else if (ks == "changed" && st != "unavailable") st = "changed";
    }
    out["roles"][role] = kernels.empty() ? "unavailable" : st;
  }
  out["status"] = available ? "available" : "unavailable";
  out["reason"] = available ? "" : (!base.available ? "baseline: " + base.reason : "candidate: " + cand.reason);
  return out;
}

}  // namespace pfx::gates

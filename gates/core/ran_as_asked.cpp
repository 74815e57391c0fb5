// Did a `prefill` call run what the gate asked for (see ran_as_asked.h).
#include "core/ran_as_asked.h"

#include <algorithm>
#include <tuple>

#include "contract/prefill_cli.h"
#include "util/escape.h"
#include "util/json_read.h"

namespace pfx::gates {

using nlohmann::json;

namespace {

// The fields of the logits / greedy / bench JSON that name what ran (docs/prefill-cli.md). The
// engine writes them as literals; base/contract/prefill_cli.h has no constants for them yet.
constexpr const char* kBackend = "backend";
constexpr const char* kPath = "path";
constexpr const char* kGemm = "gemm";
constexpr const char* kDecodeGraph = "decode_graph";

const json* capability(const json& version, const char* name) {
  if (!version.is_object() || !version.contains("capabilities") || !version["capabilities"].is_object()) return nullptr;
  const json& caps = version["capabilities"];
  return caps.contains(name) ? &caps[name] : nullptr;
}

// The first entry of a capability list: the build's default where no flag chose one ("" when the
// build lists none).
std::string default_of(const json& version, const char* list) {
  const json* l = capability(version, list);
  return l && l->is_array() && !l->empty() && l->front().is_string() ? l->front().get<std::string>() : "";
}

// One selecting field as the verification sees it.
struct Selector {
  const char* field;
  bool selects = false;   // the ask chose something with it on this run
  std::string expected;   // what it chose ("": an unflagged selector of a build that lists no default)
  std::string asked_how;  // "(--gemm)", "(its default: the first of capabilities.gemm_variants)", ""
  const char* since;      // the capability that marks builds whose output names the field; "" = any
                          // build with --version --json
};

std::vector<Selector> selectors(const AskedRun& a, const json& version) {
  namespace cap = contract::capability;
  std::vector<Selector> out;
  // logits and greedy have printed backend and path since the first build with --version --json;
  // bench printed its path from the start, its backend from capabilities.bench_backends on.
  out.push_back({kBackend, !a.backend.empty(), a.backend, "", a.subcommand == "bench" ? cap::kBenchBackends : ""});
  // The path selects only on CUDA (the CPU backend reports a name of its own there).
  const bool cuda_path = a.backend == "cuda" && !a.path.empty();
  out.push_back({kPath, cuda_path, cuda_path ? a.path : "", "", ""});
  // The fast path's selectors: the flag's value, else the build's default (the first listed).
  const bool fast_cuda = a.backend == "cuda" && a.path == "fast";
  for (const auto& [field, flagged, list, flag] : {std::tuple{kGemm, a.gemm, cap::kGemmVariants, "--gemm"},
                                                   std::tuple{kDecodeGraph, a.decode_graph, cap::kDecodeGraph, "--decode-graph"}}) {
    Selector s{field, fast_cuda, "", "", list};
    if (fast_cuda) {
      s.expected = flagged.empty() ? default_of(version, list) : flagged;
      s.asked_how = flagged.empty() ? std::string("(its default: the first of capabilities.") + list + ")" : std::string("(") + flag + ")";
    }
    out.push_back(s);
  }
  return out;
}

// A build's word in a reason (a name it reported, or one its capability list gave): quoted,
// escaped and bounded; a value that is no string, by its JSON kind.
std::string quoted(const std::string& s) { return quote_untrusted(s.size() > 64 ? s.substr(0, 64) + "…" : s); }
std::string shown(const json& v) { return v.is_string() ? quoted(v.get<std::string>()) : "as " + describe_json(v).substr(0, 40); }

std::string joined(const std::vector<std::string>& items, const std::string& sep) {
  std::string out;
  for (const auto& x : items) out += (out.empty() ? "" : sep) + x;
  return out;
}

}  // namespace

json to_json(const AskedRun& a) {
  json j = {{"subcommand", a.subcommand}, {kBackend, a.backend}};
  if (!a.path.empty()) j[kPath] = a.path;
  if (!a.gemm.empty()) j[kGemm] = a.gemm;
  if (!a.decode_graph.empty()) j[kDecodeGraph] = a.decode_graph;
  return j;
}

json reported_selection(const json& output) {
  json out = json::object();
  if (!output.is_object()) return out;
  for (const char* f : {kBackend, kPath, kGemm, kDecodeGraph})
    if (output.contains(f)) out[f] = output[f];
  return out;
}

RanAsAsked& RanAsAsked::add(const RanAsAsked& other) {
  wrong.insert(wrong.end(), other.wrong.begin(), other.wrong.end());
  unchecked.insert(unchecked.end(), other.unchecked.begin(), other.unchecked.end());
  return *this;
}

std::string RanAsAsked::reason() const { return joined(wrong, "; "); }

std::string RanAsAsked::note() const {
  // Each once: every run of one build reports alike, and a gate adds up many runs.
  std::vector<std::string> once;
  for (const auto& u : unchecked)
    if (std::find(once.begin(), once.end(), u) == once.end()) once.push_back(u);
  return once.empty() ? "" : "; not verified: " + joined(once, "; ");
}

RanAsAsked verify_ran_as_asked(const AskedRun& asked, const json& reported, const json& version, const std::string& who) {
  RanAsAsked v;
  for (const auto& s : selectors(asked, version)) {
    if (!s.selects) continue;
    const std::string since = *s.since ? std::string("capabilities.") + s.since : "";
    // Why this build's output cannot name the field ("" when it must).
    const std::string older = !version.is_object()                         ? "it gave no --version --json"
                              : !since.empty() && !capability(version, s.since) ? "its --version --json predates " + since
                                                                                : "";
    const std::string not_verified = std::string(s.field) + " of " + who + " (" + older + ")";
    if (s.expected.empty()) {  // an unflagged selector of a build that lists no default
      if (!older.empty()) v.unchecked.push_back(not_verified);
      continue;
    }
    const std::string ask = who + " was asked for " + s.field + " " + quoted(s.expected) + (s.asked_how.empty() ? "" : " " + s.asked_how);
    const json* got = reported.is_object() && reported.contains(s.field) ? &reported[s.field] : nullptr;
    if (got && !got->is_null() && !(got->is_string() && got->get<std::string>().empty())) {  // "" says no more than nothing
      if (!got->is_string() || got->get<std::string>() != s.expected) v.wrong.push_back(ask + " but reports " + s.field + " " + shown(*got));
    } else if (!older.empty()) {
      v.unchecked.push_back(not_verified);
    } else {
      v.wrong.push_back(ask + " and reports no " + s.field + ", though " +
                        (since.empty() ? std::string("every build with --version --json reports it")
                                       : "its --version --json lists " + since + ", so it must") +
                        ": it did not prove what it ran");
    }
  }
  return v;
}

json ran_evidence(const AskedRun& asked, const json& reported) { return {{"asked", to_json(asked)}, {"reported", reported}}; }

}  // namespace pfx::gates

// The loosening diff on effective values (core/profile_diff.h): one test per kind of loosening the
// issue lists, each a candidate profile a reviewer must not miss, plus the changes that are not
// loosening (tightened limits, added coverage, a default spelled out).
#include <gtest/gtest.h>

#include "core/profile_diff.h"
#include "core/profile_schema.h"
#include "core/gate_profile.h"

using namespace pfx::gates;
using nlohmann::json;

namespace {

const char* kBase = R"(schema: gate-profile/1
build: {cmake_args: ["-DCMAKE_BUILD_TYPE=Release"]}
models:
  tiny: {synth: profiles/models/tiny.yaml, seed: 1}
  big: {synth: profiles/models/llama-7b-q4km.yaml, seed: 1}
gates:
  parity:
    max_rel_dev: 1.0e-3
    cases:
      - {name: a, model: tiny, text: hi}
      - {name: b, model: tiny, text: yo}
  accuracy: {min_top1: 0.95, max_nmse: 1.0e-4, paths: [fast, generic], cases: [stories260K.lily]}
  greedy: {tokens: 32, cases: [{name: g, model: tiny, text: hi}]}
  ptxas:
    budgets:
      - {kernels: "*", max_spill_bytes: 0}
      - {kernels: "k_flash*", min_blocks_per_sm: 1}
  suite: {}
  timing: {models: [tiny, big], reps: 5, role_budgets: [{role: "*", max_regression_pct: 10}]}
  ab: {model: big, max_regression_pct: 2.0, min_pairs: 6, max_pairs: 24}
waivers: []
)";

json base() { return yaml_to_json(kBase, "base"); }

// The one change the diff finds for `key`, or a failure naming what it found instead.
ProfileChange only_change(const json& a, const json& b, const std::string& key) {
  const auto changes = diff_profiles(a, b);
  std::string seen;
  for (const auto& c : changes) {
    if (c.key == key) return c;
    seen += " " + c.key;
  }
  ADD_FAILURE() << "no change for " << key << "; found:" << seen;
  return {};
}

void expect_loosened(const json& b, const std::string& key, const std::string& note_part) {
  const auto c = only_change(base(), b, key);
  EXPECT_TRUE(c.loosened) << key << " " << c.before << " → " << c.after;
  EXPECT_NE(c.note.find(note_part), std::string::npos) << key << ": note '" << c.note << "'";
}

}  // namespace

TEST(ProfileDiff, IdenticalHasNoChanges) { EXPECT_TRUE(diff_profiles(base(), base()).empty()); }

TEST(ProfileDiff, DefaultsSpelledOutAreNoChange) {
  auto b = base();
  b["gates"]["parity"]["path"] = "fast";            // the default, now written
  b["gates"]["parity"]["enabled"] = true;
  b["gates"]["greedy"]["backend"] = "auto";
  EXPECT_TRUE(diff_profiles(base(), b).empty());
}

TEST(ProfileDiff, GateDisabledWhateverTheBaselineWrote) {
  auto b = base();
  b["gates"]["parity"]["enabled"] = false;  // the baseline never spelled out `enabled: true`
  expect_loosened(b, "gates.parity.enabled", "gate disabled");
  // Its other settings are moot while it is off: one line, not one per setting.
  EXPECT_EQ(diff_profiles(base(), b).size(), 1u);
}

TEST(ProfileDiff, GateRemovedIsDisabled) {
  auto b = base();
  b["gates"].erase("ab");
  expect_loosened(b, "gates.ab.enabled", "gate disabled");
}

TEST(ProfileDiff, GateMadeOptional) {
  auto b = base();
  b["gates"]["accuracy"]["required"] = false;
  expect_loosened(b, "gates.accuracy.required", "made optional");
}

TEST(ProfileDiff, PathChangedComparesGenericWithItself) {
  auto b = base();
  b["gates"]["parity"]["path"] = "generic";
  expect_loosened(b, "gates.parity.path", "input changed");
}

TEST(ProfileDiff, ReferencePathBackendAndModelChanges) {
  for (const auto& [gate, key, value] : {std::tuple<std::string, std::string, json>{"parity", "reference_path", "fast"},
                                         {"parity", "backend", "cpu"},
                                         {"ab", "model", "tiny"},
                                         {"timing", "prompt_tokens", 16}}) {
    auto b = base();
    b["gates"][gate][key] = value;
    expect_loosened(b, "gates." + gate + "." + key, "input changed");
  }
}

TEST(ProfileDiff, CaseInputChanged) {
  auto b = base();
  b["gates"]["parity"]["cases"][0]["text"] = "something easier";
  expect_loosened(b, "gates.parity.cases[a].text", "input changed");
  auto c = base();
  c["gates"]["parity"]["cases"][0]["no_bos"] = true;  // a field added inside a case changes it too
  expect_loosened(c, "gates.parity.cases[a].no_bos", "input changed");
}

TEST(ProfileDiff, ModelDefinitionChanged) {
  auto b = base();
  b["models"]["big"]["seed"] = 2;
  expect_loosened(b, "models.big", "input changed");
}

TEST(ProfileDiff, BuildArgumentsChanged) {
  auto b = base();
  b["build"]["cmake_args"].push_back("-DPFX_FAST_GEMM=OFF");
  expect_loosened(b, "build.cmake_args[-DPFX_FAST_GEMM=OFF]", "input changed");
}

TEST(ProfileDiff, CaseDroppedIsOneLine) {
  auto b = base();
  b["gates"]["parity"]["cases"].erase(1);
  expect_loosened(b, "gates.parity.cases[b]", "dropped");
  EXPECT_EQ(diff_profiles(base(), b).size(), 1u) << "the case's fields are not listed one by one";
}

TEST(ProfileDiff, PathDropped) {
  auto b = base();
  b["gates"]["accuracy"]["paths"] = json::array({"fast"});
  expect_loosened(b, "gates.accuracy.paths[generic]", "dropped");
}

TEST(ProfileDiff, ModelDroppedFromTiming) {
  auto b = base();
  b["gates"]["timing"]["models"] = json::array({"tiny"});
  expect_loosened(b, "gates.timing.models[big]", "dropped");
}

TEST(ProfileDiff, BudgetDropped) {
  auto b = base();
  b["gates"]["ptxas"]["budgets"].erase(1);
  expect_loosened(b, "gates.ptxas.budgets[k_flash*]", "dropped");
  auto c = base();
  c["gates"]["timing"].erase("role_budgets");  // the default is no budget: dropped
  expect_loosened(c, "gates.timing.role_budgets[*]", "dropped");
}

TEST(ProfileDiff, MaxRaisedAndRemoved) {
  auto b = base();
  b["gates"]["parity"]["max_rel_dev"] = 1e-1;
  expect_loosened(b, "gates.parity.max_rel_dev", "limit raised");
  auto c = base();
  c["gates"]["ab"]["max_regression_pct"] = 5.0;
  expect_loosened(c, "gates.ab.max_regression_pct", "limit raised");
  auto d = base();
  d["gates"]["ptxas"]["budgets"][0]["max_spill_bytes"] = 64;
  expect_loosened(d, "gates.ptxas.budgets[*].max_spill_bytes", "limit raised");
  auto e = base();
  e["gates"]["ptxas"]["budgets"][1].erase("min_blocks_per_sm");
  e["gates"]["ptxas"]["budgets"][1]["max_regs"] = 255;  // a budget that still limits something
  expect_loosened(e, "gates.ptxas.budgets[k_flash*].min_blocks_per_sm", "limit removed");
}

TEST(ProfileDiff, MinLowered) {
  auto b = base();
  b["gates"]["accuracy"]["min_top1"] = 0.5;
  expect_loosened(b, "gates.accuracy.min_top1", "limit lowered");
  auto c = base();
  c["gates"]["ab"]["confidence"] = 0.8;  // narrower intervals decide "no change" sooner
  expect_loosened(c, "gates.ab.confidence", "limit lowered");
}

TEST(ProfileDiff, FewerRepsOrPairsOrTokens) {
  for (const auto& [gate, key, value] : {std::tuple<std::string, std::string, json>{"timing", "reps", 5},
                                         {"ab", "max_pairs", 8},
                                         {"ab", "min_pairs", 3},
                                         {"ab", "aa_pairs", 2},
                                         {"ab", "reps", 1},
                                         {"greedy", "tokens", 8}}) {
    auto a = base();
    a["gates"]["timing"]["reps"] = 9;  // so that 5 is fewer
    auto b = a;
    b["gates"][gate][key] = value;
    const auto c = only_change(a, b, "gates." + gate + "." + key);
    EXPECT_TRUE(c.loosened) << gate << "." << key;
    EXPECT_NE(c.note.find("fewer"), std::string::npos) << c.note;
  }
}

TEST(ProfileDiff, NewOrChangedWaiver) {
  auto b = base();
  b["waivers"].push_back({{"gate", "greedy"}, {"reason", "intended"}});
  const auto c = only_change(base(), b, "waivers.greedy:*");
  EXPECT_TRUE(c.loosened);
  EXPECT_EQ(c.note, "new waiver");
  EXPECT_EQ(c.after, "\"intended\"");
}

TEST(ProfileDiff, MoreTestsExcluded) {
  auto b = base();
  b["gates"]["suite"]["exclude_labels"] = json::array({"landing-e2e", "gpu"});
  expect_loosened(b, "gates.suite.exclude_labels[gpu]", "excluded");
}

TEST(ProfileDiff, TighteningAndMoreCoverageAreListedNotLoosened) {
  auto b = base();
  b["gates"]["accuracy"]["max_nmse"] = 1e-5;
  b["gates"]["parity"]["cases"].push_back({{"name", "c"}, {"model", "big"}, {"text", "more"}});
  b["gates"]["accuracy"]["min_top1"] = 0.99;
  b["gates"]["ab"]["max_pairs"] = 48;
  b["gates"]["parity"]["timeout_s"] = 60;
  const auto changes = diff_profiles(base(), b);
  EXPECT_EQ(changes.size(), 5u);
  for (const auto& c : changes) EXPECT_FALSE(c.loosened) << c.key << ": " << c.note;
}

TEST(ProfileDiff, LoosenedComeFirst) {
  auto b = base();
  b["gates"]["parity"]["timeout_s"] = 60;
  b["gates"]["parity"]["max_rel_dev"] = 1.0;
  const auto changes = diff_profiles(base(), b);
  ASSERT_EQ(changes.size(), 2u);
  EXPECT_TRUE(changes.front().loosened);
}

// Gate profile loading (clear errors naming file and key) and the baseline → candidate diff that
// highlights loosened thresholds and new waivers. Loads the project's real default profile too.
#include <gtest/gtest.h>

#include <filesystem>

#include "run/gate_context.h"
#include "core/gate_profile.h"
#include "util/error.h"
#include "util/fixtures.h"

using namespace pfx::gates;

namespace {
std::string error_of(const std::string& yaml) {
  try {
    GateProfile::parse(yaml, "p.yaml");
  } catch (const pfx::Error& e) {
    return e.what();
  }
  return "";
}
const char* kBase = R"(schema: gate-profile/1
gates:
  parity: {max_rel_dev: 1.0e-3, cases: [{name: a, model: tiny, text: hi}, {name: b, model: tiny, text: yo}]}
  accuracy: {min_top1: 0.95, max_nmse: 1.0e-4}
  greedy: {tokens: 32}
  ab: {required: true, max_regression_pct: 2.0}
waivers: []
)";
}  // namespace

TEST(GateProfile, ProjectDefaultLoads) {
  const auto p = GateProfile::load(std::filesystem::path(PFX_SOURCE_DIR) / "profiles/gates/default.yaml");
  for (const auto& g : known_gates()) {
    EXPECT_TRUE(p.enabled(g)) << g;
    EXPECT_TRUE(p.required(g)) << g;
  }
  EXPECT_DOUBLE_EQ(p.number("parity", "max_rel_dev", 0), 1e-3);
  EXPECT_DOUBLE_EQ(p.number("accuracy", "max_nmse", 0), 1e-4);
  EXPECT_TRUE(p.waivers().empty());
}

TEST(GateProfile, EveryProjectProfileLoadsAndNamesDefinedModels) {
  for (const auto& e : std::filesystem::directory_iterator(std::filesystem::path(PFX_SOURCE_DIR) / "profiles/gates")) {
    const auto p = GateProfile::load(e.path());
    const auto& models = p.data()["models"];
    for (const auto& g : known_gates()) {
      if (!p.enabled(g)) continue;
      for (const auto& c : p.gate(g).value("cases", nlohmann::json::array())) {
        if (c.is_object() && c.contains("model")) {
          EXPECT_TRUE(models.contains(c["model"].get<std::string>())) << e.path() << " " << g;
        }
      }
    }
    if (p.enabled("ab")) {
      EXPECT_TRUE(models.contains(p.string("ab", "model", ""))) << e.path();
    }
    EXPECT_TRUE(models.contains(p.data()["gpu_probe_model"].get<std::string>())) << e.path();
  }
}

// Every oracle case the project profiles name resolves: in the shared fixtures, or in the project's
// tests/fixtures (llama3/qwen2), with its model file present.
TEST(GateProfile, EveryOracleCaseResolvesToAFixture) {
  const std::filesystem::path project = std::filesystem::path(PFX_SOURCE_DIR) / "tests" / "fixtures";
  int from_project = 0;
  for (const auto& e : std::filesystem::directory_iterator(std::filesystem::path(PFX_SOURCE_DIR) / "profiles/gates")) {
    const auto p = GateProfile::load(e.path());
    for (const char* g : {"parity", "accuracy", "greedy"}) {
      if (!p.enabled(g)) continue;
      std::vector<GateCase> cases;
      ASSERT_NO_THROW(cases = parse_cases(p, g, pfx::fixtures_dir(), project)) << e.path() << " " << g;
      for (const GateCase& c : cases) {
        if (c.oracle.empty() || c.oracle_root != project) continue;
        ++from_project;
        ASSERT_EQ(c.model.rfind("fixture:", 0), 0u) << c.model;
        EXPECT_TRUE(std::filesystem::exists(c.model.substr(8))) << c.model;
      }
    }
  }
  EXPECT_GT(from_project, 0) << "no gate case uses the project's llama3/qwen2 fixtures";
}

TEST(GateProfile, ErrorsNameFileAndKey) {
  EXPECT_NE(error_of("gates: {}\n").find("p.yaml: key 'schema'"), std::string::npos);
  EXPECT_NE(error_of("schema: gate-profile/1\ngates: {speed: {}}\n").find("gates.speed: unknown gate"), std::string::npos);
  EXPECT_NE(error_of("schema: gate-profile/1\ngates: {}\nwaivers: [{gate: greedy}]\n").find("waivers[0]: a waiver needs a non-empty 'reason'"),
            std::string::npos);
  EXPECT_NE(error_of("schema: gate-profile/1\ngates: {parity: [1\n").find("p.yaml: line"), std::string::npos);
  const auto p = GateProfile::parse("schema: gate-profile/1\ngates: {parity: {max_rel_dev: lots}}\n", "p.yaml");
  try {
    p.number("parity", "max_rel_dev", 1);
    FAIL();
  } catch (const pfx::Error& e) {
    EXPECT_NE(std::string(e.what()).find("gates.parity.max_rel_dev: expected a number"), std::string::npos);
  }
}

TEST(GateProfile, WaiversMatchByGlob) {
  const auto p = GateProfile::parse(
      "schema: gate-profile/1\ngates: {greedy: {}}\nwaivers: [{gate: greedy, match: 'q6k-*', reason: 'r40 reorders the q6_K sum'}]\n",
      "p.yaml");
  ASSERT_NE(p.waiver_for("greedy", "q6k-lily"), nullptr);
  EXPECT_EQ(p.waiver_for("greedy", "q6k-lily")->reason, "r40 reorders the q6_K sum");
  EXPECT_EQ(p.waiver_for("greedy", "q4km-lily"), nullptr);
  EXPECT_EQ(p.waiver_for("parity", "q6k-lily"), nullptr);
}

TEST(ProfileDiff, IdenticalHasNoChanges) {
  const auto a = yaml_to_json(kBase, "a");
  EXPECT_TRUE(diff_profiles(a, a).empty());
}

TEST(ProfileDiff, LoosenedThresholdsAndNewWaiversAreFlagged) {
  const auto a = yaml_to_json(kBase, "a");
  auto b = a;
  b["gates"]["parity"]["max_rel_dev"] = 1e-1;          // raised max: loosened
  b["gates"]["accuracy"]["min_top1"] = 0.5;             // lowered min: loosened
  b["gates"]["accuracy"]["max_nmse"] = 1e-5;            // tightened: listed, not loosened
  b["gates"]["greedy"]["tokens"] = 8;                   // checks less
  b["gates"]["ab"]["required"] = false;                 // turned off
  b["gates"]["parity"]["cases"].erase(1);               // case dropped
  b["waivers"].push_back({{"gate", "greedy"}, {"reason", "intended"}});
  const auto changes = diff_profiles(a, b);
  auto find = [&](const std::string& key) -> const ProfileChange* {
    for (const auto& c : changes)
      if (c.key == key) return &c;
    return nullptr;
  };
  ASSERT_NE(find("gates.parity.max_rel_dev"), nullptr);
  EXPECT_TRUE(find("gates.parity.max_rel_dev")->loosened);
  EXPECT_EQ(find("gates.parity.max_rel_dev")->note, "limit raised");
  EXPECT_TRUE(find("gates.accuracy.min_top1")->loosened);
  ASSERT_NE(find("gates.accuracy.max_nmse"), nullptr);
  EXPECT_FALSE(find("gates.accuracy.max_nmse")->loosened);
  EXPECT_TRUE(find("gates.greedy.tokens")->loosened);
  EXPECT_TRUE(find("gates.ab.required")->loosened);
  bool case_removed = false, waiver = false;
  for (const auto& c : changes) {
    case_removed |= c.key.find("gates.parity.cases[b]") == 0 && c.loosened && c.kind == "removed";
    waiver |= c.key == "waivers.greedy:*" && c.loosened && c.note == "new waiver" && c.after == "\"intended\"";
  }
  EXPECT_TRUE(case_removed);
  EXPECT_TRUE(waiver);
  EXPECT_TRUE(changes.front().loosened);  // loosened first
}

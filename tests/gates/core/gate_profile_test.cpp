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
  EXPECT_NE(error_of("gates: {}\n").find("p.yaml: line 1: required key 'schema' is missing"), std::string::npos);
  EXPECT_NE(error_of("schema: gate-profile/1\ngates: {speed: {}}\n").find("gates.speed: unknown gate"), std::string::npos);
  EXPECT_NE(error_of("schema: gate-profile/1\ngates: {}\nwaivers: [{gate: greedy}]\n").find("waivers[0]: a waiver needs a non-empty 'reason'"),
            std::string::npos);
  EXPECT_NE(error_of("schema: gate-profile/1\ngates: {parity: [1\n").find("p.yaml: line"), std::string::npos);
  // Caught at load (core/profile_schema.h), with the line, not when a gate first reads it.
  EXPECT_NE(error_of("schema: gate-profile/1\ngates: {parity: {max_rel_dev: lots}}\n").find("line 2: gates.parity.max_rel_dev: expected a number"),
            std::string::npos);
}

// Issue 12, item 3: the candidate commit controls its gate profile. Hostile documents are
// generated here, not committed.
TEST(GateProfile, BillionLaughsIsRefusedNamingTheFile) {
  // 9 levels of 10 aliases each: 10^9 nodes expanded from ~1 KB of text.
  std::string yaml = "schema: gate-profile/1\na0: &a0 [lol, lol, lol, lol, lol, lol, lol, lol, lol, lol]\n";
  for (int i = 1; i <= 9; ++i) {
    yaml += "a" + std::to_string(i) + ": &a" + std::to_string(i) + " [";
    for (int k = 0; k < 10; ++k) yaml += (k ? ", *a" : "*a") + std::to_string(i - 1);
    yaml += "]\n";
  }
  yaml += "gates: {parity: {cases: *a9}}\n";
  ASSERT_LT(yaml.size(), 2048u);
  const std::string e = error_of(yaml);
  EXPECT_NE(e.find("p.yaml"), std::string::npos) << e;
  EXPECT_NE(e.find("more than 100000 nodes"), std::string::npos) << e;
}

TEST(GateProfile, DuplicateKeysAreRefusedWithBothLines) {
  const std::string e = error_of("schema: gate-profile/1\ngates:\n  parity: {max_rel_dev: 1.0e-3}\n  parity: {max_rel_dev: 1.0}\n");
  EXPECT_NE(e.find("p.yaml: line 4: duplicate key 'parity' (first on line 3)"), std::string::npos) << e;
  const std::string nested = error_of("schema: gate-profile/1\ngates:\n  ab: {required: true, required: false}\n");
  EXPECT_NE(nested.find("duplicate key 'required'"), std::string::npos) << nested;
}

TEST(GateProfile, MissingAndMistypedKeysNameTheLine) {
  EXPECT_NE(error_of("schema: gate-profile/1\nwaivers: []\n").find("p.yaml: line 1: required key 'gates' is missing"), std::string::npos);
  const std::string waiver = error_of("schema: gate-profile/1\ngates: {}\nwaivers:\n  - reason: because\n    match: '*'\n");
  EXPECT_NE(waiver.find("p.yaml: line 4: waivers[0]: required key 'gate' is missing"), std::string::npos) << waiver;
  const std::string unknown = error_of("schema: gate-profile/1\ngates:\n  parity: {}\n  \"speed\\e[2J\": {}\n");  // \e: ESC
  EXPECT_NE(unknown.find("p.yaml: line 4: gates.speed\\x1b[2J: unknown gate"), std::string::npos) << unknown;
  // A strict parse refuses this at load (core/profile_schema.h); a non-strict one (a baseline's
  // older profile) leaves it to the gate that reads it, which still names the line.
  const auto p = GateProfile::parse("schema: gate-profile/1\ngates:\n  parity:\n    max_rel_dev: lots\n", "p.yaml", false);
  try {
    p.number("parity", "max_rel_dev", 1);
    FAIL();
  } catch (const pfx::Error& e) {
    EXPECT_NE(std::string(e.what()).find("p.yaml: line 4: gates.parity.max_rel_dev: expected a number"), std::string::npos) << e.what();
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

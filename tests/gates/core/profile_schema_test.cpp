// The gate profile schema (core/profile_schema.h): an invalid profile is a ProfileError (landing
// exits 4) naming the key and its line; the effective profile fills every default the gates read.
#include <gtest/gtest.h>

#include "core/gate_profile.h"
#include "core/profile_schema.h"

using namespace pfx::gates;
using nlohmann::json;

namespace {

// The ProfileError message for `yaml`, or "" when it loads.
std::string error_of(const std::string& yaml) {
  try {
    GateProfile::parse(yaml, "p.yaml");
  } catch (const ProfileError& e) {
    return e.what();
  }
  return "";
}

const std::string kHead = "schema: gate-profile/1\nmodels:\n  tiny: {synth: t.yaml}\ngates:\n";

}  // namespace

TEST(ProfileSchema, UnknownKeyNamedWithItsLine) {
  const auto e = error_of(kHead + "  parity:\n    max_rel_dev: 1.0e-3\n    max_rel_deviation: 0.5\n");
  EXPECT_NE(e.find("p.yaml: line 7: gates.parity.max_rel_deviation: unknown key"), std::string::npos) << e;
  EXPECT_NE(e.find("max_rel_dev"), std::string::npos) << "lists what is expected: " << e;
  EXPECT_NE(error_of("schema: gate-profile/1\ngates: {}\nthresholds: {}\n").find("line 3: thresholds: unknown key"), std::string::npos);
  EXPECT_NE(error_of(kHead + "  parity:\n    cases: [{name: a, model: tiny, txt: hi}]\n").find("gates.parity.cases[0].txt: unknown case field"),
            std::string::npos);
}

TEST(ProfileSchema, WrongTypeNamedWithItsLine) {
  const auto e = error_of(kHead + "  greedy:\n    tokens: many\n");
  EXPECT_NE(e.find("line 6: gates.greedy.tokens: expected an integer, got \"many\""), std::string::npos) << e;
  EXPECT_NE(error_of(kHead + "  parity:\n    required: maybe\n").find("gates.parity.required: expected true or false"), std::string::npos);
  EXPECT_NE(error_of(kHead + "  accuracy:\n    paths: fast\n").find("gates.accuracy.paths: expected a list of strings"), std::string::npos);
}

TEST(ProfileSchema, NegativeThresholdRefused) {
  const auto e = error_of(kHead + "  parity:\n    max_rel_dev: -1\n");
  EXPECT_NE(e.find("line 6: gates.parity.max_rel_dev: must not be negative"), std::string::npos) << e;
  EXPECT_NE(error_of(kHead + "  ptxas:\n    budgets:\n      - {kernels: '*', max_regs: -4}\n").find("gates.ptxas.budgets[0].max_regs: must not be negative"),
            std::string::npos);
  EXPECT_NE(error_of(kHead + "  accuracy:\n    min_top1: 1.5\n").find("must be at most 1"), std::string::npos);
}

TEST(ProfileSchema, TooFewTimingRepsForTheRankTest) {
  EXPECT_NE(error_of(kHead + "  timing:\n    reps: 3\n").find("gates.timing.reps: must be at least 5"), std::string::npos);
}

TEST(ProfileSchema, UndefinedModelsAndDuplicateCases) {
  EXPECT_NE(error_of(kHead + "  ab:\n    model: huge\n").find("gates.ab.model: model 'huge' is not defined"), std::string::npos);
  EXPECT_NE(error_of(kHead + "  parity:\n    cases: [{name: a, model: nope, text: hi}]\n").find("model 'nope' is not defined"),
            std::string::npos);
  EXPECT_NE(error_of(kHead + "  parity:\n    cases: [{name: a, model: tiny, text: hi}, {name: a, model: tiny, text: yo}]\n")
                .find("case 'a' is listed twice"),
            std::string::npos);
}

TEST(ProfileSchema, EffectiveProfileFillsDefaults) {
  const auto p = GateProfile::parse(kHead + "  parity: {}\n  suite:\n  timing: {}\n", "p.yaml");
  const auto& e = p.effective();
  EXPECT_EQ(e["gates"]["parity"]["path"], "fast");
  EXPECT_EQ(e["gates"]["parity"]["reference_path"], "generic");
  EXPECT_EQ(e["gates"]["parity"]["enabled"], true);
  EXPECT_EQ(e["gates"]["parity"]["required"], true);
  EXPECT_FALSE(e["gates"]["parity"].contains("max_nmse")) << "an optional limit stays off";
  EXPECT_EQ(e["gates"]["suite"]["exclude_labels"], json::array({"landing-e2e"}));
  EXPECT_EQ(e["gates"]["ab"], json({{"enabled", false}})) << "a gate not listed is off";
  EXPECT_FALSE(p.enabled("ab"));
  EXPECT_TRUE(p.enabled("suite"));
  EXPECT_EQ(e["build"]["prefill"], "engine/cli/prefill");
  // The gates read the effective values.
  EXPECT_EQ(p.string("parity", "path", "other"), "fast");
  EXPECT_EQ(p.integer("timing", "reps", 1), 5);
}

TEST(ProfileSchema, ProfileHashCoversEffectiveValues) {
  const auto a = GateProfile::parse(kHead + "  parity: {}\n", "a.yaml");
  const auto b = GateProfile::parse(kHead + "  parity: {path: fast, max_rel_dev: 1.0e-3}\n", "b.yaml");
  const auto c = GateProfile::parse(kHead + "  parity: {max_rel_dev: 2.0e-3}\n", "c.yaml");
  EXPECT_EQ(a.sha256(), b.sha256()) << "defaults written out or left implicit: the same profile";
  EXPECT_NE(a.sha256(), c.sha256());
  EXPECT_EQ(a.sha256().size(), 64u);
}

TEST(ProfileSchema, LenientParseKeepsOldBaselinesDiffable) {
  // A baseline from before the schema (3 timing reps) still loads for the diff.
  EXPECT_NO_THROW(GateProfile::parse(kHead + "  timing:\n    reps: 3\n", "old.yaml", false));
}

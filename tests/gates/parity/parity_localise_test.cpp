// The parity gate's layer localisation, end to end on the fake `prefill` (tests/gates/landing/fake/prefill.py): a fast
// path whose residual parts from the generic one at layer 2 gets "first diverging layer blk.2"
// in its check and the gate's evidence; passing cases cost no extra runs; an engine without
// --dump-residual, a failing dump run or a rerun that does not reproduce only add a note, never
// change the verdict; only the first two failing cases are localised. And the GEMM variants: every
// case reruns on each non-default `--gemm` variant the build offers (issue 9 hole 5: no gate ran
// the fused GEMM), so a fault planted in one variant alone fails its own check; and the variants the
// baseline offered are checked whatever the candidate's list and profile say (one it no longer
// offers is INCONCLUSIVE, naming the baseline).
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <optional>
#include <sstream>
#include <string>

#include "run/gate_context.h"
#include "parity/parity_gate.h"
#include "temp_dir.h"

namespace fs = std::filesystem;
using namespace pfx::gates;
using nlohmann::json;

namespace {

bool has(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

const char* const kTwoCases = R"(
      - {name: hello, model: m, text: "hello world"}
      - {name: ids, model: m, tokens: [1, 5, 9, 11]})";

// One fake engine install (the script, its behaviour, a model file) in a fresh folder.
class ParityLocaliseTest : public pfx::test::TempDirTest {
 protected:
  void SetUp() override {
    fs::create_directories(root_ / "bin");
    fs::copy_file(PFX_FAKE_PREFILL, root_ / "bin" / "prefill");
    fs::permissions(root_ / "bin" / "prefill", fs::perms::owner_all, fs::perm_options::replace);
    std::ofstream(root_ / "model.gguf") << "not a real model: the fake engine only checks it exists\n";
  }

  // `baseline_version`: the baseline build's `--version --json` where the test sets one (null: it
  // gave none); unset, the fake's own, which lists the same gemm_variants as the candidate's.
  GateResult run(const json& behaviour, const std::string& cases = kTwoCases, const std::string& settings = "",
                 const std::optional<json>& baseline_version = std::nullopt, const std::string& waivers = "") {
    std::ofstream(root_ / "bin" / "behaviour.json") << behaviour.dump();
    fs::remove(root_ / "bin" / "calls.log");
    fs::remove_all(root_ / "work");
    const auto profile = GateProfile::parse("schema: gate-profile/1\nmodels:\n  m: {path: " + (root_ / "model.gguf").string() +
                                                "}\ngates:\n  parity:\n    max_rel_dev: 1.0e-3\n" + settings + "    cases:" + cases + "\n" +
                                                waivers,
                                            "test-profile.yaml");
    Build base = prebuilt_build("baseline", root_ / "bin", "prefill", root_, "ba5eba5eba5e");
    if (baseline_version) base.version = *baseline_version;
    const Build cand = prebuilt_build("candidate", root_ / "bin", "prefill", root_, "ca4d1da7e000");
    const Progress progress(true);
    ModelStore models(profile, cand, root_, root_ / "cache", progress);
    const GateContext ctx{"parity", profile, base, cand, root_, root_ / "cache", root_, root_ / "work",
                          progress, models, "landing gate parity (test)", Deadline(120)};
    return run_parity_gate(ctx);
  }
  // How many `logits` calls asked for a residual dump.
  int dump_calls() const {
    std::ifstream in(root_ / "bin" / "calls.log");
    int n = 0;
    for (std::string line; std::getline(in, line);) n += has(line, "\"--dump-residual\"");
    return n;
  }
};

}  // namespace

TEST_F(ParityLocaliseTest, DivergenceFromLayerTwoIsNamed) {
  const auto r = run({{"perturb_fast", 5e-3}, {"diverge_from_layer", 2}});
  ASSERT_EQ(r.status, Status::Fail) << r.reason;
  ASSERT_EQ(r.checks.size(), 2u);
  for (const auto& c : r.checks) {
    EXPECT_EQ(c.status, Status::Fail);
    EXPECT_TRUE(has(c.reason, "max rel dev 5.0")) << c.reason;
    EXPECT_TRUE(has(c.reason, "> 1.00e-03 (worst at position")) << c.reason;
    EXPECT_TRUE(has(c.reason, "; first diverging layer blk.2 (max-rel ")) << c.reason;
    EXPECT_TRUE(has(c.reason, "; blk.0-1 ≤ ")) << c.reason;
    const auto& loc = c.metrics.at("localisation");
    EXPECT_EQ(loc.at("status"), "localised");
    EXPECT_EQ(loc.at("first_diverging_layer"), 2);
    EXPECT_DOUBLE_EQ(loc.at("bound").get<double>(), 1e-5);
    ASSERT_EQ(loc.at("layers").size(), 4u);
    for (int l = 0; l < 4; ++l) {
      const auto& layer = loc["layers"][static_cast<size_t>(l)];
      EXPECT_EQ(layer.at("layer"), l);
      EXPECT_TRUE(layer.contains("nmse"));
      if (l < 2) EXPECT_LE(layer.at("max_rel").get<double>(), 1e-5);
      else EXPECT_GT(layer.at("max_rel").get<double>(), 1e-5);
    }
    EXPECT_EQ(loc.at("commands").size(), 2u);
    EXPECT_TRUE(has(loc["commands"][0].get<std::string>(), "--path fast --dump-residual ")) << loc["commands"][0];
  }
  EXPECT_TRUE(has(r.evidence, "; first diverging layer blk.2 (hello), blk.2 (ids)")) << r.evidence;
  EXPECT_TRUE(has(r.reason, "first diverging layer blk.2")) << r.reason;
  EXPECT_EQ(r.details.at("cases")[0].at("metrics").at("localisation").at("first_diverging_layer"), 2);
  EXPECT_EQ(dump_calls(), 4);  // both paths of both failing cases
  EXPECT_TRUE(fs::exists(root_ / "work" / "parity-0-fast-residual" / "blk.3.pos0.npy"));
}

TEST_F(ParityLocaliseTest, PassingCasesCostNoExtraRuns) {
  const auto r = run({{"diverge_from_layer", 2}});  // residuals differ, logits within: nothing to localise
  EXPECT_EQ(r.status, Status::Pass) << r.reason;
  EXPECT_EQ(dump_calls(), 0);
  for (const auto& c : r.checks) EXPECT_FALSE(c.metrics.contains("localisation"));
}

TEST_F(ParityLocaliseTest, EngineWithoutResidualDumpOnlyAddsANote) {
  const auto r = run({{"perturb_fast", 5e-3}, {"residual_dump", false}});
  ASSERT_EQ(r.status, Status::Fail);
  EXPECT_EQ(dump_calls(), 0);
  const auto& c = r.checks.at(0);
  EXPECT_FALSE(has(c.reason, "diverging")) << c.reason;
  EXPECT_EQ(c.metrics.at("localisation").at("status"), "unavailable");
  EXPECT_EQ(c.metrics["localisation"].at("note"), "layer localisation unavailable: this prefill has no --dump-residual");
}

TEST_F(ParityLocaliseTest, FailingDumpRunNeverChangesTheVerdict) {
  const auto without = run({{"perturb_fast", 5e-3}, {"residual_dump", false}});
  const auto r = run({{"perturb_fast", 5e-3}, {"diverge_from_layer", 2}, {"dump_fails", true}});
  EXPECT_EQ(r.status, without.status);
  EXPECT_EQ(r.reason, without.reason);
  ASSERT_EQ(r.checks.size(), without.checks.size());
  for (size_t k = 0; k < r.checks.size(); ++k) {
    EXPECT_EQ(r.checks[k].status, without.checks[k].status);
    EXPECT_EQ(r.checks[k].reason, without.checks[k].reason);
    const auto& loc = r.checks[k].metrics.at("localisation");
    EXPECT_EQ(loc.at("status"), "failed");
    EXPECT_TRUE(has(loc.at("note").get<std::string>(), "layer localisation failed: fast path with --dump-residual: exit 1"))
        << loc["note"];
  }
}

TEST_F(ParityLocaliseTest, RerunThatDoesNotReproduceIsSaid) {
  const auto r = run({{"perturb_fast", 5e-3}, {"diverge_from_layer", 2}, {"flaky", true}});
  ASSERT_EQ(r.status, Status::Fail);
  const auto& loc = r.checks.at(0).metrics.at("localisation");
  EXPECT_EQ(loc.at("status"), "not reproduced");
  EXPECT_TRUE(has(loc.at("note").get<std::string>(), "did not reproduce the failure")) << loc["note"];
  EXPECT_FALSE(has(r.checks.at(0).reason, "diverging")) << r.checks.at(0).reason;
}

TEST_F(ParityLocaliseTest, OnlyTheFirstTwoFailingCasesAreLocalised) {
  const auto r = run({{"perturb_fast", 5e-3}, {"diverge_from_layer", 1}},
                     std::string(kTwoCases) + "\n      - {name: third, model: m, tokens: [1, 2, 3]}");
  ASSERT_EQ(r.checks.size(), 3u);
  EXPECT_TRUE(has(r.checks[0].reason, "first diverging layer blk.1")) << r.checks[0].reason;
  EXPECT_TRUE(has(r.checks[1].reason, "first diverging layer blk.1")) << r.checks[1].reason;
  EXPECT_EQ(r.checks[2].status, Status::Fail);
  EXPECT_FALSE(has(r.checks[2].reason, "diverging")) << r.checks[2].reason;
  EXPECT_EQ(r.checks[2].metrics.at("localisation").at("status"), "not attempted");
  EXPECT_EQ(dump_calls(), 4);
}

TEST_F(ParityLocaliseTest, FaultInOneGemmVariantAloneFailsItsCheck) {
  // The default variant (first listed) is clean; only `fused` is wrong.
  const auto r = run({{"gemm_variants", {"pipelined", "fused"}}, {"perturb_gemm", {{"fused", 5e-3}}}, {"residual_dump", false}});
  ASSERT_EQ(r.status, Status::Fail) << r.reason;
  ASSERT_EQ(r.checks.size(), 4u);  // hello, hello gemm=fused, ids, ids gemm=fused
  EXPECT_EQ(r.checks[0].name, "hello");
  EXPECT_EQ(r.checks[0].status, Status::Pass);
  EXPECT_EQ(r.checks[1].name, "hello gemm=fused");
  EXPECT_EQ(r.checks[1].status, Status::Fail);
  EXPECT_TRUE(has(r.checks[1].command, "--gemm fused")) << r.checks[1].command;
  EXPECT_EQ(r.checks[3].name, "ids gemm=fused");
  EXPECT_EQ(r.checks[3].status, Status::Fail);
  EXPECT_TRUE(has(r.evidence, "GEMM variants: pipelined (default) on every case, fused on 2 cases")) << r.evidence;
}

TEST_F(ParityLocaliseTest, GemmVariantCasesAndNamedVariantsAreHonoured) {
  // Only `ids` reruns on the variants; a variant the build does not offer is a FAIL of its own.
  const auto r = run({{"gemm_variants", {"pipelined", "fused"}}}, kTwoCases,
                     "    gemm_variants: [fused, tiled]\n    gemm_variant_cases: [ids]\n");
  ASSERT_EQ(r.status, Status::Fail) << r.reason;
  std::vector<std::string> names;
  for (const auto& c : r.checks) names.push_back(c.name);
  EXPECT_EQ(names, (std::vector<std::string>{"gemm=tiled", "hello", "ids", "ids gemm=fused"}));
  EXPECT_EQ(r.checks[0].status, Status::Fail);
  EXPECT_TRUE(has(r.checks[0].reason, "'tiled'")) << r.checks[0].reason;
  for (size_t k = 1; k < r.checks.size(); ++k) EXPECT_EQ(r.checks[k].status, Status::Pass) << r.checks[k].name;
}

TEST_F(ParityLocaliseTest, ABuildWithoutGemmVariantsRunsItsOneFastPath) {
  const auto r = run(json::object());
  ASSERT_EQ(r.status, Status::Pass) << r.reason << " " << r.evidence;
  EXPECT_EQ(r.checks.size(), 2u);
  EXPECT_TRUE(has(r.evidence, "the candidate lists no gemm_variants")) << r.evidence;
}

namespace {

// A baseline `--version --json` offering `variants` (the fake's shape, parity_plan.h reads only this).
json baseline_offering(const json& variants) {
  return {{"name", "prefill"}, {"commit", "ba5eba5eba5e"}, {"capabilities", {{"gemm_variants", variants}}}};
}

std::vector<std::string> check_names(const GateResult& r) {
  std::vector<std::string> names;
  for (const auto& c : r.checks) names.push_back(c.name);
  return names;
}

}  // namespace

TEST_F(ParityLocaliseTest, AVariantTheBaselineOfferedAndTheCandidateDropsIsNotAPass) {
  // `staged` retired (or lost): the candidate's list no longer names it, so no run can check it. A
  // waiver for it in the candidate's own profile changes nothing.
  const auto r = run({{"gemm_variants", {"fused", "pipelined"}}}, kTwoCases, "", baseline_offering({"fused", "pipelined", "staged"}),
                     "waivers:\n  - {gate: parity, match: 'gemm=staged', reason: retired}\n");
  EXPECT_EQ(r.status, Status::Inconclusive) << r.reason;
  EXPECT_EQ(check_names(r), (std::vector<std::string>{"gemm=staged", "hello", "hello gemm=pipelined", "ids", "ids gemm=pipelined"}));
  const auto& staged = r.checks.at(0);
  EXPECT_EQ(staged.status, Status::Inconclusive);
  EXPECT_FALSE(staged.waivable);
  EXPECT_TRUE(has(staged.reason, "GEMM variant 'staged' offered by the baseline ba5eba5eba5e, not by the candidate")) << staged.reason;
  EXPECT_TRUE(has(staged.reason, "a human must accept that retirement")) << staged.reason;
  for (size_t k = 1; k < r.checks.size(); ++k) EXPECT_EQ(r.checks[k].status, Status::Pass) << r.checks[k].name;
  EXPECT_TRUE(has(r.reason, "gemm=staged: GEMM variant 'staged' offered by the baseline")) << r.reason;
  EXPECT_TRUE(has(r.evidence, "the baseline ba5eba5eba5e offered fused, pipelined, staged")) << r.evidence;
  EXPECT_TRUE(has(r.evidence, "not offered by the candidate: staged")) << r.evidence;
  EXPECT_EQ(r.details.at("gemm_variants").at("dropped"), json::array({"staged"}));
}

TEST_F(ParityLocaliseTest, TheCandidatesProfileCannotNarrowTheBaselinesVariants) {
  // The profile names `fused` alone; `pipelined`, offered by both builds, is broken and still checked.
  const auto r = run({{"gemm_variants", {"fused", "pipelined"}}, {"perturb_gemm", {{"pipelined", 5e-3}}}, {"residual_dump", false}},
                     kTwoCases, "    gemm_variants: [fused]\n", baseline_offering({"fused", "pipelined"}));
  ASSERT_EQ(r.status, Status::Fail) << r.reason;
  EXPECT_EQ(check_names(r), (std::vector<std::string>{"hello", "hello gemm=pipelined", "ids", "ids gemm=pipelined"}));
  EXPECT_EQ(r.checks.at(1).status, Status::Fail);
  EXPECT_TRUE(has(r.checks.at(1).command, "--gemm pipelined")) << r.checks.at(1).command;
  EXPECT_TRUE(has(r.evidence, "leaves them out (the baseline offered them): pipelined")) << r.evidence;
}

TEST_F(ParityLocaliseTest, ABaselineThatPredatesGemmVariantsRequiresNone) {
  // Nothing is invented: the profile's `fused` (the default) alone runs, and the note says why.
  json old_baseline = baseline_offering(nullptr);
  old_baseline["capabilities"].erase("gemm_variants");
  const auto r = run({{"gemm_variants", {"fused", "pipelined"}}}, kTwoCases, "    gemm_variants: [fused]\n", old_baseline);
  EXPECT_EQ(r.status, Status::Pass) << r.reason;
  EXPECT_EQ(check_names(r), (std::vector<std::string>{"hello", "ids"}));
  EXPECT_TRUE(has(r.evidence, "the baseline ba5eba5eba5e lists no gemm_variants (it predates the capability): it requires no GEMM "
                              "variant"))
      << r.evidence;
  const auto none = run({{"gemm_variants", {"fused", "pipelined"}}}, kTwoCases, "    gemm_variants: [fused]\n", json());
  EXPECT_EQ(check_names(none), (std::vector<std::string>{"hello", "ids"}));
  EXPECT_TRUE(has(none.evidence, "the baseline ba5eba5eba5e gave no --version --json")) << none.evidence;
}

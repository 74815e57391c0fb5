// The accuracy gate checks that the candidate ran each path it asked for (core/ran_as_asked.h), on
// the fake `prefill` (tests/gates/run/fake_builds.h) and a real oracle case of the fixtures: the
// fake answers oracle prompts with the oracle's own logits, so a build that runs its fast path
// whatever --path says would pass "cuda/generic" on the fast path's numbers.
#include <gtest/gtest.h>

#include "accuracy/accuracy_gate.h"
#include "gates/run/fake_builds.h"
#include "temp_dir.h"
#include "util/fixtures.h"

using namespace pfx::gates;
using nlohmann::json;
namespace fs = std::filesystem;

namespace {

bool has(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

const char* const kAccuracy = "gates:\n  accuracy:\n    greedy_tokens: 4\n    cases: [stories260K.lily]\n";

class AccuracyRanAsAsked : public pfx::test::TempDirTest {
 protected:
  void SetUp() override {
    if (!fs::exists(pfx::fixtures_dir() / "oracle" / "stories260K.lily.json"))
      GTEST_SKIP() << "no oracle fixtures in " << pfx::fixtures_dir() << " (set PFX_FIXTURES)";
  }
  GateResult run(const json& candidate) {
    fakes_.behave("candidate", candidate);
    return fakes_.run("accuracy", kAccuracy, run_accuracy_gate, pfx::fixtures_dir());
  }
  pfx::test::FakeBuilds fakes_{root_};
};

}  // namespace

TEST_F(AccuracyRanAsAsked, AnHonestBuildPassesBothPaths) {
  const auto r = run({{"gemm_variants", {"fused", "pipelined"}}});
  ASSERT_EQ(r.status, Status::Pass) << r.reason;
  ASSERT_EQ(r.checks.size(), 2u);
  EXPECT_EQ(r.checks[0].name, "stories260K.lily cuda/fast");
  EXPECT_EQ(r.checks[0].metrics.at("ran").at("run").at("reported").at("gemm"), "fused");
  EXPECT_EQ(r.checks[0].metrics.at("ran").at("greedy").at("reported").at("path"), "fast");
  EXPECT_EQ(r.checks[1].metrics.at("ran").at("run").at("reported").at("path"), "generic");
}

TEST_F(AccuracyRanAsAsked, APathTheBuildIgnoresIsAFail) {
  const auto r = run({{"gemm_variants", {"fused", "pipelined"}}, {"ignore_path", true}});
  ASSERT_EQ(r.status, Status::Fail) << r.reason;
  ASSERT_EQ(r.checks.size(), 2u);
  EXPECT_EQ(r.checks[0].status, Status::Pass) << r.checks[0].reason;
  const auto& generic = r.checks[1];
  EXPECT_EQ(generic.name, "stories260K.lily cuda/generic");
  EXPECT_EQ(generic.status, Status::Fail);
  EXPECT_FALSE(generic.waivable);
  EXPECT_EQ(generic.reason, "cuda/generic: the candidate ca4d1da7e000 was asked for path 'generic' but reports path 'fast'");
}

TEST_F(AccuracyRanAsAsked, AFastPathOffItsDefaultVariantIsAFail) {
  // Asked for no variant, the fast path must run the build's default: the first one it lists.
  const auto r = run({{"gemm_variants", {"fused", "pipelined"}}, {"misreport", {{"gemm", "pipelined"}}}});
  ASSERT_EQ(r.status, Status::Fail) << r.reason;
  EXPECT_TRUE(has(r.checks[0].reason, "cuda/fast: the candidate ca4d1da7e000 was asked for gemm 'fused' (its default: the first of capabilities.gemm_variants) but reports "
                                      "gemm 'pipelined'"))
      << r.checks[0].reason;
  EXPECT_EQ(r.checks[1].status, Status::Pass) << r.checks[1].reason;  // the generic path selects no variant
}

// The greedy gate checks that both builds ran what it asked (core/ran_as_asked.h), on the fake
// `prefill` (tests/gates/run/fake_builds.h): two token streams compared under the name "CUDA
// generic path" must both come from that path, and from each build's default GEMM variant; what an
// older baseline cannot report is said, not pretended.
#include <gtest/gtest.h>

#include "gates/run/fake_builds.h"
#include "greedy/greedy_gate.h"
#include "temp_dir.h"

using namespace pfx::gates;
using nlohmann::json;
using pfx::test::merged;

namespace {

bool has(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

std::string greedy_profile(const std::string& settings, const std::string& waivers) {
  return "gates:\n  greedy:\n    tokens: 8\n" + settings + "    cases:\n      - {name: hello, model: m, text: \"hello world\"}\n" + waivers;
}

const json kToday = {{"gemm_variants", {"fused", "pipelined"}}};

class GreedyRanAsAsked : public pfx::test::TempDirTest {
 protected:
  GateResult run(const json& baseline, const json& candidate, const std::string& settings = "    backend: cuda\n",
                 const std::string& waivers = "") {
    fakes_.behave("baseline", baseline);
    fakes_.behave("candidate", candidate);
    return fakes_.run("greedy", greedy_profile(settings, waivers), run_greedy_gate);
  }
  pfx::test::FakeBuilds fakes_{root_};
};

}  // namespace

TEST_F(GreedyRanAsAsked, HonestBuildsPassAndTheirReportsAreKept) {
  const auto r = run(kToday, kToday);
  ASSERT_EQ(r.status, Status::Pass) << r.reason;
  ASSERT_EQ(r.checks.size(), 1u);
  const auto& ran = r.checks[0].metrics.at("ran");
  for (const char* side : {"baseline", "candidate"}) {
    EXPECT_EQ(ran.at(side).at("reported").at("path"), "fast") << side;
    EXPECT_EQ(ran.at(side).at("reported").at("gemm"), "fused") << side;
  }
  EXPECT_FALSE(has(r.checks[0].reason, "not verified")) << r.checks[0].reason;
}

TEST_F(GreedyRanAsAsked, ACandidateOnAnotherPathThanAskedFailsNoWaiverExcuses) {
  // Asked for the generic path, the candidate runs the fast one: its tokens match, under the wrong name.
  const auto r = run(kToday, merged(kToday, {{"ignore_path", true}}),
                     "    backend: cuda\n    path: generic\n", "waivers:\n  - {gate: greedy, match: hello, reason: expected}\n");
  ASSERT_EQ(r.status, Status::Fail) << r.reason;
  const auto& c = r.checks.at(0);
  EXPECT_FALSE(c.waivable);
  EXPECT_EQ(c.reason, "the candidate ca4d1da7e000 was asked for path 'generic' but reports path 'fast'");
  EXPECT_EQ(c.metrics.at("ran").at("baseline").at("reported").at("path"), "generic");
}

TEST_F(GreedyRanAsAsked, ABaselineOffItsOwnDefaultVariantFails) {
  const auto r = run(merged(kToday, {{"misreport", {{"gemm", "pipelined"}}}}), kToday);
  ASSERT_EQ(r.status, Status::Fail) << r.reason;
  EXPECT_TRUE(has(r.checks.at(0).reason, "the baseline ba5eba5eba5e was asked for gemm 'fused' (its default: the first of "
                                         "capabilities.gemm_variants) but reports gemm 'pipelined'"))
      << r.checks.at(0).reason;
}

TEST_F(GreedyRanAsAsked, AnOlderBaselineIsNotVerifiedAndSaysSo) {
  // Before capabilities.gemm_variants a build printed no variant: the streams are still compared.
  const auto r = run({{"misreport", {{"gemm", nullptr}}}}, kToday);
  ASSERT_EQ(r.status, Status::Pass) << r.reason;
  EXPECT_TRUE(has(r.checks.at(0).reason, "; not verified: gemm of the baseline ba5eba5eba5e (its --version --json predates "
                                         "capabilities.gemm_variants)"))
      << r.checks.at(0).reason;
}

TEST_F(GreedyRanAsAsked, OnTheCpuBackendTheBackendIsChecked) {
  EXPECT_EQ(run(kToday, kToday, "    backend: cpu\n").status, Status::Pass);
  const auto r = run(kToday, merged(kToday, {{"misreport", {{"backend", "cuda"}}}}), "    backend: cpu\n");
  ASSERT_EQ(r.status, Status::Fail) << r.reason;
  EXPECT_EQ(r.checks.at(0).reason, "the candidate ca4d1da7e000 was asked for backend 'cpu' but reports backend 'cuda'");
}

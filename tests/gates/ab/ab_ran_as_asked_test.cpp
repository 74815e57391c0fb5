// The A/B gate checks that every bench ran what it asked (core/ran_as_asked.h), on the fake
// `prefill` (tests/gates/run/fake_builds.h): a bench of another variant than the build's default
// measures something else, so the gate stops with a FAIL no waiver excuses; every sample keeps
// what its bench reported (for `landing import`); an older baseline is not verified and says so.
#include <gtest/gtest.h>

#include "ab/ab_gate.h"
#include "gates/run/fake_builds.h"
#include "temp_dir.h"

using namespace pfx::gates;
using nlohmann::json;
using pfx::test::merged;

namespace {

bool has(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

// Few, noiseless pairs: the verdict is decided at the first look.
const char* const kAb = R"(gates:
  ab:
    model: m
    reps: 2
    aa_pairs: 1
    min_pairs: 2
    max_pairs: 4
    step_pairs: 2
)";

const json kToday = {{"gemm_variants", {"fused", "pipelined"}}, {"noise", 0.0}};

class AbRanAsAsked : public pfx::test::TempDirTest {
 protected:
  GateResult run(const json& baseline, const json& candidate, const std::string& waivers = "") {
    fakes_.behave("baseline", baseline);
    fakes_.behave("candidate", candidate);
    return fakes_.run("ab", std::string(kAb) + waivers, run_ab_gate);
  }
  pfx::test::FakeBuilds fakes_{root_};
};

}  // namespace

TEST_F(AbRanAsAsked, HonestBuildsPassAndEverySampleKeepsItsReport) {
  const auto r = run(kToday, kToday);
  ASSERT_EQ(r.status, Status::Pass) << r.reason;
  const auto& pairs = r.details.at("pairs");
  ASSERT_FALSE(pairs.empty());
  for (const auto& p : pairs)
    for (const char* side : {"baseline", "candidate"}) {
      EXPECT_EQ(p.at(side).at("ran").at("reported").at("gemm"), "fused") << side;
      EXPECT_EQ(p.at(side).at("ran").at("asked").at("path"), "fast") << side;
    }
  EXPECT_EQ(r.details.at("aa").at("pairs").at(0).at("candidate").at("ran").at("reported").at("path"), "fast");
  for (const auto& c : r.checks) EXPECT_FALSE(has(c.reason, "not verified")) << c.reason;
}

TEST_F(AbRanAsAsked, ACandidateBenchOfAnotherVariantStopsTheGateNoWaiverExcuses) {
  const auto r = run(kToday, merged(kToday, {{"misreport", {{"gemm", "pipelined"}}}}),
                     "waivers:\n  - {gate: ab, match: ab, reason: slower on purpose}\n");
  ASSERT_EQ(r.status, Status::Fail) << r.reason;
  ASSERT_EQ(r.checks.size(), 1u);
  EXPECT_FALSE(r.checks[0].waivable);
  EXPECT_EQ(r.checks[0].reason,
            "candidate bench warm-up: the candidate ca4d1da7e000 was asked for gemm 'fused' (its default: the first of "
            "capabilities.gemm_variants) but reports gemm 'pipelined'");
  EXPECT_EQ(fakes_.calls("candidate").size(), 2u);  // its --version --json and the one warm-up
}

TEST_F(AbRanAsAsked, AnOlderBaselineIsNotVerifiedAndSaysSo) {
  // Before capabilities.bench_backends and gemm_variants a bench printed neither.
  const auto r = run({{"noise", 0.0}, {"misreport", {{"gemm", nullptr}, {"backend", nullptr}}}}, kToday);
  ASSERT_EQ(r.status, Status::Pass) << r.reason;
  EXPECT_TRUE(has(r.checks.at(0).reason,
                  "; not verified: backend of the baseline ba5eba5eba5e (its --version --json predates capabilities.bench_backends); "
                  "gemm of the baseline ba5eba5eba5e (its --version --json predates capabilities.gemm_variants)"))
      << r.checks.at(0).reason;
}

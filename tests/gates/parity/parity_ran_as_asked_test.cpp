// The parity gate checks that the candidate ran what each run asked (core/ran_as_asked.h), on the
// fake `prefill` (tests/gates/run/fake_builds.h): a build that accepts `--gemm pipelined` and runs
// its default would otherwise pass "gemm=pipelined" on the default's logits, one that reports no
// variant proves nothing, and one that runs its fast path when asked for the generic one makes
// every case compare a path with itself. An honest build passes as before.
#include <gtest/gtest.h>

#include "gates/run/fake_builds.h"
#include "parity/parity_gate.h"
#include "temp_dir.h"

using namespace pfx::gates;
using nlohmann::json;

namespace {

bool has(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

const char* const kParity = R"(gates:
  parity:
    max_rel_dev: 1.0e-3
    cases:
      - {name: hello, model: m, text: "hello world"}
      - {name: ids, model: m, tokens: [1, 5, 9, 11]}
)";

// A build of today: two GEMM variants, the default first (no residual dump: nothing to localise).
json variants(const json& extra = json::object()) {
  return pfx::test::merged({{"gemm_variants", {"fused", "pipelined"}}, {"residual_dump", false}}, extra);
}

class ParityRanAsAsked : public pfx::test::TempDirTest {
 protected:
  GateResult run(const json& candidate, const std::string& waivers = "") {
    fakes_.behave("baseline", variants());
    fakes_.behave("candidate", candidate);
    return fakes_.run("parity", std::string(kParity) + waivers, run_parity_gate);
  }
  const Check& check(const GateResult& r, const std::string& name) {
    for (const auto& c : r.checks)
      if (c.name == name) return c;
    throw std::runtime_error("no check " + name);
  }
  pfx::test::FakeBuilds fakes_{root_};
};

}  // namespace

TEST_F(ParityRanAsAsked, AnHonestBuildPassesAndTheReportsAreKept) {
  const auto r = run(variants());
  ASSERT_EQ(r.status, Status::Pass) << r.reason;
  ASSERT_EQ(r.checks.size(), 4u);
  const auto& piped = check(r, "hello gemm=pipelined");
  EXPECT_EQ(piped.metrics.at("ran").at("run").at("reported").at("gemm"), "pipelined");
  EXPECT_EQ(piped.metrics.at("ran").at("run").at("asked").at("gemm"), "pipelined");
  EXPECT_EQ(piped.metrics.at("ran").at("reference").at("reported").at("path"), "generic");
  EXPECT_EQ(check(r, "hello").metrics.at("ran").at("run").at("reported").at("gemm"), "fused");  // the default, asked unflagged
  for (const auto& c : r.checks) EXPECT_FALSE(has(c.reason, "not verified")) << c.name << ": " << c.reason;
}

TEST_F(ParityRanAsAsked, AVariantFlagTheBuildIgnoresIsAFailNoWaiverExcuses) {
  // `pipelined` is broken, but this build runs its default whatever --gemm says: its pipelined
  // checks would pass on fused's logits. A waiver in its own profile changes nothing.
  const json liar = variants({{"perturb_gemm", {{"pipelined", 5e-3}}}, {"ignore_gemm", true}});
  const auto r = run(liar, "waivers:\n  - {gate: parity, match: '* gemm=pipelined', reason: known}\n");
  ASSERT_EQ(r.status, Status::Fail) << r.reason;
  for (const char* name : {"hello gemm=pipelined", "ids gemm=pipelined"}) {
    const auto& c = check(r, name);
    EXPECT_EQ(c.status, Status::Fail) << name;
    EXPECT_FALSE(c.waivable) << name;
    EXPECT_TRUE(has(c.reason, "the candidate ca4d1da7e000 was asked for gemm 'pipelined' (--gemm) but reports gemm 'fused'")) << c.reason;
    EXPECT_EQ(c.metrics.at("ran").at("run").at("reported").at("gemm"), "fused");
  }
  EXPECT_EQ(check(r, "hello").status, Status::Pass);
  EXPECT_EQ(check(r, "ids").status, Status::Pass);
  // The same broken variant, honestly run: the logits fail it, and the waiver may excuse that.
  const auto honest = run(variants({{"perturb_gemm", {{"pipelined", 5e-3}}}}), "waivers:\n  - {gate: parity, match: '* gemm=pipelined', reason: known}\n");
  EXPECT_EQ(check(honest, "hello gemm=pipelined").status, Status::Waived) << check(honest, "hello gemm=pipelined").reason;
}

TEST_F(ParityRanAsAsked, ABuildThatListsVariantsAndReportsNoneProvesNothing) {
  const auto r = run(variants({{"misreport", {{"gemm", nullptr}}}}));
  ASSERT_EQ(r.status, Status::Fail) << r.reason;
  ASSERT_EQ(r.checks.size(), 4u);
  for (const auto& c : r.checks) {
    EXPECT_EQ(c.status, Status::Fail) << c.name;
    EXPECT_FALSE(c.waivable) << c.name;
    EXPECT_TRUE(has(c.reason, "reports no gemm, though its --version --json lists capabilities.gemm_variants, so it must: it did not "
                              "prove what it ran"))
        << c.name << ": " << c.reason;
  }
  EXPECT_TRUE(has(check(r, "ids gemm=pipelined").reason, "was asked for gemm 'pipelined' (--gemm)")) << check(r, "ids gemm=pipelined").reason;
  EXPECT_TRUE(has(check(r, "ids").reason, "was asked for gemm 'fused' (its default: the first of capabilities.gemm_variants)"))
      << check(r, "ids").reason;
}

TEST_F(ParityRanAsAsked, ABuildThatPredatesGemmVariantsIsNotVerifiedAndSaysSo) {
  // Nothing to run by name and nothing it could report: the checks pass on their logits and say so.
  fakes_.behave("baseline", json::object());
  fakes_.behave("candidate", {{"residual_dump", false}, {"misreport", {{"gemm", nullptr}}}});
  const auto r = fakes_.run("parity", kParity, run_parity_gate);
  ASSERT_EQ(r.status, Status::Pass) << r.reason;
  for (const auto& c : r.checks)
    EXPECT_TRUE(has(c.reason, "; not verified: gemm of the candidate ca4d1da7e000 (its --version --json predates "
                              "capabilities.gemm_variants)"))
        << c.name << ": " << c.reason;
}

TEST_F(ParityRanAsAsked, AReferenceRunOnTheFastPathIsAFail) {
  // Asked for --path generic, this build runs (and says) fast: both sides of every case are the
  // same broken path, and their logits agree.
  const auto r = run(variants({{"ignore_path", true}, {"perturb_fast", 5e-3}}));
  ASSERT_EQ(r.status, Status::Fail) << r.reason;
  ASSERT_EQ(r.checks.size(), 4u);
  for (const auto& c : r.checks) {
    EXPECT_EQ(c.status, Status::Fail) << c.name;
    EXPECT_FALSE(c.waivable) << c.name;
    EXPECT_TRUE(has(c.reason, "generic path: the candidate ca4d1da7e000 was asked for path 'generic' but reports path 'fast'"))
        << c.name << ": " << c.reason;
    EXPECT_TRUE(has(c.command, "--path generic")) << c.command;
  }
}

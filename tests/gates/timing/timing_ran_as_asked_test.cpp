// The timing gate checks that every traced bench ran what it asked (core/ran_as_asked.h), on the
// fake `prefill` (tests/gates/run/fake_builds.h) under a stand-in tracer (fake_trace.py: a recorded
// trace, the bench's JSON passed through): a trace of another variant than the build's default
// times something else, so its model FAILs, no waiver excusing it; each model's evidence keeps
// what every run reported (for `landing import`); an older baseline is not verified and says so.
#include <gtest/gtest.h>

#include <filesystem>

#include "gates/run/fake_builds.h"
#include "temp_dir.h"
#include "timing/timing_gate.h"

using namespace pfx::gates;
using nlohmann::json;
using pfx::test::merged;
namespace fs = std::filesystem;

namespace {

bool has(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

const char* const kTiming = "gates:\n  timing:\n    models: [m]\n    reps: 5\n    warmup: 0\n    prompt_tokens: 16\n";

const json kToday = {{"gemm_variants", {"fused", "pipelined"}}};

class TimingRanAsAsked : public pfx::test::TempDirTest {
 protected:
  void SetUp() override {
    fs::create_directories(root_ / "tracer");
    fs::copy_file(PFX_FAKE_TRACE, root_ / "tracer" / "landing");
    fs::permissions(root_ / "tracer" / "landing", fs::perms::owner_all, fs::perm_options::replace);
    fs::copy_file(fs::path(PFX_TRACE_DATA) / "engine_a.trace.json", root_ / "tracer" / "trace.json");
  }
  GateResult run(const json& baseline, const json& candidate, const std::string& waivers = "") {
    fakes_.behave("baseline", baseline);
    fakes_.behave("candidate", candidate);
    const fs::path landing = root_ / "tracer" / "landing";
    return fakes_.run("timing", std::string(kTiming) + waivers, [&](const GateContext& ctx) { return run_timing_gate(ctx, landing); });
  }
  static const Check& model_check(const GateResult& r) {
    for (const auto& c : r.checks)
      if (c.name == "m") return c;
    throw std::runtime_error("no check m");
  }
  pfx::test::FakeBuilds fakes_{root_};
};

}  // namespace

TEST_F(TimingRanAsAsked, HonestBuildsAreTimedAndEveryRunKeepsItsReport) {
  const auto r = run(kToday, kToday);
  const Check& m = model_check(r);
  ASSERT_EQ(m.status, Status::Pass) << m.reason;
  EXPECT_FALSE(has(m.reason, "not verified")) << m.reason;
  const auto& ran = r.details.at("models").at(0).at("ran");
  for (const char* side : {"baseline", "candidate"}) {
    ASSERT_EQ(ran.at(side).size(), 5u) << side;
    for (const auto& e : ran.at(side)) {
      EXPECT_EQ(e.at("reported").at("gemm"), "fused") << side;
      EXPECT_EQ(e.at("asked").at("path"), "fast") << side;
    }
  }
}

TEST_F(TimingRanAsAsked, ATraceOfAnotherVariantFailsItsModelNoWaiverExcuses) {
  const auto r = run(kToday, merged(kToday, {{"misreport", {{"gemm", "pipelined"}}}}),
                     "waivers:\n  - {gate: timing, match: m, reason: slower on purpose}\n");
  ASSERT_EQ(r.status, Status::Fail) << r.reason;
  const Check& m = model_check(r);
  EXPECT_EQ(m.status, Status::Fail);
  EXPECT_FALSE(m.waivable);
  EXPECT_EQ(m.reason, "candidate traced bench: the candidate ca4d1da7e000 was asked for gemm 'fused' (its default: the first of "
                      "capabilities.gemm_variants) but reports gemm 'pipelined'");
  EXPECT_TRUE(has(m.command, "trace -o ")) << m.command;
  EXPECT_FALSE(r.details.contains("models"));  // nothing of it was timed
}

TEST_F(TimingRanAsAsked, AnOlderBaselineIsNotVerifiedAndSaysSo) {
  const auto r = run({{"misreport", {{"gemm", nullptr}, {"backend", nullptr}}}}, kToday);
  const Check& m = model_check(r);
  ASSERT_EQ(m.status, Status::Pass) << m.reason;
  EXPECT_TRUE(has(m.reason, "; not verified: backend of the baseline ba5eba5eba5e (its --version --json predates "
                            "capabilities.bench_backends); gemm of the baseline ba5eba5eba5e (its --version --json predates "
                            "capabilities.gemm_variants)"))
      << m.reason;
}

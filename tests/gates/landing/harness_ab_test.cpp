// Two holes of issue 9 on CPU: the candidate judging itself (hole 3: landing/harness.h — the
// baseline build's landing, or an explicit --harness, judges; one built from the candidate, one
// that predates pinning, or none at all is recorded NOT pinned) and an A/B budget that bends (hole
// 7: ab/ab_judge.h — noisy pairs straddling the 2% budget stay INCONCLUSIVE at the cap, the reason
// names the unwidened budget, and the one Δ is the paired median of ratios).
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "ab/ab_judge.h"
#include "landing/harness.h"
#include "util/error.h"
#include "temp_dir.h"

namespace fs = std::filesystem;
using namespace pfx::gates;
using nlohmann::json;

namespace {

const std::string kBaseSha = "ba5e000000000000000000000000000000000001", kCandSha = "c0ffee0000000000000000000000000000000001";

// A build folder whose gates/landing/landing is a script answering `--version --json` as a landing
// of `commit` would (with or without the pinning capability).
fs::path fake_build(const fs::path& root, const std::string& name, const std::string& commit, bool can_pin) {
  const fs::path dir = root / name;
  fs::create_directories(dir / "gates" / "landing");
  const fs::path exe = dir / "gates" / "landing" / "landing";
  const json v = {{"name", "landing"}, {"version", "0.1.0"}, {"commit", commit}, {"dirty", false},
                  {"capabilities", {{"judging", can_pin ? json::array({"harness"}) : json::array()}}}};
  std::ofstream(exe) << "#!/bin/sh\necho '" << v.dump() << "'\n";
  fs::permissions(exe, fs::perms::owner_all, fs::perm_options::replace);
  // A prefill that cannot answer: the harness plan never asks it.
  fs::create_directories(dir / "engine" / "cli");
  std::ofstream(dir / "engine" / "cli" / "prefill") << "#!/bin/sh\nexit 1\n";
  fs::permissions(dir / "engine" / "cli" / "prefill", fs::perms::owner_all, fs::perm_options::replace);
  return dir;
}

Build build(const std::string& label, const fs::path& dir, const std::string& sha) {
  Build b = prebuilt_build(label, dir, "engine/cli/prefill", dir, sha.substr(0, 12));
  b.sha = sha;
  return b;
}

// Each test in a fresh folder, root_.
class Harness : public pfx::test::TempDirTest {};

}  // namespace

TEST_F(Harness, BaselinesLandingJudgesAndIsPinned) {
  const auto base = build("baseline", fake_build(root_, "base", kBaseSha, true), kBaseSha);
  const auto cand = build("candidate", fake_build(root_, "cand", kCandSha, true), kCandSha);
  const auto plan = plan_harness({}, false, base, cand);
  ASSERT_TRUE(plan.exec.has_value()) << "this test binary is not the harness: it hands over";
  EXPECT_EQ(*plan.exec, base.dir / "gates" / "landing" / "landing");
  EXPECT_TRUE(plan.id.pinned) << plan.id.how;
  EXPECT_EQ(plan.id.commit, kBaseSha);
  EXPECT_EQ(plan.id.sha256.size(), 64u);
}

TEST_F(Harness, CandidatesOwnLandingIsNeverPinned) {
  const auto base = build("baseline", fake_build(root_, "base", kBaseSha, true), kBaseSha);
  const auto cand = build("candidate", fake_build(root_, "cand", kCandSha, true), kCandSha);
  const auto plan = plan_harness(cand.dir, false, base, cand);
  EXPECT_FALSE(plan.id.pinned);
  EXPECT_NE(plan.id.how.find("built from the candidate commit"), std::string::npos) << plan.id.how;
}

TEST_F(Harness, BaselineBeforePinningLeavesTheReportUnpinned) {
  const auto base = build("baseline", fake_build(root_, "base", kBaseSha, false), kBaseSha);
  const auto cand = build("candidate", fake_build(root_, "cand", kCandSha, true), kCandSha);
  const auto plan = plan_harness({}, false, base, cand);
  EXPECT_FALSE(plan.exec.has_value());
  EXPECT_FALSE(plan.id.pinned);
  EXPECT_NE(plan.id.how.find("predates harness pinning"), std::string::npos) << plan.id.how;
  // An explicit harness that cannot pin is refused outright.
  EXPECT_THROW(plan_harness(base.dir, false, base, cand), pfx::Error);
  // One from a third, reviewed commit is pinned.
  const auto third = fake_build(root_, "reviewed", "3333333333333333333333333333333333333333", true);
  EXPECT_TRUE(plan_harness(third, false, base, cand).id.pinned);
}

namespace {

// Pairs of tok/s whose per-pair ratios are `ratios` (baseline 1000 tok/s).
json pairs_of(const std::vector<double>& ratios) {
  json p = json::array();
  for (double r : ratios)
    p.push_back({{"baseline", {{"tps", {{"pp512", 1000.0}}}}}, {"candidate", {{"tps", {{"pp512", 1000.0 * r}}}}}, {"throttled", false}});
  return p;
}

}  // namespace

TEST(AbBudget, NoisyPairsAroundTheBudgetStayInconclusiveNeverWidened) {
  AbSettings s;
  s.metrics = {s.primary};
  // −2% median with ±4% noise: the interval straddles −2%; a noise-widened threshold (the old
  // max(2%, A/A noise)) would have called this PASS.
  const json pairs = pairs_of({0.94, 1.02, 0.98, 0.95, 1.03, 0.97, 0.99, 0.96, 1.01, 0.98, 0.94, 1.02});
  json headline;
  const auto checks = judge_ab(pairs, s, headline);
  ASSERT_EQ(checks.size(), 1u);
  EXPECT_EQ(checks[0].status, Status::Inconclusive) << checks[0].reason;
  EXPECT_NE(checks[0].reason.find("straddles −2.00%"), std::string::npos) << checks[0].reason;
  EXPECT_NE(checks[0].reason.find("the budget is not widened"), std::string::npos) << checks[0].reason;
  EXPECT_TRUE(ab_undecided(analyse_ab_metric(pairs, "pp512", s))) << "the gate would take more pairs";
}

TEST(AbBudget, OneDeltaThePairedMedianOfRatios) {
  AbSettings s;
  s.metrics = {s.primary};
  // Ratio of medians would be +0.0%; the paired median of ratios is −1.0%.
  json pairs = json::array();
  const std::vector<std::pair<double, double>> ab = {{1000, 990}, {1100, 1089}, {900, 891}, {1000, 990}, {1000, 990}, {1050, 1039.5}};
  for (const auto& [a, b] : ab)
    pairs.push_back({{"baseline", {{"tps", {{"pp512", a}}}}}, {"candidate", {{"tps", {{"pp512", b}}}}}, {"throttled", false}});
  json headline;
  const auto checks = judge_ab(pairs, s, headline);
  EXPECT_NEAR(headline["delta_pct"].get<double>(), -1.0, 1e-9);
  EXPECT_NEAR(checks[0].metrics["median_delta_pct"].get<double>(), -1.0, 1e-9);
  EXPECT_EQ(headline["delta"], "paired median of per-pair ratios");
  GateResult r;
  r.gate = "ab";
  r.details["pairs"] = pairs;
  add_ab_figures(r, s);
  ASSERT_NE(r.headline(), nullptr);
  EXPECT_NEAR(*r.headline()->delta_pct, -1.0, 1e-9) << "the report's headline shows the gate's Δ";
}

namespace pfx::gates {
namespace {

// The hand-over names the commits this process resolved, so a commit made during the build (HEAD
// moved) is not what the harness judges; worktree sides (empty sha) and other options pass as given.
TEST(HarnessHandOver, PinsTheRevisionsItResolved) {
  const std::vector<std::string> argv = {"run", "--baseline", "HEAD~1", "--candidate=HEAD", "--gates", "g.yaml"};
  EXPECT_EQ(pin_revisions(argv, "aaa111", "bbb222"),
            (std::vector<std::string>{"run", "--baseline", "aaa111", "--candidate=bbb222", "--gates", "g.yaml"}));
  EXPECT_EQ(pin_revisions(argv, "aaa111", ""),
            (std::vector<std::string>{"run", "--baseline", "aaa111", "--candidate=HEAD", "--gates", "g.yaml"}));
  const std::vector<std::string> prebuilt = {"gate", "ab", "--baseline-build", "b", "--candidate-build", "c"};
  EXPECT_EQ(pin_revisions(prebuilt, "aaa111", "bbb222"), prebuilt);
}

}  // namespace
}  // namespace pfx::gates

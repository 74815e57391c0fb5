// landing's command-line conventions (gates/landing/landing_cli.h): one exit-code table, --version,
// per-subcommand --help and options, validation before anything is built, the A/A warning, and
// repeated reasons printed once. Runs the real `landing` in a throwaway repository.
#include <gtest/gtest.h>

#include <filesystem>

#include "landing/gate_lines.h"
#include "throwaway_repo.h"

namespace fs = std::filesystem;
using namespace pfx;
using namespace pfx::gates;

namespace {
// Unlike why(): the whole of stderr.
std::string why_all(const ProcessResult& p) { return "exit " + p.describe() + "\nstdout:\n" + p.out + "\nstderr:\n" + p.err; }
}  // namespace

TEST(LandingCli, VersionPlainAndJson) {
  ThrowawayRepo repo("cli-version");
  const auto plain = repo.landing({"--version"});
  ASSERT_EQ(plain.exit_code, 0) << why_all(plain);
  EXPECT_TRUE(has(plain.out, "landing ")) << plain.out;
  const auto j = repo.landing({"--version", "--json"});
  ASSERT_EQ(j.exit_code, 0) << why_all(j);
  const auto v = nlohmann::json::parse(j.out);
  EXPECT_EQ(v["name"], "landing");
  EXPECT_FALSE(v["commit"].get<std::string>().empty());
  EXPECT_EQ(repo.landing({"--version", "--yaml"}).exit_code, 4);
}

TEST(LandingCli, EachSubcommandHelpListsOnlyItsOptionsAndTheExitTable) {
  ThrowawayRepo repo("cli-help");
  const auto top = repo.landing({"--help"});
  ASSERT_EQ(top.exit_code, 0);
  for (const char* code : {"0  OK", "1  FAIL", "2  INCOMPLETE", "3  UNAVAILABLE", "4  USAGE", "5  ERROR"})
    EXPECT_TRUE(has(top.out, code)) << code << "\n" << top.out;
  const auto run = repo.landing({"run", "--help"});
  ASSERT_EQ(run.exit_code, 0) << why_all(run);
  EXPECT_TRUE(has(run.out, "usage: landing run"));
  EXPECT_TRUE(has(run.out, "--baseline"));
  EXPECT_FALSE(has(run.out, "--into")) << "import's option in run's help";
  EXPECT_FALSE(has(run.out, "--baseline-build")) << "gate's option in run's help";
  EXPECT_TRUE(has(run.out, "4  USAGE"));
  const auto imp = repo.landing({"import", "--help"});
  ASSERT_EQ(imp.exit_code, 0);
  EXPECT_TRUE(has(imp.out, "--into"));
  EXPECT_FALSE(has(imp.out, "--baseline")) << imp.out;
  const auto gate = repo.landing({"gate", "--help"});
  EXPECT_TRUE(has(gate.out, "--baseline-build")) << gate.out;
  // Another subcommand's option is an unknown option here.
  const auto wrong = repo.landing({"run", "--baseline", "HEAD", "--candidate", "HEAD", "--into", "x"});
  EXPECT_EQ(wrong.exit_code, 4) << why_all(wrong);
  EXPECT_TRUE(has(wrong.err, "--into")) << wrong.err;
}

TEST(LandingCli, BadArgumentsAreRefusedBeforeAnythingIsBuilt) {
  ThrowawayRepo repo("cli-validate");
  const auto nosuch = repo.landing({"gate", "nosuch", "--baseline", "HEAD", "--candidate", "HEAD", "--gates", "landing.yaml"});
  EXPECT_EQ(nosuch.exit_code, 4) << why_all(nosuch);
  EXPECT_TRUE(has(nosuch.err, "unknown gate 'nosuch'")) << nosuch.err;
  EXPECT_TRUE(has(nosuch.err, "parity")) << "names what it expected: " << nosuch.err;
  EXPECT_FALSE(fs::exists(repo.dir() / ".landing" / "build")) << "built before refusing";
  EXPECT_EQ(repo.landing({"gate", "--baseline", "HEAD", "--candidate", "HEAD"}).exit_code, 4);  // no gate named
  EXPECT_EQ(repo.landing({"gate", "parity", "--baseline-build", "x"}).exit_code, 4);           // half a pair
  EXPECT_EQ(repo.landing({"gate", "parity", "--baseline", "HEAD", "--candidate", "HEAD", "--baseline-build", "a",
                          "--candidate-build", "b"}).exit_code, 4);                              // both kinds
  EXPECT_EQ(repo.landing({"run", "--baseline", "HEAD", "--candidate", "HEAD", "extra"}).exit_code, 4);
  // The suite's GPU-host share: suite only, plain labels only (they become a ctest regex).
  EXPECT_EQ(repo.landing({"gate", "parity", "--baseline", "HEAD", "--candidate", "HEAD", "--suite-labels", "gpu"}).exit_code, 4);
  const auto bad_label = repo.landing({"gate", "suite", "--baseline", "HEAD", "--candidate", "HEAD", "--suite-labels", "gpu|.*"});
  EXPECT_EQ(bad_label.exit_code, 4) << why_all(bad_label);
  EXPECT_TRUE(has(bad_label.err, "--suite-labels: expected CTest labels")) << bad_label.err;
  EXPECT_EQ(repo.landing({"run", "--baseline", "HEAD", "--candidate", "HEAD", "--suite-labels", "gpu"}).exit_code, 4);
  EXPECT_EQ(repo.landing({"report"}).exit_code, 4);
  EXPECT_EQ(repo.landing({"import"}).exit_code, 4);
  EXPECT_FALSE(fs::exists(repo.dir() / ".landing" / "build"));
}

TEST(LandingCli, SameBaselineAndCandidateIsWarnedAbout) {
  ThrowawayRepo repo("cli-same");
  repo.behave({{"cuda", false}});
  repo.commit("no GPU");
  const auto p = repo.landing({"gate", "ptxas", "--baseline", "HEAD", "--candidate", "WORKTREE", "--gates", "landing.yaml", "--quiet"});
  ASSERT_EQ(p.exit_code, 0) << why_all(p);
  EXPECT_TRUE(has(p.err, "warning: the baseline and the candidate are the same")) << p.err;
  repo.write("new.txt", "an uncommitted change\n");
  const auto q = repo.landing({"gate", "ptxas", "--baseline", "HEAD", "--candidate", "WORKTREE", "--gates", "landing.yaml", "--quiet"});
  ASSERT_EQ(q.exit_code, 0) << why_all(q);
  EXPECT_FALSE(has(q.err, "are the same")) << q.err;
}

TEST(LandingCli, RepeatedReasonIsPrintedOnce) {
  const std::string cause = "unavailable here (exit 3): prefill: no usable CUDA GPU here (no NVIDIA driver on this machine)";
  EXPECT_EQ(shorten_repeated("2 of 2 checks skipped: cuda/fast: " + cause, "1 of 1 checks skipped: fast path: " + cause, "parity"),
            "2 of 2 checks skipped: cuda/fast: … (as for parity)");
  EXPECT_EQ(shorten_repeated("x: " + cause, "x: " + cause, "parity"), "the same as parity");
  EXPECT_EQ(shorten_repeated("all 2 checks passed", "all 2 checks passed", "greedy"), "all 2 checks passed")
      << "short reasons are kept whole";
  EXPECT_EQ(shorten_repeated("ends in a different way", "nothing in common", "g"), "ends in a different way");
  std::vector<GateResult> gates(3);
  gates[0].gate = "parity";
  gates[0].status = Status::Skipped;
  gates[0].reason = "fast path: " + cause;
  gates[1].gate = "accuracy";
  gates[1].status = Status::Skipped;
  gates[1].reason = "cuda/fast: " + cause;
  gates[2].gate = "greedy";
  gates[2].status = Status::Pass;
  gates[2].reason = "all 2 checks passed";
  const std::string lines = gate_lines(gates);
  EXPECT_EQ(lines.find("no NVIDIA driver"), lines.rfind("no NVIDIA driver")) << lines;
  EXPECT_TRUE(has(lines, "  accuracy: SKIPPED — cuda/fast: … (as for parity)\n")) << lines;
}

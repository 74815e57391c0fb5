// landing bisect on a throwaway repository with the fake engine: a regression planted in one
// commit of a run of harmless ones is found by the gate that catches it (parity for a logit
// perturbation, ab for a slowdown, a --metric narrowing to one check), every step's evidence is
// kept, untestable commits are skipped, and ends that do not differ are refused.
#include <gtest/gtest.h>

#include <filesystem>

#include "landing/bisect.h"
#include "throwaway_repo.h"

namespace fs = std::filesystem;
using namespace pfx;
using namespace pfx::gates;
using nlohmann::json;

namespace {

// base, then `before` harmless commits, the planted one, `after` harmless ones; returns the planted SHA.
std::string plant(const ThrowawayRepo& repo, const json& misbehaviour, int before, int after) {
  for (int i = 0; i < before; ++i) repo.commit("harmless change " + std::to_string(i));
  repo.behave(misbehaviour);
  const std::string planted = repo.commit("the planted regression");
  for (int i = 0; i < after; ++i) {
    repo.write("notes/" + std::to_string(i) + ".txt", "later work\n");
    repo.commit("later harmless change " + std::to_string(i));
  }
  return planted;
}

json bisect_json(const ProcessResult& p) {
  const auto at = p.out.find("bisect: ");
  if (at == std::string::npos) throw std::runtime_error("no bisect line:\n" + p.out + p.err);
  return json::parse(slurp(fs::path(p.out.substr(at + 8, p.out.find('\n', at) - at - 8)) / "bisect.json"));
}

fs::path bisect_dir(const ProcessResult& p) {
  const auto at = p.out.find("bisect: ");
  return p.out.substr(at + 8, p.out.find('\n', at) - at - 8);
}

}  // namespace

TEST(LandingBisect, FindsThePlantedParityRegression) {
  ThrowawayRepo repo("bisect-parity");
  const std::string good = repo.commit("known good");
  const std::string planted = plant(repo, {{"perturb_fast", 5e-3}}, 3, 3);
  const auto p = repo.landing({"bisect", "--good", good, "--bad", "HEAD", "--gate", "parity", "--gates", "landing.yaml", "--quiet"});
  ASSERT_EQ(p.exit_code, 0) << why(p);
  EXPECT_TRUE(has(p.out, "first bad commit: " )) << p.out;
  const json b = bisect_json(p);
  EXPECT_EQ(b["first_bad"].get<std::string>().substr(0, 12), planted);
  // Both ends first, then at most ceil(log2(7)) = 3 steps over the 7 commits in between.
  const auto& steps = b["steps"];
  ASSERT_GE(steps.size(), 3u);
  EXPECT_LE(steps.size(), 2u + 3u);
  EXPECT_EQ(steps[0]["role"], "bad end");
  EXPECT_EQ(steps[0]["verdict"], "bad");
  EXPECT_EQ(steps[1]["role"], "good end");
  EXPECT_EQ(steps[1]["verdict"], "good");
  const fs::path dir = bisect_dir(p);
  for (const auto& s : steps) {
    ASSERT_TRUE(fs::exists(dir / s["evidence"].get<std::string>())) << s.dump();
    const json step = json::parse(slurp(dir / s["evidence"].get<std::string>()));
    EXPECT_EQ(step["result"]["gate"], "parity");
    EXPECT_EQ(step["verdict"], s["verdict"]);
  }
  const std::string md = slurp(dir / "bisect.md");
  EXPECT_TRUE(has(md, "# Bisect: first bad commit " + planted + " — the planted regression")) << md;
  EXPECT_TRUE(has(md, "- parity: **FAIL**")) << md;
  EXPECT_TRUE(has(md, "--candidate " + planted)) << md;
  // Every commit was built once: the builds are cached by commit.
  EXPECT_FALSE(has(p.err, "error")) << p.err;
  // The user's checkout is untouched: no bisect in progress there, HEAD where it was.
  EXPECT_FALSE(repo.git({"bisect", "log"}).ok());
  EXPECT_EQ(repo.git({"rev-parse", "--short=12", "HEAD"}).out.substr(0, 12), b["bad"].get<std::string>().substr(0, 12));
}

TEST(LandingBisect, FindsASlowdownWithTheAbGateAndAMetric) {
  ThrowawayRepo repo("bisect-ab");
  const std::string good = repo.commit("known good");
  const std::string planted = plant(repo, {{"tps", 900.0}}, 1, 2);  // 10% slower: beyond max_regression_pct 2
  const auto p = repo.landing({"bisect", "--good", good, "--bad", "HEAD", "--gate", "ab", "--metric", "ab",
                               "--gates", "landing.yaml", "--quiet"});
  ASSERT_EQ(p.exit_code, 0) << why(p);
  EXPECT_EQ(bisect_json(p)["first_bad"].get<std::string>().substr(0, 12), planted);
  EXPECT_EQ(bisect_json(p)["metric"], "ab");
}

TEST(LandingBisect, AnUnbuildableCommitIsSkippedAndCanLeaveItUndecided) {
  ThrowawayRepo repo("bisect-skip");
  const std::string good = repo.commit("known good");
  repo.write("extra.cmake", "enable_language(C)\nadd_executable(broken broken.c)\n");
  repo.write("broken.c", "int main(void) { return undeclared_thing; }\n");
  const std::string broken = repo.commit("does not compile");
  fs::remove(repo.dir() / "extra.cmake");
  repo.behave({{"greedy_diverge_at", 3}});
  const std::string planted = repo.commit("fixes the build, plants a greedy divergence");
  const auto p = repo.landing({"bisect", "--good", good, "--bad", "HEAD", "--gate", "greedy", "--gates", "landing.yaml", "--quiet"});
  // The broken commit right before the planted one cannot be tested: either could be first.
  ASSERT_EQ(p.exit_code, 2) << why(p);
  EXPECT_TRUE(has(p.out, "undecided: the first bad commit is one of")) << p.out;
  const json b = bisect_json(p);
  EXPECT_TRUE(b["first_bad"].is_null());
  std::vector<std::string> could;
  for (const auto& c : b["could_be"]) could.push_back(c.get<std::string>().substr(0, 12));
  EXPECT_EQ(could, (std::vector<std::string>{broken, planted})) << b.dump(1);
  bool skipped = false;
  for (const auto& s : b["steps"]) {
    if (s["sha"].get<std::string>().substr(0, 12) != broken) continue;
    skipped = s["verdict"] == "skip";
    EXPECT_TRUE(has(s["why"].get<std::string>(), "does not build")) << s.dump();
  }
  EXPECT_TRUE(skipped) << b.dump(1);
  EXPECT_TRUE(has(slurp(bisect_dir(p) / "bisect.md"), "## The first bad commit is one of"));
}

TEST(LandingBisect, CommandLineIsCheckedBeforeAnythingRuns) {
  ThrowawayRepo repo("bisect-usage");
  const std::string good = repo.commit("known good");
  repo.commit("next");
  EXPECT_EQ(repo.landing({"bisect", "--good", good, "--bad", "HEAD"}).exit_code, 4);  // no --gate
  EXPECT_EQ(repo.landing({"bisect", "--good", good, "--bad", "HEAD", "--gate", "speed"}).exit_code, 4);
  EXPECT_EQ(repo.landing({"bisect", "--good", "HEAD", "--bad", good, "--gate", "parity", "--gates", "landing.yaml"}).exit_code, 5)
      << "--good after --bad";
  EXPECT_FALSE(fs::exists(repo.dir() / ".landing" / "build")) << "built before refusing";
  EXPECT_EQ(repo.landing({"bisect", "--good", good, "--bad", good, "--gate", "parity", "--gates", "landing.yaml"}).exit_code, 5)
      << "--good == --bad";
  // Nothing planted: the bad end passes, so there is nothing to bisect (exit 1), and it says why.
  const auto none = repo.landing({"bisect", "--good", good, "--bad", "HEAD", "--gate", "parity", "--gates", "landing.yaml", "--quiet"});
  EXPECT_EQ(none.exit_code, 1) << why(none);
  EXPECT_TRUE(has(none.out, "nothing to bisect")) << none.out;
  const auto help = repo.landing({"bisect", "--help"});
  EXPECT_EQ(help.exit_code, 0);
  EXPECT_TRUE(has(help.out, "--metric"));
}

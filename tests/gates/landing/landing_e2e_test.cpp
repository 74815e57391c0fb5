// landing end to end on a throwaway repository with a fake engine (see fake/prefill.py): each test
// plants one problem in a candidate commit and checks the verdict, the exit code and what the
// report says about it.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>

#include "throwaway_repo.h"
#include "util/file_lock.h"
#include "util/fixtures.h"

namespace fs = std::filesystem;
using namespace pfx;
using namespace pfx::gates;
using nlohmann::json;

namespace {
// By value: callers often pass a temporary record.
GateResult gate(const LandingRecord& r, const std::string& name) {
  const GateResult* g = r.gate(name);
  if (!g) throw std::runtime_error("no result for gate " + name);
  return *g;
}
}  // namespace

TEST(LandingE2E, AaOnIdenticalBuildsSaysNoChangeAndLedgerLinks) {
  ThrowawayRepo repo("aa");
  const auto p = repo.run("HEAD", "HEAD");
  ASSERT_EQ(p.exit_code, 0) << why(p);
  const auto rec = ThrowawayRepo::record(p);
  EXPECT_EQ(rec.verdict, Verdict::Pass);
  const auto& ab = gate(rec, "ab");
  EXPECT_EQ(ab.status, Status::Pass);
  EXPECT_TRUE(has(ab.checks.at(0).reason, "no change")) << ab.checks.at(0).reason;
  EXPECT_EQ(gate(rec, "timing").status, Status::Skipped);  // the tracer cannot trace a Python fake
  EXPECT_FALSE(gate(rec, "timing").required);
  EXPECT_TRUE(has(gate(rec, "suite").evidence, "suite 2/0/0")) << gate(rec, "suite").evidence;  // landing-e2e test excluded
  const fs::path dir = ThrowawayRepo::report_dir(p);
  for (const char* f : {"landing.json", "landing.md", "landing.html", "junit.xml", "gates/parity.json"}) EXPECT_TRUE(fs::exists(dir / f)) << f;
  EXPECT_TRUE(has(slurp(dir / "landing.md"), "## 5. Results"));
  EXPECT_TRUE(has(p.err, "[landing +")) << "progress goes to stderr";

  // A rerun of the same commit never overwrites: suffix, sequence 2, a link back, the first
  // report's landing.json byte for byte as its run wrote it, index newest first.
  const std::string first_json = slurp(dir / "landing.json");
  const auto again = repo.run("HEAD", "HEAD");
  ASSERT_EQ(again.exit_code, 0) << why(again);
  const auto rec2 = ThrowawayRepo::record(again);
  EXPECT_EQ(rec2.id, rec.id + "-2");
  EXPECT_EQ(rec2.seq, 2);
  EXPECT_EQ(rec2.prev, rec.id);
  EXPECT_EQ(slurp(dir / "landing.json"), first_json);
  const std::string index = repo.read("reports/index.md");
  EXPECT_LT(index.find("[" + rec2.id + "]"), index.find("[" + rec.id + "]"));
  // The build was cached by SHA: the second run built nothing.
  EXPECT_TRUE(has(again.err, "cached build")) << again.err;
}

TEST(LandingE2E, PlantedLogitPerturbationCaughtByParity) {
  ThrowawayRepo repo("parity");
  repo.behave({{"perturb_fast", 5e-3}});
  repo.commit("fast path: planted 5e-3 logit perturbation");
  const auto p = repo.run("HEAD~1", "HEAD");
  ASSERT_EQ(p.exit_code, 1) << why(p);
  const auto rec = ThrowawayRepo::record(p);
  EXPECT_EQ(rec.verdict, Verdict::Fail);
  const auto& parity = gate(rec, "parity");
  EXPECT_EQ(parity.status, Status::Fail);
  EXPECT_TRUE(has(parity.reason, "max rel dev 5.00e-03 > 1.00e-03")) << parity.reason;
  EXPECT_EQ(gate(rec, "accuracy").status, Status::Pass);  // 5e-3 is inside the oracle bound 1e-2
  EXPECT_TRUE(has(slurp(ThrowawayRepo::report_dir(p) / "landing.md"), "❌ **parity FAIL**"));
  EXPECT_TRUE(has(repo.read("reports/index.md"), "  - ❌ parity:"));
}

TEST(LandingE2E, BugSharedByBothPathsCaughtByAccuracyNotParity) {
  ThrowawayRepo repo("accuracy");
  repo.behave({{"shared_bias", 0.05}});
  repo.commit("both paths: planted shared bias");
  const auto p = repo.run("HEAD~1", "HEAD");
  ASSERT_EQ(p.exit_code, 1) << why(p);
  const auto rec = ThrowawayRepo::record(p);
  EXPECT_EQ(gate(rec, "parity").status, Status::Pass);
  const auto& acc = gate(rec, "accuracy");
  EXPECT_EQ(acc.status, Status::Fail);
  EXPECT_TRUE(has(acc.reason, "max rel dev")) << acc.reason;
}

TEST(LandingE2E, PlantedCrashIsAFailNoWaiverExcuses) {
  ThrowawayRepo repo("crash");
  repo.behave({{"crash_on", "logits"}});
  repo.edit_profile("waivers: []", "waivers: [{gate: parity, reason: 'trying to excuse a crash'}]");
  repo.commit("planted crash in logits");
  const auto p = repo.run("HEAD~1", "HEAD");
  ASSERT_EQ(p.exit_code, 1) << why(p);
  const auto rec = ThrowawayRepo::record(p);
  const auto& parity = gate(rec, "parity");
  EXPECT_EQ(parity.status, Status::Fail);
  EXPECT_TRUE(has(parity.reason, "crash: killed by signal 11 (SIGSEGV)")) << parity.reason;
  EXPECT_FALSE(parity.checks.at(0).command.empty());
  EXPECT_TRUE(has(parity.checks.at(0).command, "logits --model"));
}

TEST(LandingE2E, PlantedHangKilledAtTheGateTimeout) {
  ThrowawayRepo repo("hang");
  repo.behave({{"hang_on", "greedy"}});
  repo.edit_profile("  greedy:\n    timeout_s: 20", "  greedy:\n    timeout_s: 3");
  repo.commit("planted hang in greedy");
  const auto p = repo.run("HEAD~1", "HEAD");
  ASSERT_EQ(p.exit_code, 1) << why(p);
  const auto rec = ThrowawayRepo::record(p);
  const auto& greedy = gate(rec, "greedy");
  EXPECT_EQ(greedy.status, Status::Fail);
  EXPECT_TRUE(has(greedy.reason, "hang: timed out after")) << greedy.reason;
  EXPECT_LT(greedy.duration_s, 20.0);
}

TEST(LandingE2E, NanInLogitsFails) {
  ThrowawayRepo repo("nan");
  repo.behave({{"nan_fast", true}});
  repo.commit("planted NaN");
  const auto p = repo.run("HEAD~1", "HEAD");
  ASSERT_EQ(p.exit_code, 1) << why(p);
  const auto& parity = gate(ThrowawayRepo::record(p), "parity");
  EXPECT_TRUE(has(parity.reason, "NaN/inf in logits")) << parity.reason;
}

TEST(LandingE2E, LoosenedThresholdAndNewWaiverHighlighted) {
  ThrowawayRepo repo("loosen");
  repo.behave({{"greedy_diverge_at", 5}});
  repo.edit_profile("max_rel_dev: 1.0e-3", "max_rel_dev: 1.0e-1");
  repo.edit_profile("waivers: []", "waivers: [{gate: greedy, reason: 'intended: accumulation order changed'}]");
  repo.commit("greedy diverges (intended), parity threshold loosened");
  const auto p = repo.run("HEAD~1", "HEAD");
  ASSERT_EQ(p.exit_code, 0) << why(p);
  const auto rec = ThrowawayRepo::record(p);
  const auto& greedy = gate(rec, "greedy");
  EXPECT_EQ(greedy.status, Status::Waived);
  EXPECT_TRUE(has(greedy.checks.at(0).reason, "first divergence at generated token 5")) << greedy.checks.at(0).reason;
  const std::string md = slurp(ThrowawayRepo::report_dir(p) / "landing.md");
  EXPECT_TRUE(has(md, "| **gates.parity.max_rel_dev** | 0.001 | 0.1 | ⚠️ **LOOSENED: limit raised** |")) << md;
  EXPECT_TRUE(has(md, "⚠️ **LOOSENED: new waiver**"));
  EXPECT_TRUE(has(slurp(ThrowawayRepo::report_dir(p) / "landing.html"), "class=\"loosened\""));
  const auto cl = repo.landing({"checklist"});
  EXPECT_TRUE(has(cl.out, "gate profile: approve gates.parity.max_rel_dev")) << cl.out;
  EXPECT_TRUE(has(cl.out, "greedy: reviewer approves the waiver(s)"));
}

TEST(LandingE2E, GreedyDivergenceWithoutWaiverShowsBothContinuations) {
  ThrowawayRepo repo("diverge");
  repo.behave({{"greedy_diverge_at", 3}});
  repo.commit("greedy diverges");
  const auto p = repo.run("HEAD~1", "HEAD");
  ASSERT_EQ(p.exit_code, 1) << why(p);
  const auto& greedy = gate(ThrowawayRepo::record(p), "greedy");
  EXPECT_EQ(greedy.status, Status::Fail);
  EXPECT_TRUE(has(greedy.reason, "first divergence at generated token 3: baseline [")) << greedy.reason;
  EXPECT_TRUE(has(greedy.reason, "] vs candidate ["));
}

TEST(LandingE2E, NoGpuMeansIncompleteNeverPass) {
  ThrowawayRepo repo("nogpu");
  repo.behave({{"cuda", false}});
  repo.commit("host without GPU");
  const auto p = repo.run("HEAD", "HEAD");
  ASSERT_EQ(p.exit_code, 2) << why(p);
  const auto rec = ThrowawayRepo::record(p);
  EXPECT_EQ(rec.verdict, Verdict::Incomplete);
  for (const char* g : {"parity", "accuracy", "ab"}) {
    EXPECT_EQ(gate(rec, g).status, Status::Skipped) << g;
    EXPECT_TRUE(has(gate(rec, g).reason, "exit 3")) << gate(rec, g).reason;
  }
  const auto& greedy = gate(rec, "greedy");
  EXPECT_EQ(greedy.status, Status::Pass);  // falls back to the CPU backend, and says so
  EXPECT_TRUE(has(greedy.evidence, "CPU backend")) << greedy.evidence;
}

TEST(LandingE2E, BaselineTooOldSkipsWithReason) {
  ThrowawayRepo repo("old");
  repo.behave({{"subcommands", json::array({"info", "tokenize", "logits", "synth", "bench"})}});
  repo.commit("old engine without greedy");
  repo.behave({{"subcommands", json::array({"info", "tokenize", "logits", "greedy", "synth", "bench"})}});
  repo.commit("greedy added");
  const auto p = repo.run("HEAD~1", "HEAD");
  ASSERT_EQ(p.exit_code, 2) << why(p);
  const auto& greedy = gate(ThrowawayRepo::record(p), "greedy");
  EXPECT_EQ(greedy.status, Status::Skipped);
  EXPECT_TRUE(has(greedy.reason, "baseline build")) << greedy.reason;
  EXPECT_TRUE(has(greedy.reason, "lacks capability subcommands/greedy")) << greedy.reason;
}

TEST(LandingE2E, BuildFailureIsAFailWithTheCompilerError) {
  ThrowawayRepo repo("buildfail");
  repo.write("extra.cmake", "enable_language(C)\nadd_executable(broken broken.c)\n");
  repo.write("broken.c", "int main(void) { return undeclared_thing; }\n");
  repo.commit("does not compile");
  const auto p = repo.run("HEAD~1", "HEAD");
  ASSERT_EQ(p.exit_code, 1) << why(p);
  const auto rec = ThrowawayRepo::record(p);
  const auto& build = gate(rec, "build");
  EXPECT_EQ(build.status, Status::Fail);
  const std::string md = slurp(ThrowawayRepo::report_dir(p) / "landing.md");
  EXPECT_TRUE(has(md, "candidate build error:")) << md;
  EXPECT_TRUE(has(md, "undeclared_thing")) << md;
  EXPECT_TRUE(has(md, "error")) << md;
}

TEST(LandingE2E, SlowdownCaughtByAb) {
  ThrowawayRepo repo("slow");
  repo.behave({{"tps", 900.0}});
  repo.commit("10% slower");
  const auto p = repo.run("HEAD~1", "HEAD");
  ASSERT_EQ(p.exit_code, 1) << why(p);
  const auto& ab = gate(ThrowawayRepo::record(p), "ab");
  EXPECT_EQ(ab.status, Status::Fail);
  EXPECT_TRUE(has(ab.checks.at(0).reason, "regressed")) << ab.checks.at(0).reason;
  EXPECT_NEAR(ab.details["median_delta_pct"].get<double>(), -10.0, 1.5);
  EXPECT_EQ(ab.details["wins"].get<int>(), 0);
}

TEST(LandingE2E, PtxasBudgetAndSuiteFailure) {
  ThrowawayRepo repo("ptxas-suite");
  std::string res = repo.read("kernel-resources.json");
  res.replace(res.find("\"registers\": 85"), 15, "\"registers\": 100");
  repo.write("kernel-resources.json", res);
  repo.write("extra.cmake", "add_test(NAME unit_broken COMMAND ${CMAKE_COMMAND} -E false)\n");
  repo.commit("more registers, a broken test");
  const auto p = repo.run("HEAD~1", "HEAD");
  ASSERT_EQ(p.exit_code, 1) << why(p);
  const auto rec = ThrowawayRepo::record(p);
  const auto& ptxas = gate(rec, "ptxas");
  EXPECT_EQ(ptxas.status, Status::Fail);
  EXPECT_TRUE(has(ptxas.reason, "100 regs > budget 96")) << ptxas.reason;
  EXPECT_TRUE(has(ptxas.evidence, "k_gemm_q6k_bt 85 → 100 regs")) << ptxas.evidence;
  const auto& suite = gate(rec, "suite");
  EXPECT_EQ(suite.status, Status::Fail);
  EXPECT_TRUE(has(suite.evidence, "failing: unit_broken")) << suite.evidence;
}

TEST(LandingE2E, UncommittedWorkingTreeGetsItsOwnId) {
  ThrowawayRepo repo("worktree");
  const std::string head = repo.commit("nothing new");
  repo.behave({{"perturb_fast", 5e-3}});  // uncommitted
  const auto p = repo.run("HEAD", "WORKTREE");
  ASSERT_EQ(p.exit_code, 1) << why(p);
  const auto rec = ThrowawayRepo::record(p);
  EXPECT_EQ(rec.candidate_id.rfind(head + "-wt-", 0), 0u) << rec.candidate_id;
  EXPECT_TRUE(rec.candidate["worktree"].get<bool>());
  EXPECT_EQ(gate(rec, "parity").status, Status::Fail);
  // The reports it wrote do not change the working tree's id.
  const auto again = repo.run("HEAD", "WORKTREE");
  EXPECT_EQ(ThrowawayRepo::record(again).candidate_id, rec.candidate_id);
}

TEST(LandingE2E, GpuGatesImportedFromAnotherHost) {
  ThrowawayRepo repo("import");
  repo.behave({{"cuda", false}});
  repo.commit("engine (this host has no GPU)");
  const auto cpu = repo.run("HEAD", "HEAD");
  ASSERT_EQ(cpu.exit_code, 2) << why(cpu);
  // "GPU host": same commits, its own cache, the fake sees a GPU there.
  const fs::path results = repo.dir() / ".landing" / "gpu-results";
  const auto gpu = repo.landing({"gate", "parity", "accuracy", "ab", "--baseline", "HEAD", "--candidate", "HEAD", "--gates", "landing.yaml",
                                 "--cache", (repo.dir() / ".landing" / "gpu-host").string(), "--out", results.string()},
                                {{"FAKE_PREFILL_CUDA", "1"}});
  ASSERT_EQ(gpu.exit_code, 0) << why(gpu);
  const auto imp = repo.landing({"import", results.string()});
  ASSERT_EQ(imp.exit_code, 0) << why(imp);
  const auto rec = ThrowawayRepo::record(imp);
  EXPECT_EQ(rec.id, ThrowawayRepo::record(cpu).id);  // the same report, completed
  EXPECT_EQ(rec.verdict, Verdict::Pass);
  for (const char* g : {"parity", "accuracy", "ab"}) EXPECT_EQ(gate(rec, g).status, Status::Pass) << g;
  EXPECT_EQ(rec.imports.size(), 1u);
  EXPECT_TRUE(has(slurp(ThrowawayRepo::report_dir(imp) / "landing.md"), "| imported |"));
  // Re-render from the stored record gives the same Markdown.
  const std::string before = slurp(ThrowawayRepo::report_dir(imp) / "landing.md");
  ASSERT_EQ(repo.landing({"report", rec.id}).exit_code, 0);
  EXPECT_EQ(slurp(ThrowawayRepo::report_dir(imp) / "landing.md"), before);
}

TEST(LandingE2E, PrebuiltBuildsOnAHostWithoutGit) {
  ThrowawayRepo repo("prebuilt");
  repo.behave({{"cuda", false}});
  repo.commit("engine (this host has no GPU)");
  const auto cpu = repo.run("HEAD~1", "HEAD");
  ASSERT_EQ(cpu.exit_code, 2) << why(cpu);
  const auto local = ThrowawayRepo::record(cpu);
  // The "GPU host" gets a copy of the tree without .git and the two build folders.
  const fs::path host = repo.dir() / ".landing" / "gpu-host-copy";
  fs::create_directories(host / "builds");
  for (const char* f : {"landing.yaml", "tiny.yaml"}) fs::copy_file(repo.dir() / f, host / f);
  const std::string base_id = local.baseline["id"], cand_id = local.candidate["id"];
  fs::copy(repo.dir() / ".landing" / "build" / base_id, host / "builds" / "base", fs::copy_options::recursive);
  fs::copy(repo.dir() / ".landing" / "build" / cand_id, host / "builds" / "cand", fs::copy_options::recursive);
  ProcessSpec s;
  s.argv = {PFX_LANDING_EXE, "gate", "parity", "ab", "--baseline-build", (host / "builds/base").string(), "--candidate-build",
            (host / "builds/cand").string(), "--baseline-id", base_id, "--candidate-id", cand_id, "--gates", "landing.yaml",
            "--out", (host / "results").string(), "--harness", PFX_LANDING_EXE};
  s.cwd = host;
  s.env = {{"FAKE_PREFILL_CUDA", "1"}, {"PFX_FIXTURES", pfx::fixtures_dir().string()}};
  s.timeout_s = 300;
  const auto gpu = run_process(s);
  ASSERT_EQ(gpu.exit_code, 0) << why(gpu);
  EXPECT_FALSE(fs::exists(host / ".git"));
  const auto imp = repo.landing({"import", (host / "results").string()});
  ASSERT_EQ(imp.exit_code, 2) << why(imp);  // accuracy still SKIPPED here: not run on the GPU host
  const auto rec = ThrowawayRepo::record(imp);
  EXPECT_EQ(rec.id, local.id);
  EXPECT_EQ(gate(rec, "parity").status, Status::Pass);
  EXPECT_EQ(gate(rec, "ab").status, Status::Pass);
  EXPECT_EQ(gate(rec, "accuracy").status, Status::Skipped);
  EXPECT_TRUE(has(gate(rec, "parity").command, "--candidate-build")) << gate(rec, "parity").command;
}

TEST(LandingE2E, CiStepWritesSummaryAndExitsWithVerdict) {
  ThrowawayRepo repo("ci");
  repo.commit("a commit to land");
  const fs::path summary = repo.dir() / ".landing" / "summary.md";
  auto step = [&](std::vector<std::string> extra) {
    ProcessSpec s;
    s.argv = {"bash", PFX_LANDING_STEP, "--landing", PFX_LANDING_EXE, "--gates", "landing.yaml", "--summary", summary.string()};
    s.argv.insert(s.argv.end(), extra.begin(), extra.end());
    s.cwd = repo.dir();
    s.env["PFX_FIXTURES"] = pfx::fixtures_dir().string();
    s.timeout_s = 300;
    return run_process(s);
  };
  auto ok = step({});
  ASSERT_EQ(ok.exit_code, 0) << why(ok);
  EXPECT_TRUE(has(slurp(summary), "## 4. Verification"));
  repo.behave({{"cuda", false}});
  repo.commit("no GPU here");
  auto inc = step({});
  EXPECT_EQ(inc.exit_code, 2) << why(inc);
  auto req = step({"--require-gpu"});
  EXPECT_EQ(req.exit_code, 1) << why(req);
  auto bad = step({"--commit", "no-such-rev"});
  EXPECT_EQ(bad.exit_code, 5) << why(bad);
}

TEST(LandingE2E, UsageAndToolErrorsHaveTheirOwnExitCodes) {
  ThrowawayRepo repo("usage");
  EXPECT_EQ(repo.landing({"run", "--candidate", "HEAD"}).exit_code, 4);
  EXPECT_EQ(repo.landing({"frobnicate"}).exit_code, 4);
  const auto bad_rev = repo.run("no-such-rev", "HEAD");
  EXPECT_EQ(bad_rev.exit_code, 5);
  EXPECT_TRUE(has(bad_rev.err, "revision 'no-such-rev' does not name a commit")) << bad_rev.err;
  repo.write("landing.yaml", "schema: gate-profile/1\ngates: {speed: {}}\n");
  repo.commit("broken profile");
  const auto bad_profile = repo.run("HEAD", "HEAD");
  EXPECT_EQ(bad_profile.exit_code, 4) << "an invalid gate profile is a usage error";
  EXPECT_TRUE(has(bad_profile.err, "gates.speed: unknown gate")) << bad_profile.err;
  const auto help = repo.landing({"--help"});
  EXPECT_EQ(help.exit_code, 0);
  EXPECT_TRUE(has(help.out, "2  INCOMPLETE"));
}

// Issue 12, item 5: a cached build is trusted only when the binary's own `--version --json`
// commit is the one asked for; one run at a time builds into .landing/build/<id> (a flock on
// <id>.lock); every run has scratch of its own under .landing/work.
TEST(LandingE2E, BuildCacheVerifiedByCommitLockedAndScratchPerRun) {
  ThrowawayRepo repo("cache");
  const std::string sha = repo.git({"rev-parse", "HEAD"}).out.substr(0, 40);
  const std::string id = sha.substr(0, 12);
  const std::vector<std::string> gate = {"gate", "greedy", "--baseline", "HEAD", "--candidate", "HEAD", "--gates", "landing.yaml"};
  const auto first = repo.landing(gate);
  ASSERT_EQ(first.exit_code, 0) << why(first);
  const fs::path build = repo.dir() / ".landing" / "build" / id;
  ASSERT_EQ(slurp(build / "engine/cli/commit.txt"), sha);  // the fake stamps its commit like a real build

  // A build folder whose binary is another commit's (a stale copy, a clobbered cache): rebuilt.
  repo.write(".landing/build/" + id + "/engine/cli/commit.txt", std::string(40, '0'));
  const auto stale = repo.landing(gate);
  ASSERT_EQ(stale.exit_code, 0) << why(stale);
  EXPECT_TRUE(has(stale.err, "says commit '" + std::string(40, '0') + "'")) << stale.err;
  EXPECT_TRUE(has(stale.err, "not " + sha + ": rebuilding")) << stale.err;
  EXPECT_EQ(slurp(build / "engine/cli/commit.txt"), sha);
  const auto again = repo.landing(gate);
  EXPECT_TRUE(has(again.err, "cached build")) << again.err;

  // Another run holding the build lock: this one waits (and says so) instead of building alongside.
  {
    const pfx::FileLock held(build.string() + ".lock");
    ProcessSpec s;
    s.argv = {PFX_LANDING_EXE};
    s.argv.insert(s.argv.end(), gate.begin(), gate.end());
    s.cwd = repo.dir();
    s.env["PFX_FIXTURES"] = pfx::fixtures_dir().string();
    s.timeout_s = 4;
    const auto waiting = run_process(s);
    EXPECT_TRUE(waiting.timed_out) << why(waiting);
    EXPECT_TRUE(has(waiting.err, id + ".lock; waiting for it")) << waiting.err;
  }

  // Three runs got past the build, three scratch folders: <id>-<unix time>-<pid>-<random>.
  size_t runs = 0;
  for (const auto& e : fs::directory_iterator(repo.dir() / ".landing" / "work")) {
    EXPECT_EQ(e.path().filename().string().rfind(id + "-", 0), 0u) << e.path();
    const std::string name = e.path().filename().string();
    EXPECT_EQ(std::count(name.begin(), name.end(), '-'), 3) << name;
    ++runs;
  }
  EXPECT_EQ(runs, 3u);
}

// `landing import` tried as an attacker would (landing/import_rules.h): each test crafts a results
// folder that once turned an INCOMPLETE report into PASS, or wrote outside reports/, and checks it
// is now refused or re-judged. The report is a real ledger entry in a temporary reports folder;
// no git, no builds.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "core/gate_profile.h"
#include "landing/landing_import.h"
#include "report/checklist.h"
#include "report/ledger.h"
#include "suite/suite_judge.h"
#include "util/error.h"
#include "temp_dir.h"

namespace fs = std::filesystem;
using namespace pfx::gates;
using nlohmann::json;

namespace {

const std::string kCand = "c0ffee000001", kBase = "ba5e00000001";
const std::string kCandHash(64, 'c'), kBaseHash(64, 'b');

const char* kProfile = R"(schema: gate-profile/1
models:
  tiny: {synth: tiny.yaml, seed: 1}
gpu_probe_model: tiny
gates:
  parity:
    max_rel_dev: 1.0e-3
    cases:
      - {name: hello, model: tiny, text: "hello world"}
      - {name: ids, model: tiny, tokens: [1, 5, 9]}
  greedy:
    cases: [{name: hello, model: tiny, text: "hello world"}]
  suite: {}
  ab: {model: tiny}
waivers: []
)";

class Import : public pfx::test::TempDirTest {
 protected:
  void SetUp() override {
    reports_ = root_ / "reports";
    results_ = root_ / "results";
    fs::create_directories(results_);
    profile_ = GateProfile::parse(kProfile, "landing.yaml");
    LandingRecord rec;
    rec.candidate_id = kCand;
    rec.created = utc_now_iso8601();
    rec.baseline = {{"label", "baseline"}, {"sha", kBase + "0000"}, {"id", kBase}, {"ok", true}, {"prefill_sha256", kBaseHash}};
    rec.candidate = {{"label", "candidate"}, {"sha", kCand + "0000"}, {"id", kCand}, {"ok", true}, {"prefill_sha256", kCandHash}};
    rec.profile_path = "landing.yaml";
    rec.profile = profile_.data();
    rec.profile_sha256 = profile_.sha256();
    rec.harness = {{"pinned", true}, {"how", "baseline build"}, {"commit", kBase}, {"sha256", std::string(64, 'h')}};
    rec.enabled_gates = {"parity", "greedy", "suite", "ab"};
    // Here (no GPU): the GPU gates skipped, the suite with its GPU test skipped.
    for (const char* g : {"parity", "ab"}) {
      GateResult r = skipped_result(g, "unavailable here (exit 3): no usable CUDA GPU");
      r.checks.push_back({g, Status::Skipped, "unavailable here (exit 3): no usable CUDA GPU"});
      r.candidate_id = kCand;
      r.baseline_id = kBase;
      rec.put(r);
    }
    GateResult greedy;
    greedy.gate = "greedy";
    greedy.checks = {{"hello", Status::Pass, "byte-identical: 12 tokens"}};
    settle_from_checks(greedy);
    rec.put(greedy);
    GateResult suite;
    suite.gate = "suite";
    suite.host = {{"host", "cpu-host"}};
    suite.details["tests"] = json::array({{{"name", "CpuTest.A"}, {"outcome", "passed"}},
                                          {{"name", "GpuTest.B"}, {"outcome", "skipped"}, {"message", "no CUDA GPU"}}});
    suite.details["runs"] = json::array({{{"host", "cpu-host"}, {"ctest_exit", 0}}});
    judge_suite(suite);
    settle_from_checks(suite);
    rec.put(suite);
    rec.recompute_verdict();
    Ledger ledger(reports_);
    rec.id = ledger.reserve(rec.candidate_id);
    ledger.append(rec);
  }

  // A result bound the way a landing on the report's builds and profile binds it.
  json bound(const std::string& gate, const std::string& status) const {
    return {{"schema", kGateResultSchema}, {"gate", gate}, {"status", status}, {"candidate_id", kCand}, {"baseline_id", kBase},
            {"host", {{"host", "gpu-host"}, {"gpu", {{"name", "NVIDIA H200"}, {"driver_version", "570"}}}}},
            {"binding", {{"profile_sha256", profile_.sha256()},
                         {"candidate", {{"id", kCand}, {"prefill_sha256", kCandHash}}},
                         {"baseline", {{"id", kBase}, {"prefill_sha256", kBaseHash}}},
                         {"harness", {{"pinned", true}, {"how", "baseline build"}, {"commit", kBase}}}}},
            {"checks", json::array()}};
  }
  static json check(const std::string& name, const std::string& status, json metrics = json::object()) {
    return {{"name", name}, {"status", status}, {"reason", "claimed"}, {"metrics", metrics}};
  }
  static json logits(double rel) {
    return {{"shape_match", true}, {"max_rel_dev", rel}, {"nmse", rel * rel}, {"top1_agreement", 1.0}};
  }
  void write(const std::string& file, const json& j) const { std::ofstream(results_ / file) << j.dump(); }
  int import(const std::string& accept = "") const { return landing_import(results_, reports_, "", accept, true); }
  std::string import_error(const std::string& accept = "") const {
    try {
      import(accept);
    } catch (const pfx::Error& e) {
      return e.what();
    }
    return "";
  }
  LandingRecord record() const { return read_landing_record(reports_ / kCand / "landing.json"); }
  // The report's builds as their `--version --json` say (null: left as set up), and its gate
  // profile where the test changes it.
  void report_builds(const json& candidate_version, const json& baseline_version, const GateProfile* profile = nullptr) const {
    auto rec = record();
    if (profile) {
      rec.profile = profile->data();
      rec.profile_sha256 = profile->sha256();
    }
    if (!candidate_version.is_null()) rec.candidate["version"] = candidate_version;
    if (!baseline_version.is_null()) rec.baseline["version"] = baseline_version;
    Ledger(reports_).update(rec);
  }
  GateResult gate(const std::string& name) const {
    const auto rec = record();
    const GateResult* g = rec.gate(name);
    if (!g) throw std::runtime_error("no " + name);
    return *g;
  }

  fs::path reports_, results_;
  GateProfile profile_;
};

bool has(const std::string& s, const std::string& part) { return s.find(part) != std::string::npos; }

}  // namespace

TEST_F(Import, OneLinePassJsonsWithoutBindingAreRefused) {
  // The attack: one line per gate, no checks, no binding.
  for (const char* g : {"parity", "ab"})
    write(std::string(g) + ".json", {{"schema", kGateResultSchema}, {"gate", g}, {"status", "PASS"}, {"candidate_id", kCand}});
  const auto e = import_error();
  EXPECT_TRUE(has(e, "refused, the results are not bound")) << e;
  EXPECT_TRUE(has(e, "parity: baseline id none, report has " + kBase)) << e;
  EXPECT_TRUE(has(e, "carries no binding")) << e;
  EXPECT_EQ(record().verdict, Verdict::Incomplete) << "nothing changed";
}

TEST_F(Import, BoundResultWithNoChecksIsAFail) {
  write("parity.json", bound("parity", "PASS"));
  EXPECT_EQ(import(), kExitFail);
  const auto p = gate("parity");
  EXPECT_EQ(p.status, Status::Fail);
  int missing = 0;
  for (const auto& c : p.checks) missing += has(c.reason, "missing from the imported result");
  EXPECT_EQ(missing, 2) << "both profile cases are missing";
}

TEST_F(Import, RequiredFalseSkippedDoesNotMakePass) {
  for (const char* g : {"parity", "ab"}) {
    auto r = bound(g, "SKIPPED");
    r["required"] = false;
    r["checks"] = json::array({check(g, "SKIPPED")});
    write(std::string(g) + ".json", r);
  }
  import();
  EXPECT_TRUE(gate("parity").required) << "required comes from the report's profile";
  EXPECT_NE(record().verdict, Verdict::Pass);
}

TEST_F(Import, ClaimedPassIsReJudgedFromItsMetrics) {
  auto r = bound("parity", "PASS");
  r["checks"] = json::array({check("hello", "PASS", logits(5e-3)), check("ids", "PASS", logits(1e-5))});
  write("parity.json", r);
  EXPECT_EQ(import(), kExitFail);
  const auto p = gate("parity");
  EXPECT_EQ(p.status, Status::Fail);
  EXPECT_TRUE(has(p.checks.at(0).reason, "max rel dev 5.00e-03 > 1.00e-03")) << p.checks.at(0).reason;
  EXPECT_EQ(p.checks.at(1).status, Status::Pass);
}

TEST_F(Import, CrashFailFlippedToPassStaysAFail) {
  // A crash check has no logits metrics: "PASS" with only an outcome cannot be proven.
  auto r = bound("parity", "PASS");
  r["checks"] = json::array({check("hello", "PASS", {{"outcome", "crashed"}}), check("ids", "PASS", logits(0))});
  write("parity.json", r);
  import();
  const auto p = gate("parity");
  EXPECT_EQ(p.status, Status::Fail);
  EXPECT_TRUE(has(p.checks.at(0).reason, "carries no evidence")) << p.checks.at(0).reason;
  EXPECT_FALSE(p.checks.at(0).waivable) << "an unproven check cannot be waived";
}

TEST_F(Import, LocalFailIsNeverReplaced) {
  {
    auto rec = record();
    GateResult greedy;
    greedy.gate = "greedy";
    greedy.checks = {{"hello", Status::Fail, "first divergence at generated token 3"}};
    settle_from_checks(greedy);
    rec.put(greedy);
    rec.recompute_verdict();
    Ledger(reports_).update(rec);
  }
  auto r = bound("greedy", "PASS");
  r["checks"] = json::array({check("hello", "PASS",
                                   {{"baseline_ids", {1, 2, 3}}, {"candidate_ids", {1, 2, 3}}, {"baseline_text", "abc"},
                                    {"candidate_text", "abc"}})});
  write("greedy.json", r);
  EXPECT_EQ(import(), kExitFail);
  EXPECT_EQ(gate("greedy").status, Status::Fail);
  const auto rec = record();
  ASSERT_EQ(rec.superseded.size(), 1u);
  EXPECT_TRUE(has(rec.superseded[0]["why"].get<std::string>(), "FAIL stands")) << rec.superseded[0].dump();
  EXPECT_EQ(rec.superseded[0]["result"]["status"], "PASS");
}

TEST_F(Import, UnknownGateAndBuildOverrideAreRefused) {
  auto a = bound("nonexistent-gate", "PASS");
  a["checks"] = json::array({check("x", "PASS")});
  write("nonexistent-gate.json", a);
  auto b = bound("build", "PASS");
  b["checks"] = json::array({check("build", "PASS")});
  write("build.json", b);
  const auto e = import_error();
  EXPECT_TRUE(has(e, "nonexistent-gate: not a gate landing knows")) << e;
  EXPECT_TRUE(has(e, "build: the build is this host's own")) << e;
}

TEST_F(Import, PathEscapingIdIsRefusedBeforeAnyPath) {
  auto r = bound("parity", "PASS");
  r["candidate_id"] = "../../ESCAPED_REPORT";
  write("parity.json", r);
  const auto e = import_error();
  EXPECT_TRUE(has(e, "'../../ESCAPED_REPORT' is not a valid id")) << e;
  EXPECT_FALSE(fs::exists(root_ / "ESCAPED_REPORT"));
  EXPECT_FALSE(fs::exists(reports_.parent_path().parent_path() / "ESCAPED_REPORT"));
  // The same through a report folder's landing.json (the other import form) and --into.
  fs::remove(results_ / "parity.json");
  auto rec = to_json(record());
  rec["id"] = "../../ESCAPED_REPORT";
  write("landing.json", rec);
  EXPECT_TRUE(has(import_error(), "field 'id' '../../ESCAPED_REPORT' is not a valid report id"));
  EXPECT_THROW(landing_import(results_, reports_, "../x", "", true), pfx::Error);
}

TEST_F(Import, BinaryOrProfileMismatchRefusedUnlessAccepted) {
  auto r = bound("parity", "PASS");
  r["binding"]["candidate"]["prefill_sha256"] = std::string(64, 'd');
  r["binding"]["profile_sha256"] = std::string(64, 'e');
  r["checks"] = json::array({check("hello", "PASS", logits(0)), check("ids", "PASS", logits(0))});
  write("parity.json", r);
  const auto e = import_error();
  EXPECT_TRUE(has(e, "candidate prefill sha256 dddddddddddd…, report has cccccccccccc…")) << e;
  EXPECT_TRUE(has(e, "effective gate profile sha256")) << e;
  EXPECT_EQ(import("rebuilt on the GPU host from the same commit"), kExitIncomplete);
  EXPECT_EQ(gate("parity").status, Status::Pass);
  const auto md = [&] {
    std::ifstream in(reports_ / kCand / "landing.md");
    return std::string(std::istreambuf_iterator<char>(in), {});
  }();
  EXPECT_TRUE(has(md, "binding mismatch accepted**: \"rebuilt on the GPU host from the same commit\"")) << md;
}

TEST_F(Import, UnpinnedHarnessIsAMismatch) {
  auto r = bound("parity", "PASS");
  r["binding"]["harness"] = {{"pinned", false}, {"how", "not pinned: built from the candidate commit"}};
  write("parity.json", r);
  EXPECT_TRUE(has(import_error(), "judged by a harness that is not pinned: not pinned: built from the candidate commit"));
}

TEST_F(Import, ReplacedResultsStayAndGateFilesFollowTheReport) {
  auto r = bound("parity", "PASS");
  r["checks"] = json::array({check("hello", "PASS", logits(1e-5)), check("ids", "PASS", logits(2e-5))});
  write("parity.json", r);
  import();
  const auto rec = record();
  EXPECT_EQ(rec.gate("parity")->status, Status::Pass);
  bool kept = false;
  for (const auto& s : rec.superseded) kept |= s["result"]["gate"] == "parity" && s["result"]["status"] == "SKIPPED";
  EXPECT_TRUE(kept) << "the replaced SKIPPED stays, with when and why";
  std::ifstream in(reports_ / kCand / "gates" / "parity.json");
  EXPECT_EQ(json::parse(in)["status"], "PASS") << "gates/parity.json says what landing.md says";
}

TEST_F(Import, SuiteRunsOfBothHostsAreJoined) {
  auto r = bound("suite", "PASS");
  r["details"]["tests"] = json::array({{{"name", "CpuTest.A"}, {"outcome", "passed"}}, {{"name", "GpuTest.B"}, {"outcome", "passed"}}});
  r["details"]["runs"] = json::array({{{"host", "gpu-host"}, {"ctest_exit", 0}}});
  write("suite.json", r);
  EXPECT_EQ(gate("suite").status == Status::Pass, false) << "before: a GPU test skipped";
  import();
  const auto s = gate("suite");
  EXPECT_EQ(s.status, Status::Pass) << s.reason;
  EXPECT_TRUE(has(s.evidence, "suite 2/0/0 (passed/failed/skipped) over 2 joined runs")) << s.evidence;
}

// The GPU host runs only its share (landing gate suite --suite-labels gpu): alone it is not a
// suite PASS (the CPU tests are absent, not passed); joined with the report's whole run it is.
TEST_F(Import, GpuHostShareOfTheSuiteCountsOnlyOnceJoined) {
  GateResult share;
  share.gate = "suite";
  share.details["tests"] = json::array({{{"name", "GpuTest.B"}, {"outcome", "passed"}}});
  share.details["runs"] = json::array({{{"host", "gpu-host"}, {"ctest_exit", 0}, {"labels", {"gpu"}}}});
  judge_suite(share);
  settle_from_checks(share);
  EXPECT_EQ(share.status, Status::Inconclusive) << share.reason;
  EXPECT_TRUE(has(share.reason, "in a share of the suite (only labels gpu)")) << share.reason;

  auto r = bound("suite", "PASS");
  r["details"]["tests"] = share.details["tests"];
  r["details"]["runs"] = share.details["runs"];
  write("suite.json", r);
  import();
  const auto s = gate("suite");
  EXPECT_EQ(s.status, Status::Pass) << s.reason;
  EXPECT_TRUE(has(s.evidence, "over 2 joined runs")) << s.evidence;
}

TEST_F(Import, EnvironmentShowsEachGatesHostGpuDriverAndClockRange) {
  auto r = bound("parity", "PASS");
  r["host"]["sm_clock_range_mhz"] = {1755, 1980};
  r["checks"] = json::array({check("hello", "PASS", logits(1e-5)), check("ids", "PASS", logits(2e-5))});
  write("parity.json", r);
  import();
  std::ifstream in(reports_ / kCand / "landing.md");
  const std::string md(std::istreambuf_iterator<char>(in), {});
  EXPECT_TRUE(has(md, "| parity ran on | gpu-host — GPU NVIDIA H200")) << md;
  EXPECT_TRUE(has(md, "driver 570")) << md;
  EXPECT_TRUE(has(md, "; SM clock 1755-1980 MHz")) << md;
}

TEST_F(Import, ImportedFiguresAreRebuiltFromTheEvidence) {
  // A forged headline row (+50%) beside pairs that show a 1% slowdown: the report shows the pairs.
  auto r = bound("ab", "PASS");
  json pairs = json::array();
  for (int i = 0; i < 8; ++i)
    pairs.push_back({{"baseline", {{"tps", {{"pp512", 1000.0}}}}}, {"candidate", {{"tps", {{"pp512", 990.0}}}}}, {"throttled", false}});
  r["details"]["pairs"] = pairs;
  r["rows"] = json::array({{{"metric", "pp512 tok/s"}, {"baseline", {{"value", 1000.0}}}, {"candidate", {{"value", 1500.0}}},
                            {"delta_pct", 50.0}, {"headline", true}}});
  r["checks"] = json::array({check("ab", "PASS")});
  write("ab.json", r);
  import();
  const auto ab = gate("ab");
  const Row* h = ab.headline();
  ASSERT_NE(h, nullptr);
  EXPECT_DOUBLE_EQ(*h->candidate.value, 990.0);
  ASSERT_TRUE(h->delta_pct.has_value());
  EXPECT_NEAR(*h->delta_pct, -1.0, 1e-9) << "the paired median of ratios, the gate's one Δ";
}

TEST_F(Import, ParityMustCoverEveryGemmVariantOfTheCandidate) {
  report_builds({{"capabilities", {{"gemm_variants", {"pipelined", "fused"}}}}}, nullptr);
  auto r = bound("parity", "PASS");
  r["checks"] = json::array({check("hello", "PASS", logits(1e-5)), check("ids", "PASS", logits(2e-5))});
  write("parity.json", r);
  EXPECT_EQ(import(), kExitFail);
  const auto p = gate("parity");
  std::vector<std::string> missing;
  for (const auto& c : p.checks)
    if (has(c.reason, "missing from the imported result")) missing.push_back(c.name);
  EXPECT_EQ(missing, (std::vector<std::string>{"hello gemm=fused", "ids gemm=fused"}));
}

namespace {

// capabilities.gemm_variants of a `--version --json`, as the report records a build's.
json offering(const json& variants) { return {{"capabilities", {{"gemm_variants", variants}}}}; }

// What a gate records of one call (core/ran_as_asked.h): what it asked and what the build reported.
json ran(const json& asked, const json& reported) { return {{"asked", asked}, {"reported", reported}}; }

// A parity check's logits metrics with the runs behind it, as the gate records them.
json parity_metrics(json m, const std::string& reported_gemm, const std::string& file_says_asked) {
  m["ran"] = {{"run", ran({{"gemm", file_says_asked}}, {{"backend", "cuda"}, {"path", "fast"}, {"gemm", reported_gemm}})},
              {"reference", ran({{"path", "generic"}}, {{"backend", "cuda"}, {"path", "generic"}, {"gemm", ""}})}};
  return m;
}

}  // namespace

TEST_F(Import, AVariantTheBaselineOfferedIsSettledByThePlanNotByTheFile) {
  // The candidate dropped `staged`; the imported file claims it passed, with clean-looking metrics.
  report_builds(offering({"fused", "pipelined"}), offering({"fused", "pipelined", "staged"}));
  auto r = bound("parity", "PASS");
  r["checks"] = json::array({check("hello", "PASS", parity_metrics(logits(1e-5), "fused", "")),
                             check("hello gemm=pipelined", "PASS", parity_metrics(logits(1e-5), "pipelined", "pipelined")),
                             check("ids", "PASS", parity_metrics(logits(1e-5), "fused", "")),
                             check("ids gemm=pipelined", "PASS", parity_metrics(logits(1e-5), "pipelined", "pipelined")),
                             check("gemm=staged", "PASS", logits(0))});
  write("parity.json", r);
  EXPECT_NE(import(), kExitPass);
  const auto p = gate("parity");
  EXPECT_EQ(p.status, Status::Inconclusive) << p.reason;
  int staged = 0;
  for (const auto& c : p.checks)
    if (c.name == "gemm=staged") {
      ++staged;
      EXPECT_EQ(c.status, Status::Inconclusive);
      EXPECT_TRUE(has(c.reason, "offered by the baseline " + kBase + ", not by the candidate")) << c.reason;
    }
  EXPECT_EQ(staged, 1);
  EXPECT_NE(record().verdict, Verdict::Pass);
  // The pre-merge checklist asks for the human, not for a rerun.
  const std::string list = render_checklist(record());
  EXPECT_TRUE(has(list, "parity: undecided — 1 of 5 checks inconclusive: gemm=staged: GEMM variant 'staged' offered by the baseline " +
                            kBase + ", not by the candidate"))
      << list;
  EXPECT_TRUE(has(list, "a human must accept that retirement")) << list;
}

TEST_F(Import, ParityMustCoverTheBaselinesVariantsWhateverTheProfileNames) {
  // The report's (candidate's) profile names `fused` alone; the baseline offered `pipelined` too.
  std::string text = kProfile;
  const std::string at = "    max_rel_dev: 1.0e-3\n";
  text.replace(text.find(at), at.size(), at + "    gemm_variants: [fused]\n");
  const auto narrowed = GateProfile::parse(text, "landing.yaml");
  report_builds(offering({"fused", "pipelined"}), offering({"fused", "pipelined"}), &narrowed);
  auto r = bound("parity", "PASS");
  r["binding"]["profile_sha256"] = narrowed.sha256();
  r["checks"] = json::array({check("hello", "PASS", logits(1e-5)), check("ids", "PASS", logits(2e-5))});
  write("parity.json", r);
  EXPECT_EQ(import(), kExitFail);
  const auto p = gate("parity");
  EXPECT_EQ(p.status, Status::Fail);
  std::vector<std::string> missing;
  for (const auto& c : p.checks)
    if (has(c.reason, "missing from the imported result")) missing.push_back(c.name);
  EXPECT_EQ(missing, (std::vector<std::string>{"hello gemm=pipelined", "ids gemm=pipelined"}));
}

TEST_F(Import, AParityRunOfAnotherVariantThanThePlanAskedIsAFail) {
  // The file's own "asked" says fused for the pipelined check, matching its report; the plan of the
  // report's builds, not the file, says what that check asked. A waiver changes nothing.
  std::string text = kProfile;
  text.replace(text.find("waivers: []"), 11, "waivers:\n  - {gate: parity, match: '* gemm=pipelined', reason: known}");
  const auto waiving = GateProfile::parse(text, "landing.yaml");
  report_builds(offering({"fused", "pipelined"}), offering({"fused", "pipelined"}), &waiving);
  auto r = bound("parity", "PASS");
  r["binding"]["profile_sha256"] = waiving.sha256();
  r["checks"] = json::array({check("hello", "PASS", parity_metrics(logits(1e-5), "fused", "")),
                             check("hello gemm=pipelined", "PASS", parity_metrics(logits(1e-5), "fused", "fused")),
                             check("ids", "PASS", parity_metrics(logits(1e-5), "fused", "")),
                             check("ids gemm=pipelined", "PASS", parity_metrics(logits(1e-5), "pipelined", "pipelined"))});
  write("parity.json", r);
  EXPECT_EQ(import(), kExitFail);
  const auto p = gate("parity");
  for (const auto& c : p.checks) {
    if (c.name != "hello gemm=pipelined") {
      EXPECT_EQ(c.status, Status::Pass) << c.name << ": " << c.reason;
      continue;
    }
    EXPECT_EQ(c.status, Status::Fail);
    EXPECT_FALSE(c.waivable);
    EXPECT_EQ(c.reason, "the candidate " + kCand + " was asked for gemm 'pipelined' (--gemm) but reports gemm 'fused'");
  }
}

TEST_F(Import, AParityResultThatRecordsNoReportProvesNothing) {
  // Written by a landing that did not check what the candidate ran: its logits alone are no proof.
  report_builds(offering({"fused"}), nullptr);
  auto r = bound("parity", "PASS");
  r["checks"] = json::array({check("hello", "PASS", logits(1e-5)), check("ids", "PASS", parity_metrics(logits(1e-5), "fused", ""))});
  write("parity.json", r);
  EXPECT_EQ(import(), kExitFail);
  const auto p = gate("parity");
  EXPECT_EQ(p.checks.at(0).status, Status::Fail);
  EXPECT_FALSE(p.checks.at(0).waivable);
  EXPECT_TRUE(has(p.checks.at(0).reason, "the imported result records nothing of what the candidate " + kCand +
                                             " reported it ran (its landing did not check it)"))
      << p.checks.at(0).reason;
  EXPECT_EQ(p.checks.at(1).status, Status::Pass) << p.checks.at(1).reason;
}

namespace {

// An A/B result of 8 equal pairs whose every bench recorded what it reported; the candidate's
// sample of pair `liar` (-1: none) says it ran `pipelined` instead of its default.
json ab_result(json bound_result, int liar) {
  const json asked = {{"subcommand", "bench"}, {"backend", "cuda"}, {"path", "fast"}};
  const auto sample = [&](const std::string& gemm) {
    return json{{"tps", {{"pp512", 1000.0}}}, {"ran", ran(asked, {{"backend", "cuda"}, {"path", "fast"}, {"gemm", gemm}})}};
  };
  json pairs = json::array();
  for (int i = 0; i < 8; ++i)
    pairs.push_back({{"baseline", sample("fused")}, {"candidate", sample(i == liar ? "pipelined" : "fused")}, {"throttled", false}});
  bound_result["details"]["pairs"] = pairs;
  bound_result["checks"] = json::array({{{"name", "ab"}, {"status", "PASS"}, {"reason", "claimed"}}});
  return bound_result;
}

}  // namespace

TEST_F(Import, AnAbSampleOfAnotherVariantFailsTheGate) {
  report_builds(offering({"fused", "pipelined"}), offering({"fused", "pipelined"}));
  write("ab.json", ab_result(bound("ab", "PASS"), 5));
  import();
  const auto ab = gate("ab");
  EXPECT_EQ(ab.status, Status::Fail) << ab.reason;
  EXPECT_FALSE(ab.checks.at(0).waivable);
  EXPECT_EQ(ab.checks.at(0).reason, "the candidate " + kCand +
                                        " was asked for gemm 'fused' (its default: the first of capabilities.gemm_variants) but "
                                        "reports gemm 'pipelined'");
}

TEST_F(Import, AnAbResultWhoseEverySampleRanAsAskedIsJudgedByItsPairs) {
  report_builds(offering({"fused", "pipelined"}), offering({"fused", "pipelined"}));
  write("ab.json", ab_result(bound("ab", "PASS"), -1));
  import();
  EXPECT_EQ(gate("ab").status, Status::Pass) << gate("ab").reason;
}

TEST_F(Import, AGreedyStreamOfAnotherPathThanTheGateChoseIsAFail) {
  // gates.greedy.backend is "auto": the result's details say the GPU host chose CUDA, fast path.
  report_builds(offering({"fused"}), offering({"fused"}));
  const json asked = {{"subcommand", "greedy"}, {"backend", "cuda"}, {"path", "fast"}};
  json metrics = {{"baseline_ids", {1, 2, 3}}, {"candidate_ids", {1, 2, 3}}, {"baseline_text", "abc"}, {"candidate_text", "abc"}};
  metrics["ran"] = {{"baseline", ran(asked, {{"backend", "cuda"}, {"path", "fast"}, {"gemm", "fused"}})},
                    {"candidate", ran(asked, {{"backend", "cuda"}, {"path", "generic"}, {"gemm", "fused"}})}};
  auto r = bound("greedy", "PASS");
  r["details"]["backend"] = "cuda";
  r["checks"] = json::array({check("hello", "PASS", metrics)});
  write("greedy.json", r);
  import();
  const auto g = gate("greedy");
  EXPECT_EQ(g.status, Status::Fail) << g.reason;
  EXPECT_EQ(g.checks.at(0).reason, "the candidate " + kCand + " was asked for path 'fast' but reports path 'generic'");
}

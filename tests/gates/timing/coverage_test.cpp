// Unguarded kernels (timing/kernel_coverage.h, timing_judge.h judge_coverage): a kernel of the
// candidate's kernel-resources.json that no traced run launched is listed; one whose code changed
// (SASS hash, or ptxas resources where no hashes exist) makes the timing gate INCONCLUSIVE and so the
// landing INCOMPLETE (issue 9 hole 5); an unchanged one is listed and passes; an import re-judges
// the stored evidence rather than the claimed check.
#include <gtest/gtest.h>

#include "timing/kernel_coverage.h"
#include "timing/timing_judge.h"

using namespace pfx::gates;
using nlohmann::json;

namespace {

KernelResources kernel(const std::string& name, int regs) {
  KernelResources k;
  k.name = name;
  k.mangled = "_Z" + std::to_string(name.size()) + name + "v";
  k.source = "kernels/" + name + ".cu";
  k.registers = regs;
  return k;
}

const Check* find(const GateResult& r, const std::string& name) {
  for (const auto& c : r.checks)
    if (c.name == name) return &c;
  return nullptr;
}

// The prefill GEMM ran; the decode GEMV did not. `gemv_regs` is the candidate's GEMV registers.
CoverageInput two_kernels(int gemv_regs, bool sass, bool gemv_sass_changed) {
  CoverageInput in;
  in.resources_known = true;
  in.baseline = {kernel("k_gemm", 128), kernel("k_gemv", 40)};
  in.candidate = {kernel("k_gemm", 128), kernel("k_gemv", gemv_regs)};
  in.launched = {in.candidate[0].mangled};
  if (sass) {
    in.baseline_sass.available = in.candidate_sass.available = true;
    for (const auto& k : in.baseline) in.baseline_sass.by_mangled[k.mangled] = "h-" + k.name;
    for (const auto& k : in.candidate) in.candidate_sass.by_mangled[k.mangled] = "h-" + k.name;
    if (gemv_sass_changed) in.candidate_sass.by_mangled[in.candidate[1].mangled] = "h-new";
  } else {
    in.baseline_sass.reason = in.candidate_sass.reason = "no cuobjdump";
  }
  return in;
}

GateResult judged(const CoverageInput& in) {
  GateResult r;
  r.gate = "timing";
  r.details["coverage"] = kernel_coverage(in);
  judge_coverage(r);
  return r;
}

}  // namespace

TEST(TimingCoverage, ChangedButUnlaunchedKernelIsInconclusive) {
  const auto r = judged(two_kernels(40, true, true));
  const Check* c = find(r, "coverage");
  ASSERT_NE(c, nullptr);
  EXPECT_EQ(c->status, Status::Inconclusive);
  EXPECT_NE(c->reason.find("1 of 2 kernels launched by no traced run"), std::string::npos) << c->reason;
  EXPECT_NE(c->reason.find("code changed (SASS hash) but never launched: k_gemv"), std::string::npos) << c->reason;
  ASSERT_EQ(r.tables.size(), 1u);
  EXPECT_EQ(r.tables[0].id, "unguarded");
  EXPECT_TRUE(r.tables[0].in_markdown);
  ASSERT_EQ(r.tables[0].rows.size(), 1u);
  EXPECT_EQ(r.tables[0].rows[0].cells[0].text, "k_gemv");
  EXPECT_EQ(r.tables[0].rows[0].check, "coverage");
}

TEST(TimingCoverage, UnchangedUnlaunchedKernelIsListedAndPasses) {
  const auto r = judged(two_kernels(40, true, false));
  const Check* c = find(r, "coverage");
  ASSERT_NE(c, nullptr);
  EXPECT_EQ(c->status, Status::Pass) << c->reason;
  EXPECT_NE(c->reason.find("none with changed code (SASS hash)"), std::string::npos) << c->reason;
  ASSERT_EQ(r.tables.size(), 1u);
  EXPECT_EQ(r.tables[0].rows[0].cells[2].text, "unchanged");
}

TEST(TimingCoverage, WithoutSassHashesPtxasResourcesDecideAndSaySo) {
  const auto changed = judged(two_kernels(48, false, false));
  EXPECT_EQ(find(changed, "coverage")->status, Status::Inconclusive);
  EXPECT_NE(find(changed, "coverage")->reason.find("(ptxas resources)"), std::string::npos) << find(changed, "coverage")->reason;
  EXPECT_NE(find(changed, "coverage")->reason.find("SASS hashes unavailable (no cuobjdump)"), std::string::npos);
  const auto same = judged(two_kernels(40, false, false));
  EXPECT_EQ(find(same, "coverage")->status, Status::Pass);
  // A kernel the baseline lacks is new code.
  auto in = two_kernels(40, false, false);
  in.candidate.push_back(kernel("k_new", 32));
  EXPECT_EQ(find(judged(in), "coverage")->status, Status::Inconclusive);
}

TEST(TimingCoverage, EveryKernelLaunchedPassesWithNoTable) {
  auto in = two_kernels(48, true, true);
  in.launched.insert(in.candidate[1].mangled);
  const auto r = judged(in);
  EXPECT_EQ(find(r, "coverage")->status, Status::Pass);
  EXPECT_TRUE(r.tables.empty());
}

TEST(TimingCoverage, NoKernelListIsSkippedWithTheReason) {
  CoverageInput in;
  in.resources_note = "engine/cli/kernel-resources.json: cannot open";
  const auto r = judged(in);
  EXPECT_EQ(find(r, "coverage")->status, Status::Skipped);
  EXPECT_NE(find(r, "coverage")->reason.find("cannot open"), std::string::npos);
}

TEST(TimingCoverage, ImportReJudgesTheEvidenceNotTheClaim) {
  GateResult r = judged(two_kernels(40, true, true));
  for (auto& c : r.checks) c.status = Status::Pass;  // a forged claim
  r.details["models"] = json::array();
  rejudge_timing(r, GateProfile::parse("schema: gate-profile/1\ngates:\n  timing: {}\n", "p.yaml"));
  EXPECT_EQ(find(r, "coverage")->status, Status::Inconclusive);
}

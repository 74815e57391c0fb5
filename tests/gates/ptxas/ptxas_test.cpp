// The ptxas gate: sm_90 blocks/SM arithmetic (checked against the seed's r38/r39/r40 figures),
// budgets per kernel glob, baseline → candidate deltas, on a real kernel-resources.json of this
// repository's kernels (data/, produced by the build's ptxas capture; see data/README).
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "ptxas/kernel_resources.h"
#include "ptxas/occupancy.h"
#include "ptxas/ptxas_gate.h"
#include "util/error.h"

using namespace pfx::gates;
namespace fs = std::filesystem;

TEST(Occupancy, SeedFiguresOnSm90) {
  // r39: 8 warps, 29,696 B smem, 87 regs → register-limited at 2 blocks/SM.
  auto o = blocks_per_sm(87, 256, 29696);
  EXPECT_EQ(o.blocks_per_sm, 2);
  EXPECT_EQ(o.limiter, "registers");
  EXPECT_EQ(blocks_per_sm(85, 256, 29696).blocks_per_sm, 2);
  // r40: 87 → 80 regs buys the third resident block.
  EXPECT_EQ(blocks_per_sm(80, 256, 29696).blocks_per_sm, 3);
  // Shared memory: (29,696 + 1 KiB reserved) per block → 7 fit in 228 KiB.
  EXPECT_EQ(blocks_per_sm(32, 256, 29696).by_smem, 7);
  // 2 × 59,392 B would not fit; 116 KiB + 1 KiB per block: 1 block.
  o = blocks_per_sm(32, 128, 116 * 1024);
  EXPECT_EQ(o.blocks_per_sm, 1);
  EXPECT_EQ(o.limiter, "shared memory");
  // Warps and the 32-block cap.
  EXPECT_EQ(blocks_per_sm(16, 1024, 0).blocks_per_sm, 2);
  EXPECT_EQ(blocks_per_sm(16, 32, 0).blocks_per_sm, 32);
  // Impossible launches and unknown block size.
  EXPECT_EQ(blocks_per_sm(32, 128, 228 * 1024).blocks_per_sm, 0);
  EXPECT_FALSE(blocks_per_sm(32, 0, 0).known);
  EXPECT_EQ(blocks_per_sm(256, 128, 0).blocks_per_sm, 0);
}

TEST(KernelResources, ReadsRealFileOfOurKernels) {
  const auto f = read_kernel_resources(fs::path(PFX_PTXAS_DATA) / "kernel-resources.json");
  EXPECT_EQ(f.arch, "sm_90a");
  ASSERT_GE(f.kernels.size(), 5u);
  int with_shape = 0;
  for (const auto& k : f.kernels) {
    EXPECT_EQ(k.name.rfind("k_", 0), 0u) << k.name;  // STYLE.md: kernels are named k_<family>_<variant>
    EXPECT_GT(k.registers, 0) << k.name;
    if (k.threads_per_block > 0) {
      ++with_shape;
      EXPECT_TRUE(blocks_per_sm(k.registers, k.threads_per_block, k.smem_bytes()).known);
    }
  }
  EXPECT_GT(with_shape, 0);
}

TEST(KernelResources, MalformedFilesNameTheField) {
  const fs::path p = fs::temp_directory_path() / "pfx-bad-resources.json";
  {
    std::ofstream(p) << R"({"schema":"kernel-resources/1","kernels":[{"name":"k_a","registers":-3,"spill_store_bytes":0,"spill_load_bytes":0}]})";
  }
  try {
    read_kernel_resources(p);
    FAIL();
  } catch (const pfx::Error& e) {
    EXPECT_NE(std::string(e.what()).find("kernels[0]: field 'registers' must be a non-negative integer"), std::string::npos) << e.what();
  }
  fs::remove(p);
}

TEST(PtxasGate, BudgetsAndDeltasOnRealFile) {
  const auto base = read_kernel_resources(fs::path(PFX_PTXAS_DATA) / "kernel-resources.json");
  auto cand = base;
  // Plant: the first kernel with a known block size gains 40 registers and spills 8 bytes.
  KernelResources* k = nullptr;
  for (auto& x : cand.kernels)
    if (x.threads_per_block > 0 && !k) k = &x;
  ASSERT_NE(k, nullptr);
  const int before = k->registers;
  k->registers += 40;
  k->spill_store_bytes = 8;
  const nlohmann::json budgets = nlohmann::json::parse(
      R"([{"kernels":"*","max_spill_bytes":0},{"kernels":")" + k->name + R"(","max_regs":)" + std::to_string(before) + "}]");
  GateResult r;
  r.gate = "ptxas";
  compare_kernel_resources(r, &base, cand, budgets, "p.yaml");
  settle_from_checks(r);
  EXPECT_EQ(r.status, Status::Fail);
  EXPECT_EQ(r.checks.size(), cand.kernels.size());  // one check per kernel
  const Check* c = nullptr;
  for (const auto& x : r.checks)
    if (x.status == Status::Fail) c = &x;
  ASSERT_NE(c, nullptr);
  EXPECT_NE(c->reason.find(std::to_string(before + 40) + " regs > budget " + std::to_string(before)), std::string::npos) << c->reason;
  EXPECT_NE(c->reason.find("8 B spill > budget 0"), std::string::npos);
  EXPECT_NE(r.evidence.find(std::to_string(before) + " → " + std::to_string(before + 40) + " regs"), std::string::npos) << r.evidence;
  // Unchanged files: every kernel within "spill 0" budget, evidence says unchanged.
  GateResult same;
  same.gate = "ptxas";
  compare_kernel_resources(same, &base, base, nlohmann::json::parse(R"([{"kernels":"*","max_spill_bytes":0}])"), "p.yaml");
  settle_from_checks(same);
  EXPECT_NE(same.evidence.find("unchanged vs baseline"), std::string::npos) << same.evidence;
}

TEST(PtxasGate, MinBlocksBudgetAndEmptyFile) {
  KernelResourceFile f;
  f.arch = "sm_90a";
  f.kernels.push_back({"k_gemm_q6k_bt", "", "", 87, 0, 0, 0, 0, 29696, 256});
  GateResult r;
  r.gate = "ptxas";
  compare_kernel_resources(r, nullptr, f, nlohmann::json::parse(R"([{"kernels":"k_gemm_q6k*","min_blocks_per_sm":3}])"), "p.yaml");
  settle_from_checks(r);
  EXPECT_EQ(r.status, Status::Fail);
  EXPECT_NE(r.checks[0].reason.find("2 blocks/SM < budget 3 (limited by registers"), std::string::npos) << r.checks[0].reason;
  GateResult none;
  none.gate = "ptxas";
  compare_kernel_resources(none, nullptr, KernelResourceFile{}, nlohmann::json::array(), "p.yaml");
  settle_from_checks(none);
  EXPECT_EQ(none.status, Status::Fail);  // zero kernels: checked nothing
}

// ptxas's performance notes (C7512: wgmma serialized): a note the baseline's kernel lacks fails its
// check, one it has too passes, and one that cannot be compared (a baseline file from before the
// notes were recorded, or a candidate file without the notes its baseline records) is
// inconclusive, never a pass.
TEST(PtxasGate, NewWgmmaSerializationFailsAndUnknownIsInconclusive) {
  const std::string c7512 = "C7512: wgmma.mma_async instructions are serialized due to insufficient register resources";
  KernelResources k{"k_gemm_ws<12, 256, true>", "", "", 168, 0, 0, 0, 0, 200000, 384};
  KernelResourceFile base, cand;
  base.arch = cand.arch = "sm_90a";
  k.performance_notes = std::vector<std::string>{};
  base.kernels.push_back(k);
  k.performance_notes = std::vector<std::string>{c7512};
  cand.kernels.push_back(k);
  const auto judge = [](const KernelResourceFile* b, const KernelResourceFile& c) {
    GateResult r;
    r.gate = "ptxas";
    compare_kernel_resources(r, b, c, nlohmann::json::parse(R"([{"kernels":"*","max_spill_bytes":0}])"), "p.yaml");
    settle_from_checks(r);
    return r;
  };
  const GateResult fresh = judge(&base, cand);
  EXPECT_EQ(fresh.status, Status::Fail);
  EXPECT_NE(fresh.checks[0].reason.find("ptxas " + c7512 + " (new"), std::string::npos) << fresh.checks[0].reason;
  EXPECT_NE(fresh.evidence.find("ptxas C7512 (NEW)"), std::string::npos) << fresh.evidence;

  const GateResult kept = judge(&cand, cand);
  EXPECT_EQ(kept.status, Status::Pass) << kept.checks[0].reason;
  EXPECT_NE(kept.checks[0].reason.find("ptxas C7512 (as baseline)"), std::string::npos) << kept.checks[0].reason;

  KernelResourceFile old_base = base;
  old_base.kernels[0].performance_notes.reset();  // a file written before the notes were recorded
  const GateResult unknown = judge(&old_base, cand);
  EXPECT_EQ(unknown.checks[0].status, Status::Inconclusive) << unknown.checks[0].reason;
  EXPECT_NE(unknown.checks[0].reason.find("cannot be told"), std::string::npos) << unknown.checks[0].reason;
  EXPECT_NE(unknown.status, Status::Pass);

  KernelResourceFile unrecorded = cand;  // the candidate's build stopped recording the notes
  unrecorded.kernels[0].performance_notes.reset();
  const GateResult hidden = judge(&base, unrecorded);
  EXPECT_EQ(hidden.checks[0].status, Status::Inconclusive) << hidden.checks[0].reason;
  EXPECT_NE(hidden.checks[0].reason.find("cannot be ruled out"), std::string::npos) << hidden.checks[0].reason;

  KernelResourceFile added = cand;  // a kernel the baseline does not have, serialized from the start
  added.kernels[0].name = "k_new";
  EXPECT_EQ(judge(&base, added).status, Status::Fail);
  EXPECT_EQ(judge(&base, base).status, Status::Pass);  // no notes anywhere
}

TEST(KernelResources, PerformanceNotesAreReadOrNamedWhenMalformed) {
  const fs::path p = fs::temp_directory_path() / "pfx-notes-resources.json";
  const auto write = [&](const std::string& notes) {
    std::ofstream(p) << R"({"schema":"kernel-resources/1","kernels":[{"name":"k_a","registers":3,"spill_store_bytes":0,)"
                        R"("spill_load_bytes":0)" + notes + "}]}";
  };
  write("");
  EXPECT_FALSE(read_kernel_resources(p).kernels[0].performance_notes.has_value());
  write(R"(,"performance_notes":["C7512: x"])");
  EXPECT_EQ(read_kernel_resources(p).kernels[0].performance_notes, std::vector<std::string>{"C7512: x"});
  write(R"(,"performance_notes":"C7512")");
  try {
    read_kernel_resources(p);
    FAIL();
  } catch (const pfx::Error& e) {
    EXPECT_NE(std::string(e.what()).find("kernels[0]: field 'performance_notes' must be a list of strings"), std::string::npos)
        << e.what();
  }
  fs::remove(p);
}

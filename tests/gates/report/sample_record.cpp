// See sample_record.h.
#include "sample_record.h"

using namespace pfx::gates;
using nlohmann::json;

LandingRecord sample_record() {
  LandingRecord r;
  r.id = "f2b9e54aaaaa";
  r.candidate_id = "f2b9e54aaaaa";
  r.seq = 42;
  r.prev = "0c1d2e3f4a5b";
  r.created = "2026-09-05T12:00:00Z";
  r.baseline = {{"label", "baseline"}, {"rev", "HEAD~1"}, {"sha", "0c1d2e3f4a5b6c7d8e9f"}, {"id", "0c1d2e3f4a5b"}, {"ok", true}, {"cached", true}};
  r.candidate = {{"label", "candidate"}, {"rev", "HEAD"}, {"sha", "f2b9e54aaaaabbbbcccc"}, {"id", "f2b9e54aaaaa"}, {"ok", true}, {"seconds", 312.0}};
  r.environment = {{"host", "ci-1"}, {"cpu", "Xeon"}, {"cores", 2}, {"memory_gib", 24.0}, {"os", "Linux"}, {"nvcc", "release 13.0"},
                   {"gpu", {{"name", "NVIDIA H200"}, {"driver_version", "570.124.06"}, {"cuda_driver_version", "13.0"}, {"source", "nvml"}}}};
  r.profile_path = "profiles/gates/default.yaml";
  r.profile = {{"schema", "gate-profile/1"}, {"gates", {{"parity", {{"max_rel_dev", 0.1}}}}},
               {"waivers", json::array({{{"gate", "greedy"}, {"match", "*"}, {"reason", "r40 reorders the q6_K sum"}}})}};
  r.baseline_profile = {{"schema", "gate-profile/1"}, {"gates", {{"parity", {{"max_rel_dev", 0.001}}}}}, {"waivers", json::array()}};
  r.profile_changes = diff_profiles(r.baseline_profile, r.profile);
  r.enabled_gates = {"parity", "accuracy", "greedy", "ptxas", "suite", "timing", "ab"};

  GateResult parity;
  parity.gate = "parity";
  parity.checks = {{"tiny-once", Status::Pass, "max rel dev 3.10e-05"}, {"q6k-ids64", Status::Fail, "max rel dev 4.00e-03 > 1.00e-03",
                                                                         "prefill logits --model q6k.gguf --path fast\nprefill logits --model q6k.gguf --path generic"}};
  parity.evidence = "logits fast vs generic (cuda): max rel dev 4.00e-03 (gate 1.00e-03, worst q6k-ids64)";
  parity.command = "landing gate parity --baseline 0c1d2e3f4a5b --candidate f2b9e54aaaaa --gates profiles/gates/default.yaml";
  settle_from_checks(parity);
  r.put(parity);

  GateResult greedy;
  greedy.gate = "greedy";
  greedy.checks = {{"q6k-lily", Status::Waived, "first divergence at generated token 17", "", true, "r40 reorders the q6_K sum"}};
  greedy.evidence = "greedy 1 prompts × 32 tokens on the CUDA fast path: 0/1 byte-identical";
  settle_from_checks(greedy);
  r.put(greedy);

  GateResult accuracy = skipped_result("accuracy", "unavailable here (exit 3): no usable CUDA GPU");
  accuracy.needs_gpu = true;
  r.put(accuracy);

  GateResult ptxas;
  ptxas.gate = "ptxas";
  ptxas.details["kernels"] = json::array(
      {{{"kernel", "k_gemm_q6k_bt"},
        {"baseline", {{"registers", 85}, {"spill_store_bytes", 0}, {"spill_load_bytes", 0}, {"stack_bytes", 0}, {"static_smem_bytes", 0},
                      {"dynamic_smem_bytes", 29696}, {"threads_per_block", 256}, {"blocks_per_sm", 2}, {"limiter", "registers"}}},
        {"candidate", {{"registers", 87}, {"spill_store_bytes", 0}, {"spill_load_bytes", 0}, {"stack_bytes", 0}, {"static_smem_bytes", 0},
                       {"dynamic_smem_bytes", 29696}, {"threads_per_block", 256}, {"blocks_per_sm", 2}, {"limiter", "registers"}}},
        {"budgets", json::array({{{"kernels", "*"}, {"max_spill_bytes", 0}}})}}});
  ptxas.checks = {{"k_gemm_q6k_bt", Status::Pass, "85 → 87 regs, 0 B spill, 2 blocks/SM kept (within budget)"}};
  ptxas.evidence = "1 kernels, max 87 regs, 0 B spill in total; changed: k_gemm_q6k_bt 85 → 87 regs, 0 B spill, 2 blocks/SM kept";
  settle_from_checks(ptxas);
  r.put(ptxas);

  GateResult suite;
  suite.gate = "suite";
  suite.details = {{"passed", 166}, {"failed", 0}, {"skipped", 3}};
  suite.checks = {{"ctest", Status::Pass, "166 passed, 0 failed, 3 skipped"}};
  suite.evidence = "suite 166/0/3 (passed/failed/skipped)";
  settle_from_checks(suite);
  r.put(suite);

  GateResult timing;
  timing.gate = "timing";
  timing.details["models"] = json::array(
      {{{"model", "llama-7b-q4km"}, {"reps", 3}, {"baseline_kernel_ns", 330000000.0}, {"candidate_kernel_ns", 290000000.0},
        {"kernels", json::array({{{"key", "k_gemm_q6k_bt"}, {"baseline_ns", 2549248.0}, {"candidate_ns", 2046848.0}, {"delta_ns", -502400.0},
                                  {"delta_pct", -19.708}, {"status", "changed"}},
                                 {{"key", "k_gemm_q4k_128x128"}, {"baseline_ns", 9000000.0}, {"candidate_ns", 9050000.0}, {"delta_ns", 50000.0},
                                  {"delta_pct", 0.56}, {"status", "changed"}}})},
        {"roles", json::array({{{"key", "attn_v"}, {"baseline_ns", 2549248.0}, {"candidate_ns", 2046848.0}, {"delta_ns", -502400.0},
                                {"delta_pct", -19.708}, {"status", "changed"}}})}}});
  timing.checks = {{"llama-7b-q4km", Status::Pass, "2 kernels traced"}};
  timing.evidence = "llama-7b-q4km: top movers: k_gemm_q6k_bt 2,549,248 → 2,046,848 ns (-19.7%)";
  settle_from_checks(timing);
  r.put(timing);

  GateResult ab;
  ab.gate = "ab";
  json pairs = json::array();
  for (int i = 0; i < 6; ++i)
    pairs.push_back({{"baseline", {{"tps", 1568.7 + i}}}, {"candidate", {{"tps", 1777.5 - i}}}, {"ratio", (1777.5 - i) / (1568.7 + i)},
                     {"excluded_throttled", i == 5}});
  ab.details = {{"pairs", pairs},
                {"aa", {{"pairs", json::array({{{"a", {{"tps", 1568.0}}}, {"a2", {{"tps", 1569.0}}}, {"ratio", 1.0006}}})}}},
                {"headline", {{"metric", "pp512 tok/s"}, {"before", 1568.7}, {"after", 1777.5}, {"delta_pct", 13.31}}}};
  ab.checks = {{"ab", Status::Pass, "improved: +13.3%, CI +12.9%..+13.5% excludes zero"}};
  ab.evidence = "A/B interleaved 5/5 wins: 1568.7 → 1777.5 tok/s (pp512), median Δ +13.3%";
  settle_from_checks(ab);
  r.put(ab);
  r.recompute_verdict();
  return r;
}

// See sample_record.h.
#include "sample_record.h"

#include <gtest/gtest.h>

#include "ab/ab_report.h"
#include "ptxas/ptxas_gate.h"
#include "report/ledger.h"
#include "suite/suite_gate.h"
#include "timing/timing_report.h"

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
  auto q6k = [](int registers) {
    KernelResources k;
    k.name = "k_gemm_q6k_bt";
    k.registers = registers;
    k.dynamic_smem_bytes = 29696;
    k.threads_per_block = 256;
    return k;
  };
  const KernelResourceFile ptxas_base{"sm_90a", {q6k(85)}}, ptxas_cand{"sm_90a", {q6k(87)}};
  compare_kernel_resources(ptxas, &ptxas_base, ptxas_cand, json::array({{{"kernels", "*"}, {"max_spill_bytes", 0}}}), "default.yaml");
  settle_from_checks(ptxas);
  r.put(ptxas);

  GateResult suite;
  suite.gate = "suite";
  // The suite is judged from its test cases (suite/suite_judge.h): 166 that passed. (A skipped
  // test would make it INCONCLUSIVE: it did not check what it skipped.)
  JUnitReport junit{{}, 166, 0, 0};
  for (int i = 0; i < 166; ++i) junit.cases.push_back({"Suite", "Suite", "Test" + std::to_string(i), TestOutcome::Passed, 0.01, ""});
  judge_junit(suite, junit);
  settle_from_checks(suite);
  r.put(suite);

  GateResult timing;
  timing.gate = "timing";
  using pfx::trace::DiffRow;
  TimingModel model{"llama-7b-q4km", 512, {}};
  model.diff.repetitions = 3;
  model.diff.per_pass = true;
  model.diff.busy_range = "prefill";
  model.diff.a_kernel_ns = 330000000.0;
  model.diff.b_kernel_ns = 290000000.0;
  auto diff_row = [](const char* key, double a, double b, double pct) {
    DiffRow d;
    d.key = key;
    d.a_ns = a;
    d.b_ns = b;
    d.delta_ns = b - a;
    d.delta_percent = pct;
    return d;
  };
  model.diff.kernels = {diff_row("k_gemm_q6k_bt", 2549248.0, 2046848.0, -19.708), diff_row("k_gemm_q4k_128x128", 9000000.0, 9050000.0, 0.56)};
  DiffRow attn_v = diff_row("attn_v", 2549248.0, 2046848.0, -19.708);
  attn_v.a_flops = attn_v.b_flops = 2.0 * 512 * 4096 * 1024 * 32;  // 2·T·rows·cols over 32 layers
  attn_v.a_flop_ns = attn_v.a_ns;
  attn_v.b_flop_ns = attn_v.b_ns;
  attn_v.bytes = 32 * 4096 * 1024 * 0.8203125;  // q6_K weights: 210 bytes per 256 values
  model.diff.roles = {attn_v};
  timing.details["models"] = json::array({to_json(model)});
  add_timing_output(timing, model, 0);
  timing.checks = {{"llama-7b-q4km", Status::Pass, "2 kernels traced"}};
  timing.evidence = "llama-7b-q4km: top movers: k_gemm_q6k_bt 2,549,248 → 2,046,848 ns (-19.7%)";
  settle_from_checks(timing);
  r.put(timing);

  GateResult ab;
  ab.gate = "ab";
  json pairs = json::array();
  AbFigures figures{"pp512 tok/s", 1568.7, 1777.5, 0.06, std::array<double, 2>{12.9, 13.5}};
  for (int i = 0; i < 6; ++i) {
    pairs.push_back({{"baseline", {{"tps", 1568.7 + i}}}, {"candidate", {{"tps", 1777.5 - i}}}, {"ratio", (1777.5 - i) / (1568.7 + i)},
                     {"excluded_throttled", i == 5}});
    figures.pairs.push_back({1568.7 + i, 1777.5 - i, i == 5});
  }
  figures.aa.push_back({1568.0, 1569.0});
  ab.details = {{"pairs", pairs}, {"aa", {{"pairs", json::array({{{"a", {{"tps", 1568.0}}}, {"a2", {{"tps", 1569.0}}}, {"ratio", 1.0006}}})}}}};
  add_ab_output(ab, figures);
  ab.checks = {{"ab", Status::Pass, "improved: +13.3%, CI +12.9%..+13.5% excludes zero"}};
  ab.evidence = "A/B interleaved 5/5 wins: 1568.7 → 1777.5 tok/s (pp512), median Δ +13.3%";
  settle_from_checks(ab);
  r.put(ab);
  r.recompute_verdict();
  return r;
}

void append_to_ledger(const std::filesystem::path& dir, LandingRecord rec) {
  Ledger ledger(dir);
  rec.id = ledger.reserve("abcdef0");
  ledger.append(rec);
}

void expect_self_contained(const std::string& html) {
  for (const char* outside : {"http://", "https://", "<link", "src="})
    EXPECT_EQ(html.find(outside), std::string::npos) << "the page loads from outside: " << outside;
}

// Weight bytes per GEMM role (gates/timing/role_bytes.h): from a hand-made `prefill info --json`
// (the rules: layers summed, vectors left out, fused roles, tied output) and from the real
// `prefill info --json` on a fixture model, where every GEMM role of a llama gets its bytes.
#include <gtest/gtest.h>

#include <filesystem>

#include "timing/role_bytes.h"
#include "util/error.h"
#include "util/fixtures.h"
#include "util/process.h"

using namespace pfx;
using namespace pfx::gates;
using nlohmann::json;

TEST(RoleBytes, SumsLayersSkipsVectorsAndJoinsFusedRoles) {
  const json info = json::parse(R"({"output_tied": true, "tensors": [
    {"name": "token_embd.weight", "dims": [64, 1000], "bytes": 128000},
    {"name": "blk.0.attn_norm.weight", "dims": [64], "bytes": 256},
    {"name": "blk.0.attn_v.weight", "dims": [64, 16], "bytes": 2048},
    {"name": "blk.1.attn_v.weight", "dims": [64, 16], "bytes": 2048},
    {"name": "blk.0.ffn_gate.weight", "dims": [64, 128], "bytes": 16384},
    {"name": "blk.0.ffn_up.weight", "dims": [64, 128], "bytes": 16384},
    {"name": "blk.0.attn_q.bias", "dims": [64], "bytes": 256}]})");
  const auto by_role = weight_bytes_by_role(info, "info.json");
  EXPECT_DOUBLE_EQ(by_role.at("attn_v"), 4096);
  EXPECT_EQ(by_role.count("attn_norm"), 0u);
  EXPECT_DOUBLE_EQ(by_role.at("output"), 128000);  // tied: the output GEMM reads token_embd
  EXPECT_DOUBLE_EQ(*role_weight_bytes(by_role, "ffn_gate+ffn_up"), 32768);
  EXPECT_FALSE(role_weight_bytes(by_role, "attn"));
  EXPECT_FALSE(role_weight_bytes(by_role, "ffn_gate+attn"));
  try {
    weight_bytes_by_role(json::parse(R"({"tensors": [{"name": "x"}]})"), "info.json");
    FAIL() << "accepted a tensor without dims and bytes";
  } catch (const pfx::Error& e) {
    EXPECT_NE(std::string(e.what()).find("info.json: tensors[0]"), std::string::npos) << e.what();
  }
}

TEST(RoleBytes, FromTheRealPrefillInfo) {
  const auto model = pfx::fixtures_dir() / "models" / "stories260K.gguf";
  if (!std::filesystem::exists(model)) GTEST_SKIP() << "fixture " << model << " missing (PFX_FIXTURES)";
  ProcessSpec spec;
  spec.argv = {PFX_PREFILL, "info", "--model", model.string(), "--json"};
  spec.timeout_s = 60;
  const auto p = run_process(spec);
  ASSERT_TRUE(p.ok()) << p.describe() << "\n" << p.tail(5);
  const auto by_role = weight_bytes_by_role(json::parse(p.out), "prefill info");
  for (const char* role : {"attn_q", "attn_k", "attn_v", "attn_output", "ffn_gate", "ffn_up", "ffn_down", "output"}) {
    ASSERT_TRUE(by_role.count(role)) << role;
    EXPECT_GT(by_role.at(role), 0) << role;
  }
}

// landing end to end with the real engine: a throwaway repository whose "build" copies this
// build's `prefill` binary, landed against itself on the tiny synthetic model and the fixtures.
// On a machine without a GPU the CUDA gates must say SKIPPED (exit 3 from prefill) and the
// verdict INCOMPLETE; greedy runs on the real CPU backend and must be byte-identical.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "throwaway_repo.h"

namespace fs = std::filesystem;
using namespace pfx::gates;

TEST(LandingE2EReal, RealEngineOnTheTinyModel) {
  ThrowawayRepo repo("real");
  // The build step copies the real binary (and its kernel resources, when CUDA built them).
  repo.write("CMakeLists.txt", std::string(R"(cmake_minimum_required(VERSION 3.20)
project(real_engine_copy NONE)
enable_testing()
file(MAKE_DIRECTORY ${CMAKE_BINARY_DIR}/engine/cli)
file(COPY )") + PFX_REAL_PREFILL + R"( DESTINATION ${CMAKE_BINARY_DIR}/engine/cli
     FILE_PERMISSIONS OWNER_READ OWNER_WRITE OWNER_EXECUTE GROUP_READ GROUP_EXECUTE WORLD_READ WORLD_EXECUTE)
get_filename_component(_dir )" + PFX_REAL_PREFILL + R"( DIRECTORY)
foreach(f kernel-resources.json kernel-resources.ptxas.txt)
  if(EXISTS ${_dir}/${f})
    file(COPY ${_dir}/${f} DESTINATION ${CMAKE_BINARY_DIR}/engine/cli)
  endif()
endforeach()
add_test(NAME copied COMMAND ${CMAKE_BINARY_DIR}/engine/cli/prefill --version --json)
)");
  fs::create_directories(repo.dir() / "profiles/models");
  fs::copy_file(fs::path(PFX_SOURCE_DIR) / "profiles/models/tiny.yaml", repo.dir() / "profiles/models/tiny.yaml");
  repo.write("landing.yaml", R"(schema: gate-profile/1
build: {cmake_args: [], prefill: engine/cli/prefill, timeout_s: 300}
models:
  tiny: {synth: profiles/models/tiny.yaml, seed: 1}
gpu_probe_model: tiny
gates:
  parity:
    timeout_s: 300
    cases: [{name: tiny, model: tiny, text: "Once upon a time"}, {name: stories-once, oracle: stories260K.once}]
  accuracy:
    timeout_s: 300
    cases: [stories260K.once]
  greedy:
    timeout_s: 600
    tokens: 8
    cases: [{name: tiny, model: tiny, text: "Once upon a time"}, {name: stories-lily, oracle: stories260K.lily}]
  suite: {timeout_s: 120}
  ab: {timeout_s: 300, model: tiny, prompt_tokens: 64, aa_pairs: 2, min_pairs: 3, max_pairs: 4}
waivers: []
)");
  repo.commit("real engine copy");
  const auto p = repo.run("HEAD", "HEAD");
  ASSERT_TRUE(p.exit_code == 0 || p.exit_code == 2) << p.describe() << "\n" << p.out << "\n" << p.tail(30);
  const auto rec = ThrowawayRepo::record(p);
  const GateResult* greedy = rec.gate("greedy");
  ASSERT_NE(greedy, nullptr);
  EXPECT_EQ(greedy->status, Status::Pass) << greedy->reason;
  EXPECT_EQ(greedy->checks.size(), 2u);
  const GateResult* parity = rec.gate("parity");
  ASSERT_NE(parity, nullptr);
  if (parity->status == Status::Skipped) {
    // No GPU here (or a build without CUDA): never PASS, and the reason says which.
    EXPECT_EQ(rec.verdict, Verdict::Incomplete);
    const bool no_gpu = parity->reason.find("exit 3") != std::string::npos;
    const bool no_cuda_build = parity->reason.find("lacks capability backends/cuda") != std::string::npos;
    EXPECT_TRUE(no_gpu || no_cuda_build) << parity->reason;
    EXPECT_EQ(rec.gate("ab")->status, Status::Skipped);
  } else {
    EXPECT_EQ(parity->status, Status::Pass) << parity->reason;
    EXPECT_EQ(rec.gate("accuracy")->status, Status::Pass) << rec.gate("accuracy")->reason;
  }
  EXPECT_EQ(rec.gate("suite")->status, Status::Pass) << rec.gate("suite")->reason;
}

// Graph-launched decode steps (DecodeGraph::On, engine/cuda/step_graph.h) against the same backend
// launching kernel by kernel (DecodeGraph::Off), label gpu, SKIPPED without a usable H200:
//  - the same prompt and greedy continuation give BITWISE equal logits at every step, on every
//    fixture with a fast decode attention kernel (head dim 64: llama, llama3 with rope_freqs,
//    qwen2 with neox RoPE and Q/K/V biases), over contexts crossing the decode attention's split
//    boundaries (every 64 keys at these head counts: contexts 21..140 cross 64 and 128);
//  - the first decode step runs kernel by kernel, every later one is a replay;
//  - after reset() the same graph serves a new sequence's steps (a one-token prompt at position 0
//    runs kernel by kernel: a prompt, with the generic path's bits);
//  - where a step cannot be one graph (pipelined variant; head dim without a fast attention
//    kernel) the backend says why in fallbacks(), replays nothing, and still gives the same bits.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <string>
#include <vector>

#include "cuda/cuda_backend.h"
#include "util/fixtures.h"

namespace fs = std::filesystem;
using pfx::cuda::CudaBackend;
using pfx::cuda::DecodeGraph;
using pfx::cuda::FastGemm;
using pfx::cuda::Path;

namespace {

#define REQUIRE_GPU() \
  if (!pfx::cuda::gpu_usable()) GTEST_SKIP() << "no usable GPU: " << pfx::cuda::gpu_status()

constexpr int kPromptTokens = 20;
constexpr int kSteps = 120;  // contexts 21 .. 140

int32_t argmax(const std::vector<float>& v) {
  return static_cast<int32_t>(std::max_element(v.begin(), v.end()) - v.begin());
}

std::vector<int32_t> prompt_ids(int64_t n_vocab, int n, int32_t salt) {
  std::vector<int32_t> ids;
  for (int i = 0; i < n; ++i) ids.push_back(static_cast<int32_t>((1 + 37 * i + salt) % n_vocab));
  return ids;
}

bool has_graph_fallback(const CudaBackend& b) {
  const auto& f = b.fallbacks();
  return std::any_of(f.begin(), f.end(), [](const std::string& s) { return s.starts_with("decode graph:"); });
}

// Runs `prompt` then `steps` greedy steps on both backends (the token fed to both is the argmax of
// the kernel-by-kernel logits) and requires bitwise equal logits after the prompt and every step.
void expect_same_bits(CudaBackend& graph, CudaBackend& stream, const std::vector<int32_t>& prompt, int steps) {
  auto a = graph.forward(prompt, false);
  auto b = stream.forward(prompt, false);
  ASSERT_EQ(a.size(), b.size());
  ASSERT_EQ(std::memcmp(a.data(), b.data(), a.size() * sizeof(float)), 0) << "prompt logits differ";
  for (int s = 0; s < steps; ++s) {
    const int32_t tok = argmax(b);
    a = graph.forward(std::vector<int32_t>{tok}, false);
    b = stream.forward(std::vector<int32_t>{tok}, false);
    ASSERT_EQ(std::memcmp(a.data(), b.data(), a.size() * sizeof(float)), 0)
        << "decode step " << s << " (context " << graph.position() << ") differs";
  }
  EXPECT_EQ(graph.position(), stream.position());
}

std::vector<fs::path> fast_attention_models() {
  return {pfx::fixtures_dir() / "models" / "kq256spm-q4km.gguf",
          pfx::project_fixtures_dir() / "models" / "llama3-q4km.gguf",
          pfx::project_fixtures_dir() / "models" / "qwen2-q4km.gguf"};
}

TEST(DecodeGraph, BitwiseEqualToKernelByKernelAcrossSplitBoundaries) {
  REQUIRE_GPU();
  for (const fs::path& path : fast_attention_models()) {
    SCOPED_TRACE(path.filename().string());
    const auto model = pfx::model::Model::load(path);
    const int64_t ctx = kPromptTokens + kSteps + 4;
    CudaBackend graph(model, Path::Fast, ctx, FastGemm::Fused, DecodeGraph::On);
    CudaBackend stream(model, Path::Fast, ctx, FastGemm::Fused, DecodeGraph::Off);
    EXPECT_EQ(graph.decode_graph(), "on");
    EXPECT_EQ(stream.decode_graph(), "off");
    expect_same_bits(graph, stream, prompt_ids(model.config().n_vocab, kPromptTokens, 0), kSteps);
    // The first decode step runs kernel by kernel; the second captures; every later one replays.
    EXPECT_EQ(graph.graph_replays(), kSteps - 1) << "every decode step but the first should be a replay";
    EXPECT_EQ(stream.graph_replays(), 0);
    EXPECT_FALSE(has_graph_fallback(graph));

    // A new sequence on the same graph: a one-token prompt (at position 0 kernel by kernel, in the
    // generic order: a prompt's bits), then steps, every one a replay.
    graph.reset();
    stream.reset();
    expect_same_bits(graph, stream, prompt_ids(model.config().n_vocab, 1, 5), 70);
    EXPECT_EQ(graph.graph_replays(), kSteps - 1 + 70);
  }
}

// Short enough for compute-sanitizer (scripts/gpu/decode_graph_check.sh): contexts 61..72 cross
// the split boundary at 64 with a handful of replays.
TEST(DecodeGraph, SmallCaseForSanitizers) {
  REQUIRE_GPU();
  const auto model = pfx::model::Model::load(pfx::project_fixtures_dir() / "models" / "llama3-q4km.gguf");
  CudaBackend graph(model, Path::Fast, 80, FastGemm::Fused, DecodeGraph::On);
  CudaBackend stream(model, Path::Fast, 80, FastGemm::Fused, DecodeGraph::Off);
  expect_same_bits(graph, stream, prompt_ids(model.config().n_vocab, 60, 1), 12);
  EXPECT_EQ(graph.graph_replays(), 11);
}

TEST(DecodeGraph, FallsBackWithAReasonWhereAStepCannotBeOneGraph) {
  REQUIRE_GPU();
  struct Fallback {
    fs::path model;
    FastGemm gemm;
    const char* why;
  };
  const std::vector<Fallback> cases = {
      {pfx::fixtures_dir() / "models" / "kq256spm-q4km.gguf", FastGemm::Pipelined, "pipelined"},
      {pfx::fixtures_dir() / "models" / "kq256-q4km.gguf", FastGemm::Fused, "attention"},  // head dim 32
  };
  for (const Fallback& c : cases) {
    SCOPED_TRACE(c.model.filename().string() + " " + pfx::cuda::fast_gemm_name(c.gemm));
    const auto model = pfx::model::Model::load(c.model);
    CudaBackend graph(model, Path::Fast, 64, c.gemm, DecodeGraph::On);
    CudaBackend stream(model, Path::Fast, 64, c.gemm, DecodeGraph::Off);
    expect_same_bits(graph, stream, prompt_ids(model.config().n_vocab, 8, 3), 12);
    EXPECT_EQ(graph.graph_replays(), 0);
    const auto& f = graph.fallbacks();
    EXPECT_TRUE(std::any_of(f.begin(), f.end(), [&](const std::string& s) {
      return s.starts_with("decode graph:") && s.find(c.why) != std::string::npos;
    })) << "no 'decode graph: ... " << c.why << "' among the fallbacks";
  }
}

TEST(DecodeGraph, GenericPathNeverUsesAGraph) {
  REQUIRE_GPU();
  const auto model = pfx::model::Model::load(pfx::fixtures_dir() / "models" / "kq256spm-q4km.gguf");
  CudaBackend b(model, Path::Generic, 32, FastGemm::Fused, DecodeGraph::On);
  b.forward(prompt_ids(model.config().n_vocab, 4, 0), false);
  b.forward(std::vector<int32_t>{7}, false);
  EXPECT_EQ(b.graph_replays(), 0);
  EXPECT_EQ(b.decode_graph(), "off");
}

}  // namespace

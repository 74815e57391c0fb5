// CpuBackend behaviour beyond the fixture numbers: batch-split and thread-count invariance
// (bitwise), resident vs streamed weights (bitwise), reset, and clear errors for bad input.
#include <gtest/gtest.h>

#include <vector>

#include "cpu/cpu_backend.h"
#include "model/greedy.h"
#include "model/llama.h"
#include "error_of.h"
#include "util/error.h"
#include "util/fixtures.h"

namespace {

using pfx::cpu::CpuBackend;
using pfx::model::Model;

Model load(const char* name) { return Model::load(pfx::fixtures_dir() / "models" / name); }

// "Once upon a time, there was a little girl named Lily." in the stories260K vocab (with BOS).
const std::vector<int32_t> kPrompt = {1, 403, 407, 261, 378, 432, 383, 286, 261, 376, 298, 315, 421, 395, 317, 426};

TEST(CpuBackend, SplitPrefillIsBitwiseIdenticalToOneBatch) {
  const Model m = load("kq256-q4km.gguf");
  CpuBackend whole(m, 64), split(m, 64);
  const std::vector<float> all = whole.forward(kPrompt, true);
  std::vector<float> pieces;
  const size_t cuts[] = {0, 1, 6, 7, 16};  // batches of 1, 5, 1 and 9 tokens
  for (size_t i = 0; i + 1 < std::size(cuts); ++i) {
    const std::span<const int32_t> part(kPrompt.data() + cuts[i], cuts[i + 1] - cuts[i]);
    const std::vector<float> l = split.forward(part, true);
    pieces.insert(pieces.end(), l.begin(), l.end());
  }
  EXPECT_EQ(split.position(), 16);
  EXPECT_EQ(all, pieces);
}

TEST(CpuBackend, LastLogitsAreTheLastRowOfAllLogits) {
  const Model m = load("stories260K.gguf");
  CpuBackend a(m, 32), b(m, 32);
  const std::vector<float> all = a.forward(kPrompt, true);
  const std::vector<float> last = b.forward(kPrompt, false);
  const int64_t v = m.config().n_vocab;
  ASSERT_EQ(last.size(), static_cast<size_t>(v));
  EXPECT_TRUE(std::equal(last.begin(), last.end(), all.end() - v));
}

TEST(CpuBackend, ThreadCountDoesNotChangeResults) {
  const Model m = load("kq256-q6k.gguf");
  CpuBackend one(m, 32, 1), three(m, 32, 3);
  EXPECT_EQ(one.forward(kPrompt, true), three.forward(kPrompt, true));
}

TEST(CpuBackend, StreamedWeightsMatchResidentWeights) {
  const Model m = load("kq256spm-q4km.gguf");
  CpuBackend resident(m, 32), streamed(m, 32, 0, /*resident_limit_bytes=*/0);
  EXPECT_TRUE(resident.weights_resident());
  EXPECT_FALSE(streamed.weights_resident());
  const std::vector<int32_t> prompt = {1, 450, 4996, 17354, 1701, 29916};
  EXPECT_EQ(resident.forward(prompt, true), streamed.forward(prompt, true));
}

TEST(CpuBackend, ResetRestartsAtPositionZero) {
  const Model m = load("stories260K.gguf");
  CpuBackend b(m, 32);
  const std::vector<float> first = b.forward(kPrompt, true);
  b.reset();
  EXPECT_EQ(b.position(), 0);
  EXPECT_EQ(b.forward(kPrompt, true), first);
}

TEST(CpuBackend, GreedyIsDeterministicAndFeedsTokensBack) {
  const Model m = load("stories260K.gguf");
  CpuBackend b(m, 64);
  const pfx::GreedyResult g1 = pfx::greedy(b, kPrompt, 8);
  EXPECT_EQ(b.position(), static_cast<int64_t>(kPrompt.size()) + 7);  // the last pick is not fed
  const pfx::GreedyResult g2 = pfx::greedy(b, kPrompt, 8);
  EXPECT_EQ(g1.generated, g2.generated);
  EXPECT_EQ(g1.last_logits, g2.last_logits);
  ASSERT_EQ(g1.generated.size(), 8u);
  EXPECT_EQ(g1.last_logits.size(), static_cast<size_t>(m.config().n_vocab));
  EXPECT_TRUE(pfx::greedy(b, kPrompt, 0).generated.empty());
}

using pfx::test::error_of;

TEST(CpuBackend, BadInputIsAClearErrorAndLeavesThePositionAlone) {
  const Model m = load("stories260K.gguf");
  CpuBackend b(m, 8);
  const std::vector<int32_t> bad = {1, 512};
  EXPECT_NE(error_of([&] { b.forward(bad, true); }).find("token id 512 at batch index 1 is outside the vocabulary [0, 512)"),
            std::string::npos);
  EXPECT_EQ(b.position(), 0);
  const std::vector<int32_t> negative = {-3};
  EXPECT_NE(error_of([&] { b.forward(negative, true); }).find("token id -3"), std::string::npos);
  EXPECT_NE(error_of([&] { b.forward({}, true); }).find("no tokens"), std::string::npos);
  EXPECT_NE(error_of([&] { b.forward(kPrompt, true); }).find("overrun the KV cache of 8 tokens"), std::string::npos);
  EXPECT_EQ(b.position(), 0);
  EXPECT_NE(error_of([&] { CpuBackend(m, 0); }).find("max_ctx is 0"), std::string::npos);
  EXPECT_NE(error_of([&] { pfx::greedy(b, std::span<const int32_t>(), 4); }).find("prompt is empty"), std::string::npos);
}

}  // namespace

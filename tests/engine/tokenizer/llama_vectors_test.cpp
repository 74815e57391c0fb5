// llama.cpp's own tokenizer test vectors for the llama-spm vocab (fixtures/vocab/: 46 cases,
// read by vocab_vectors.h as llama.cpp's tests/test-tokenizer-0.cpp does); plus the round trips
// of its tests/test-tokenizer-1-spm.cpp (every token, every code point).
#include <gtest/gtest.h>

#include <filesystem>
#include <string>
#include <vector>

#include "engine/tokenizer/vocab_vectors.h"
#include "gguf/gguf.h"
#include "tokenizer/spm.h"
#include "util/error.h"
#include "util/fixtures.h"

namespace {

namespace fs = std::filesystem;
using pfx::tok::SpmTokenizer;

constexpr size_t kExpectedCases = 46;

fs::path vocab_path() { return pfx::fixtures_dir() / "vocab" / "ggml-vocab-llama-spm.gguf"; }

const SpmTokenizer& tokenizer() {
  static const SpmTokenizer t = [] {
    const auto file = pfx::gguf::File::open(vocab_path());
    return SpmTokenizer(pfx::tok::vocab_from_gguf(file));
  }();
  return t;
}

using Case = pfx::test::VocabCase;

const std::vector<Case>& cases() {
  static const std::vector<Case> c = pfx::test::read_vocab_cases(vocab_path());
  return c;
}

using pfx::test::show_ids;

TEST(LlamaSpmVectors, FixtureHasAll46Cases) {
  ASSERT_EQ(cases().size(), kExpectedCases);
  EXPECT_EQ(cases()[2].text, "");  // the empty case survives parsing
  EXPECT_EQ(cases()[3].text, " ");
}

class LlamaSpmVector : public ::testing::TestWithParam<size_t> {};

TEST_P(LlamaSpmVector, EncodesLikeLlamaCpp) {
  ASSERT_EQ(cases().size(), kExpectedCases);
  const Case& c = cases()[GetParam()];
  const auto got = tokenizer().encode(c.text, /*add_bos=*/false);
  EXPECT_EQ(got, c.ids) << "input '" << c.text << "'\n  expected " << show_ids(c.ids)
                        << "\n  got      " << show_ids(got);
  // With BOS: the same ids after token 1 (the vocab sets add_bos_token).
  auto with_bos = c.ids;
  with_bos.insert(with_bos.begin(), 1);
  EXPECT_EQ(tokenizer().encode(c.text, /*add_bos=*/true), with_bos);
}

TEST_P(LlamaSpmVector, DecodeRoundTrips) {
  ASSERT_EQ(cases().size(), kExpectedCases);
  const Case& c = cases()[GetParam()];
  EXPECT_EQ(tokenizer().decode(c.ids), c.text);
  // llama_detokenize treats a leading BOS as the first token, so the prefix space stays.
  const std::string with_bos = c.text.empty() ? "" : " " + c.text;
  EXPECT_EQ(tokenizer().decode(tokenizer().encode(c.text, true)), with_bos);
}

INSTANTIATE_TEST_SUITE_P(Case, LlamaSpmVector, ::testing::Range<size_t>(0, kExpectedCases));

// test-tokenizer-1-spm: every token rendered with special text, re-tokenized with
// parse_special, renders the same.
TEST(LlamaSpmRoundTrip, EveryToken) {
  const SpmTokenizer& t = tokenizer();
  ASSERT_EQ(t.size(), 32000u);
  for (int32_t id = 0; id < static_cast<int32_t>(t.size()); ++id) {
    const std::string s = t.decode(std::vector<int32_t>{id}, /*special=*/true);
    const std::string back = t.decode(t.encode(s, false, /*parse_special=*/true), true);
    ASSERT_EQ(back, s) << "token " << id << " '" << t.vocab().pieces[id] << "'";
  }
}

// test-tokenizer-1-spm: every code point (less surrogates, the unassigned planes 4-14 and
// U+2581 itself, which decodes to a space) survives encode + decode.
TEST(LlamaSpmRoundTrip, EveryCodePoint) {
  const SpmTokenizer& t = tokenizer();
  size_t checked = 0;
  for (uint32_t cp = 0; cp < 0x110000; ++cp) {
    if ((cp >= 0xD800 && cp <= 0xDFFF) || (cp >= 0x40000 && cp <= 0xE0000) || cp == 0x2581) {
      continue;
    }
    const std::string s = pfx::test::utf8_of(cp);
    ASSERT_EQ(t.decode(t.encode(s, false, true)), s) << "code point U+" << std::hex << cp;
    ++checked;
  }
  EXPECT_GT(checked, 400000u);
}

TEST(LlamaSpmEdges, SpacesUnicodeAndInvalidBytes) {
  const SpmTokenizer& t = tokenizer();
  EXPECT_EQ(t.encode("", true), std::vector<int32_t>{1});
  EXPECT_EQ(t.encode("", false), std::vector<int32_t>{});
  // Invalid UTF-8 goes out as byte tokens (<0xFF> is id 258) and decodes back to the bytes.
  const std::string bad = "\xFF\xFE";
  const auto ids = t.encode(bad, false);
  EXPECT_EQ(ids, (std::vector<int32_t>{29871, 3 + 0xFF, 3 + 0xFE}));
  EXPECT_EQ(t.decode(ids), bad);
  EXPECT_EQ(t.decode(t.encode("   ", false)), "   ");
  EXPECT_EQ(t.decode(t.encode("\xE6\x97\xA5\xE6\x9C\xAC \xF0\x9F\xA6\x99", false)),
            "\xE6\x97\xA5\xE6\x9C\xAC \xF0\x9F\xA6\x99");
  EXPECT_THROW(t.decode(std::vector<int32_t>{1, 32000}), pfx::Error);
}

TEST(LlamaSpmVocab, ReadsSpecialIdsAndFlags) {
  const auto& v = tokenizer().vocab();
  EXPECT_EQ(v.bos, 1);
  EXPECT_EQ(v.eos, 2);
  EXPECT_EQ(v.unk, 0);
  EXPECT_EQ(v.pad, -1);
  EXPECT_TRUE(v.add_bos);
  EXPECT_FALSE(v.add_eos);
  EXPECT_TRUE(v.add_space_prefix);
  EXPECT_EQ(v.types[1], pfx::tok::kControl);
  EXPECT_EQ(v.types[3 + 0x0A], pfx::tok::kByte);
  EXPECT_EQ(tokenizer().token_to_piece(3 + 0x0A), "\n");
}

}  // namespace

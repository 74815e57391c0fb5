// The byte-level BPE tokenizer on llama.cpp's own vectors for the Llama 3 (llama-bpe) and Qwen2
// vocabs (fixtures/vocab/: 46 cases each, parsed by vocab_vectors.h as test-tokenizer-0 does),
// plus the round trips of llama.cpp's tests/test-tokenizer-1-bpe.cpp: every token detokenizes,
// re-tokenizes (parse_special) and detokenizes to the same text (and, with ignore_merges, back
// to that one token); every code point survives encode + decode.
#include <gtest/gtest.h>

#include <filesystem>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "engine/tokenizer/vocab_vectors.h"
#include "gguf/gguf.h"
#include "tokenizer/bpe.h"
#include "tokenizer/unicode.h"
#include "util/error.h"
#include "util/fixtures.h"

namespace {

namespace fs = std::filesystem;
using pfx::test::show_ids;
using pfx::test::VocabCase;
using pfx::tok::BpeTokenizer;

constexpr size_t kExpectedCases = 46;

struct VocabFixture {
  const char* file;
  size_t n_tokens;
  const char* flavor;
};
const VocabFixture kLlama3{"ggml-vocab-llama-bpe.gguf", 128256, "llama3"};
const VocabFixture kQwen2{"ggml-vocab-qwen2.gguf", 151936, "qwen2"};

fs::path vocab_path(const VocabFixture& v) { return pfx::fixtures_dir() / "vocab" / v.file; }

const BpeTokenizer& tokenizer(const VocabFixture& v) {
  static std::map<std::string, std::unique_ptr<BpeTokenizer>> cache;
  auto& slot = cache[v.file];
  if (!slot) slot = std::make_unique<BpeTokenizer>(pfx::tok::vocab_from_gguf(pfx::gguf::File::open(vocab_path(v))));
  return *slot;
}

const std::vector<VocabCase>& cases(const VocabFixture& v) {
  static std::map<std::string, std::vector<VocabCase>> cache;
  auto& slot = cache[v.file];
  if (slot.empty()) slot = pfx::test::read_vocab_cases(vocab_path(v));
  return slot;
}

// One test per vocab (each CTest test is a process that loads the vocab once): every case is
// checked and every mismatch reported.
void encodes_like_llama_cpp(const VocabFixture& v) {
  ASSERT_EQ(cases(v).size(), kExpectedCases);
  const BpeTokenizer& t = tokenizer(v);
  for (size_t i = 0; i < kExpectedCases; ++i) {
    const VocabCase& c = cases(v)[i];
    SCOPED_TRACE("case " + std::to_string(i) + ": '" + c.text + "'");
    const auto got = t.encode(c.text, /*add_bos=*/false);
    EXPECT_EQ(got, c.ids) << "expected " << show_ids(c.ids) << "\n  got      " << show_ids(got);
    // With add_special: BOS in front exactly when the vocab says so (llama3 yes, qwen2 no).
    auto with_bos = c.ids;
    if (t.vocab().add_bos) with_bos.insert(with_bos.begin(), t.vocab().bos);
    EXPECT_EQ(t.encode(c.text, /*add_bos=*/true), with_bos);
    // The pieces are lossless: concatenated they give back the text (valid UTF-8 in every case).
    EXPECT_EQ(t.decode_continuation(c.ids), c.text);
    // decode is llama_detokenize: with qwen2 the text itself; with llama3 after clean_spaces.
    EXPECT_EQ(t.decode(c.ids), t.flavor().clean_spaces ? pfx::tok::clean_spaces(c.text) : c.text);
  }
}

TEST(BpeVectors, Llama3All46CasesEncodeLikeLlamaCpp) { encodes_like_llama_cpp(kLlama3); }
TEST(BpeVectors, Qwen2All46CasesEncodeLikeLlamaCpp) { encodes_like_llama_cpp(kQwen2); }

TEST(BpeVectors, FixturesHaveAll46CasesAndTheRightFlavour) {
  for (const VocabFixture* v : {&kLlama3, &kQwen2}) {
    SCOPED_TRACE(v->file);
    EXPECT_EQ(cases(*v).size(), kExpectedCases);
    EXPECT_EQ(tokenizer(*v).size(), v->n_tokens);
    EXPECT_EQ(tokenizer(*v).flavor().name, v->flavor);
  }
}

// test-tokenizer-1-bpe: every token rendered with special text, re-tokenized with
// parse_special, renders the same (through llama_detokenize, so llama3's clean_spaces applies on
// both sides). Stronger, on the raw piece (no clean-up): it re-tokenizes to pieces that
// concatenate to it, and with ignore_merges to that one token. (llama.cpp's own size check runs on
// the cleaned text, which fails for llama3 tokens such as "Ġ!$": cleaned to "!$", two tokens;
// its test suite does not run test-tokenizer-1-bpe on llama-bpe.) Tokens whose text is not valid
// UTF-8 (lone bytes of multi-byte characters) are skipped there, and here.
bool valid_utf8(const std::string& s) {
  for (char32_t cp : pfx::tok::decode_utf8(s))
    if (cp == pfx::tok::kReplacementChar) return false;
  return true;
}

void every_token_round_trips(const VocabFixture& v) {
  const BpeTokenizer& t = tokenizer(v);
  size_t checked = 0;
  for (int32_t id = 0; id < static_cast<int32_t>(t.size()); ++id) {
    const std::vector<int32_t> self{id};
    const std::string raw = t.decode_continuation(self, /*special=*/true);
    if (raw.empty() || !valid_utf8(raw)) continue;
    const auto ids = t.encode(raw, false, /*parse_special=*/true);
    if (t.flavor().ignore_merges) {
      ASSERT_EQ(ids, self) << "token " << id << " '" << raw << "' re-tokenizes to " << show_ids(ids);
    }
    ASSERT_EQ(t.decode_continuation(ids, true), raw) << "token " << id << " → " << show_ids(ids);
    const std::string s = t.decode(self, true);
    ASSERT_EQ(t.decode(t.encode(s, false, true), true), s) << "token " << id << " '" << s << "'";
    ++checked;
  }
  EXPECT_GT(checked, t.size() * 9 / 10);
}

TEST(BpeRoundTrip, EveryLlama3Token) { every_token_round_trips(kLlama3); }
TEST(BpeRoundTrip, EveryQwen2Token) { every_token_round_trips(kQwen2); }

// test-tokenizer-1-bpe: every code point but the surrogates and the unassigned planes 4-14.
void every_code_point_round_trips(const VocabFixture& v) {
  const BpeTokenizer& t = tokenizer(v);
  size_t checked = 0;
  for (uint32_t cp = 0; cp < 0x110000; ++cp) {
    if ((cp >= 0xD800 && cp <= 0xDFFF) || (cp >= 0x40000 && cp <= 0xE0000)) continue;
    const std::string s = pfx::test::utf8_of(cp);
    ASSERT_EQ(t.decode(t.encode(s, false, true)), s) << "code point U+" << std::hex << cp;
    ++checked;
  }
  EXPECT_GT(checked, 400000u);
}

TEST(BpeRoundTrip, EveryCodePointLlama3) { every_code_point_round_trips(kLlama3); }
TEST(BpeRoundTrip, EveryCodePointQwen2) { every_code_point_round_trips(kQwen2); }

TEST(BpeVocab, Llama3SpecialTokensAndFlagsFromMetadata) {
  const BpeTokenizer& t = tokenizer(kLlama3);
  const auto& v = t.vocab();
  EXPECT_EQ(v.bos, 128000);
  EXPECT_EQ(v.eos, 128001);
  EXPECT_EQ(v.eot, 128009);  // <|eot_id|>, found by its text (no eot_token_id key)
  EXPECT_TRUE(v.add_bos);    // tokenizer.ggml.add_bos_token
  EXPECT_FALSE(v.add_space_prefix);
  EXPECT_EQ(v.pieces[128000], "<|begin_of_text|>");
  EXPECT_EQ(v.pieces[128009], "<|eot_id|>");
  // Control tokens are text unless parse_special, and render only with special.
  EXPECT_EQ(t.encode("<|eot_id|>", false, /*parse_special=*/true), std::vector<int32_t>{128009});
  std::vector<int32_t> twice = {128000, 128000};
  for (int32_t id : t.encode("Hi", false)) twice.push_back(id);
  EXPECT_EQ(t.encode("<|begin_of_text|>Hi", true, true), twice);
  EXPECT_GT(t.encode("<|eot_id|>", false, false).size(), 1u);
  EXPECT_EQ(t.token_to_piece(128009), "");
  EXPECT_EQ(t.token_to_piece(128009, true), "<|eot_id|>");
  EXPECT_EQ(t.token_to_piece(220), " ");   // "Ġ"
  EXPECT_EQ(t.token_to_piece(198), "\n");  // "Ċ"
}

TEST(BpeVocab, Qwen2AddsNoBosAndKeepsSpaces) {
  const BpeTokenizer& t = tokenizer(kQwen2);
  EXPECT_FALSE(t.vocab().add_bos);  // no add_bos_token key; llama.cpp's BPE default is false
  EXPECT_EQ(t.vocab().bos, 151643);
  EXPECT_EQ(t.vocab().eot, 151645);  // <|im_end|>
  EXPECT_EQ(t.encode("Hello", true), t.encode("Hello", false));
  EXPECT_FALSE(t.flavor().clean_spaces);
  const auto ids = t.encode("Hello , world !", false);
  EXPECT_EQ(t.decode(ids), "Hello , world !");
  // Digits are split one by one (\p{N}), llama3 takes up to three.
  EXPECT_EQ(t.encode("12345", false).size(), 5u);
  EXPECT_EQ(tokenizer(kLlama3).encode("12345", false).size(), 2u);
}

TEST(BpeEdges, InvalidUtf8BecomesTheReplacementCharacter) {
  // llama.cpp replaces each byte that starts no valid sequence by U+FFFD before splitting.
  for (const VocabFixture* v : {&kLlama3, &kQwen2}) {
    const BpeTokenizer& t = tokenizer(*v);
    EXPECT_EQ(t.decode(t.encode("a\xFF" "b", false)), "a\xEF\xBF\xBD" "b");
    EXPECT_EQ(t.decode(t.encode("\xE2\x82", false)), "\xEF\xBF\xBD\xEF\xBF\xBD");
    EXPECT_THROW(t.decode(std::vector<int32_t>{static_cast<int32_t>(t.size())}), pfx::Error);
  }
}

}  // namespace

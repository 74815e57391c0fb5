// The BPE building blocks on hand-made inputs: GPT-2's byte alphabet, the llama3/qwen2 split
// patterns, merge ranks on a tiny vocab, llama.cpp's clean_spaces, the ICU classes, and the
// refusals (unknown pre-tokenizer, malformed merges).
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "tokenizer/bpe.h"
#include "tokenizer/byte_encoding.h"
#include "tokenizer/pretokenizer.h"
#include "tokenizer/unicode.h"
#include "util/error.h"

namespace {

namespace tok = pfx::tok;
using tok::SplitPattern;

std::vector<std::string> split(SplitPattern p, const std::string& s) { return tok::split_words(p, s); }
using Words = std::vector<std::string>;

TEST(ByteAlphabet, PrintableBytesStandForThemselvesTheRestShiftAbove255) {
  EXPECT_EQ(tok::byte_to_code_point('a'), U'a');
  EXPECT_EQ(tok::byte_to_code_point(' '), U'\u0120');   // Ġ
  EXPECT_EQ(tok::byte_to_code_point('\n'), U'\u010A');  // Ċ
  EXPECT_EQ(tok::byte_to_code_point(0), U'\u0100');
  EXPECT_EQ(tok::byte_to_code_point(0xAD), U'\u0143');  // the 68th (last) remapped byte
  for (int b = 0; b < 256; ++b) {
    const auto back = tok::code_point_to_byte(tok::byte_to_code_point(static_cast<uint8_t>(b)));
    ASSERT_TRUE(back.has_value()) << b;
    EXPECT_EQ(*back, b);
  }
  EXPECT_FALSE(tok::code_point_to_byte(U' ').has_value());
  EXPECT_FALSE(tok::code_point_to_byte(U'\u0144').has_value());
  EXPECT_EQ(tok::byte_encode("a b"), "a\xC4\xA0" "b");
}

TEST(Unicode, IcuClassesAndLenientDecoding) {
  EXPECT_TRUE(tok::classify(U'\u00E9').letter);      // é
  EXPECT_TRUE(tok::classify(U'\u4E2D').letter);      // 中 (Lo)
  EXPECT_TRUE(tok::classify(U'\u0663').number);      // Arabic-Indic three (Nd)
  EXPECT_TRUE(tok::classify(U'\u2167').number);      // Roman numeral eight (Nl)
  EXPECT_TRUE(tok::classify(U'\u3000').whitespace);  // ideographic space
  EXPECT_TRUE(tok::classify(U'\u0085').whitespace);  // NEL: White_Space, as Python's \s
  EXPECT_FALSE(tok::classify(U'\u200B').whitespace); // zero width space is not White_Space
  EXPECT_FALSE(tok::classify(U'\u0301').letter);     // combining acute (Mn)
  EXPECT_EQ(tok::to_lower(U'S'), U's');
  EXPECT_EQ(tok::decode_utf8("a\x80" "b"), (std::vector<char32_t>{U'a', 0xFFFD, U'b'}));
  EXPECT_EQ(tok::decode_utf8("\xE2\x82" "a"), (std::vector<char32_t>{0xFFFD, 0xFFFD, U'a'}));
  EXPECT_EQ(tok::decode_utf8("\xC0\x80"), (std::vector<char32_t>{0xFFFD, 0xFFFD}));  // overlong
  EXPECT_EQ(tok::decode_utf8("\xED\xA0\x80").front(), 0xFFFDu);                    // surrogate
  EXPECT_EQ(tok::decode_utf8("\xF0\x9F\xA6\x99"), (std::vector<char32_t>{0x1F999}));
}

TEST(PreTokenizer, Llama3Pattern) {
  const auto L = SplitPattern::Llama3;
  EXPECT_EQ(split(L, "Hello world"), (Words{"Hello", " world"}));
  EXPECT_EQ(split(L, "I'm don't WE'LL"), (Words{"I", "'m", " don", "'t", " WE", "'LL"}));
  EXPECT_EQ(split(L, "1234567"), (Words{"123", "456", "7"}));
  EXPECT_EQ(split(L, "a  b"), (Words{"a", " ", " b"}));            // \s+(?!\S) leaves one space
  EXPECT_EQ(split(L, "a \n\n b"), (Words{"a", " \n\n", " b"}));    // \s*[\r\n]+
  EXPECT_EQ(split(L, "x...\n\ny"), (Words{"x", "...\n\n", "y"}));  // symbols take trailing newlines
  EXPECT_EQ(split(L, " ?!"), (Words{" ?!"}));
  EXPECT_EQ(split(L, "end   "), (Words{"end", "   "}));           // trailing run kept whole
  EXPECT_EQ(split(L, "\thello"), (Words{"\thello"}));             // one non-letter may lead letters
  EXPECT_EQ(split(L, "3rd"), (Words{"3", "rd"}));
  EXPECT_EQ(split(L, ""), (Words{}));
}

TEST(PreTokenizer, Qwen2SplitsDigitsOneByOne) {
  EXPECT_EQ(split(SplitPattern::Qwen2, "x 2024"), (Words{"x", " ", "2", "0", "2", "4"}));
}

TEST(PreTokenizer, UnknownNamesAreRefusedByName) {
  EXPECT_EQ(tok::bpe_flavor("llama-bpe", "f").name, "llama3");
  EXPECT_EQ(tok::bpe_flavor("qwen2", "f").split, SplitPattern::Qwen2);
  try {
    tok::bpe_flavor("gpt-4o", "model.gguf");
    FAIL() << "expected pfx::Error";
  } catch (const pfx::Error& e) {
    const std::string m = e.what();
    EXPECT_NE(m.find("model.gguf"), std::string::npos) << m;
    EXPECT_NE(m.find("'gpt-4o'"), std::string::npos) << m;
    EXPECT_NE(m.find("llama-bpe"), std::string::npos) << m;
  }
}

// A byte-level vocab: the 256 byte characters, then merged pieces.
tok::Vocab tiny_vocab(std::vector<std::string> merges, std::vector<std::string> extra, std::string pre = "qwen2") {
  tok::Vocab v;
  v.kind = tok::VocabKind::Bpe;
  v.pre = std::move(pre);
  for (int b = 0; b < 256; ++b) v.pieces.push_back(tok::byte_encode(std::string(1, static_cast<char>(b))));
  for (auto& e : extra) v.pieces.push_back(std::move(e));
  v.merges = std::move(merges);
  v.bos = v.eos = 0;
  v.add_bos = false;
  v.add_space_prefix = false;
  return v;
}

TEST(BpeMerge, LowestRankFirstThenLeftmost) {
  // "abc": (b,c) has rank 0 and beats (a,b) at rank 1, so a + bc; "abc" itself needs a merge.
  const tok::BpeTokenizer t(tiny_vocab({"b c", "a b"}, {"bc", "ab"}));
  EXPECT_EQ(t.encode("abc", false), (std::vector<int32_t>{'a', 256}));
  const tok::BpeTokenizer t2(tiny_vocab({"a b", "b c", "ab c"}, {"ab", "bc", "abc"}));
  EXPECT_EQ(t2.encode("abc", false), (std::vector<int32_t>{258}));
  // Equal ranks cannot happen, but a repeated pair keeps its first rank.
  const tok::BpeTokenizer t3(tiny_vocab({"a a", "a a"}, {"aa"}));
  EXPECT_EQ(t3.rank("a", "a"), 0);
  EXPECT_EQ(t3.encode("aaa", false), (std::vector<int32_t>{256, 'a'}));  // leftmost pair first
  EXPECT_EQ(t3.rank("a", "b"), -1);
}

TEST(BpeMerge, IgnoreMergesTakesAWholeWordToken) {
  // llama3: "abc" is a token, so it is taken even though no merge chain leads to it.
  const tok::BpeTokenizer t(tiny_vocab({"a b"}, {"ab", "abc"}, "llama-bpe"));
  EXPECT_EQ(t.encode("abc", false), (std::vector<int32_t>{257}));
  const tok::BpeTokenizer q(tiny_vocab({"a b"}, {"ab", "abc"}, "qwen2"));
  EXPECT_EQ(q.encode("abc", false), (std::vector<int32_t>{256, 'c'}));
}

TEST(BpeVocab, RefusesMalformedMergesAndMissingPre) {
  EXPECT_THROW(tok::BpeTokenizer(tiny_vocab({"ab"}, {})), pfx::Error);
  EXPECT_THROW(tok::BpeTokenizer(tiny_vocab({"a b"}, {}, "")), pfx::Error);
  EXPECT_THROW(tok::BpeTokenizer(tiny_vocab({}, {})), pfx::Error);
}

TEST(CleanSpaces, LlamaCppRules) {
  EXPECT_EQ(tok::clean_spaces("Hello , world ! Why ? Yes ."), "Hello, world! Why? Yes.");
  EXPECT_EQ(tok::clean_spaces("a ' b"), "a'b");
  EXPECT_EQ(tok::clean_spaces("it 's I 'm we 're you 've"), "it's I'm we're you've");
  EXPECT_EQ(tok::clean_spaces("don 't I 'd we 'll"), "don 't I 'd we 'll");  // llama.cpp keeps these
  EXPECT_EQ(tok::clean_spaces("x ' ' y"), "x'' y");  // after a collapse the next quote has no space before
  EXPECT_EQ(tok::clean_spaces(" ."), ".");
  EXPECT_EQ(tok::clean_spaces(""), "");
}

}  // namespace

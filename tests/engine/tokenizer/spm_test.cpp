// SpmTokenizer on small hand-built vocabs: merge order, space prefix, byte fallback, unknown
// bytes, BOS/EOS, user-defined and control pieces, rendering, decode, and vocab validation.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "tokenizer/byte_piece.h"
#include "tokenizer/spm.h"
#include "util/error.h"

namespace {

using pfx::tok::SpmTokenizer;
using pfx::tok::Vocab;
namespace tok = pfx::tok;

struct Piece {
  std::string text;
  float score;
  int32_t type;
};

// ids 0 <unk>, 1 <s>, 2 </s>, then 256 byte tokens (3..258) when with_bytes, then `normal`.
Vocab make_vocab(const std::vector<Piece>& extra, bool with_bytes = true) {
  Vocab v;
  auto add = [&](std::string text, float score, int32_t type) {
    v.pieces.push_back(std::move(text));
    v.scores.push_back(score);
    v.types.push_back(type);
  };
  add("<unk>", 0, tok::kUnknown);
  add("<s>", 0, tok::kControl);
  add("</s>", 0, tok::kControl);
  if (with_bytes) {
    for (int b = 0; b < 256; ++b) add(tok::byte_piece(static_cast<uint8_t>(b)), 0, tok::kByte);
  }
  for (const auto& p : extra) add(p.text, p.score, p.type);
  v.unk = 0;
  v.bos = 1;
  v.eos = 2;
  return v;
}

const std::vector<Piece> kLetters = {
    {"\xE2\x96\x81", -1.0f, tok::kNormal},           // ▁
    {"a", -2.0f, tok::kNormal},
    {"b", -2.0f, tok::kNormal},
    {"c", -2.0f, tok::kNormal},
    {"ab", -1.5f, tok::kNormal},
    {"bc", -1.0f, tok::kNormal},
    {"\xE2\x96\x81" "a", -3.0f, tok::kNormal},      // ▁a
    {"\xE2\x96\x81" "b", -3.0f, tok::kNormal},      // ▁b
    {"\xE2\x96\x81\xE2\x96\x81", -4.0f, tok::kNormal},  // ▁▁
};

std::vector<int32_t> ids(const SpmTokenizer& t, const std::vector<std::string>& pieces) {
  std::vector<int32_t> out;
  for (const auto& p : pieces) {
    const int32_t id = t.piece_id(p);
    EXPECT_GE(id, 0) << "test vocab lacks '" << p << "'";
    out.push_back(id);
  }
  return out;
}

int32_t byte_id(uint8_t b) { return 3 + b; }

Vocab no_prefix(Vocab v) {
  v.add_space_prefix = false;
  return v;
}

TEST(SpmEncode, MergesBestScoreFirst) {
  // (b,c) scores -1.0 and beats (a,b) at -1.5: "a" + "bc"; with "abc" present it then merges.
  SpmTokenizer t(no_prefix(make_vocab(kLetters)));
  EXPECT_EQ(t.encode("abc", false), ids(t, {"a", "bc"}));
  auto with_abc = kLetters;
  with_abc.push_back({"abc", -5.0f, tok::kNormal});
  SpmTokenizer t2(no_prefix(make_vocab(with_abc)));
  EXPECT_EQ(t2.encode("abc", false), ids(t2, {"abc"}));
}

TEST(SpmEncode, EqualScoresMergeLeftmostFirst) {
  SpmTokenizer t(no_prefix(make_vocab({{"a", -2, tok::kNormal}, {"aa", -1, tok::kNormal}})));
  EXPECT_EQ(t.encode("aaa", false), ids(t, {"aa", "a"}));
  EXPECT_EQ(t.encode("aaaaa", false), ids(t, {"aa", "aa", "a"}));
}

TEST(SpmEncode, AddsSpacePrefixAndEscapesSpaces) {
  SpmTokenizer t(make_vocab(kLetters));
  EXPECT_EQ(t.encode("a b", false), ids(t, {"\xE2\x96\x81" "a", "\xE2\x96\x81" "b"}));
  SpmTokenizer np(no_prefix(make_vocab(kLetters)));
  EXPECT_EQ(np.encode("a b", false), ids(np, {"a", "\xE2\x96\x81" "b"}));
}

TEST(SpmEncode, EmptyAndSpaceOnlyTexts) {
  SpmTokenizer t(make_vocab(kLetters));
  EXPECT_EQ(t.encode("", false), std::vector<int32_t>{});
  EXPECT_EQ(t.encode("", true), std::vector<int32_t>{1});
  // " " becomes "▁▁" (prefix + the space) and merges into one piece.
  EXPECT_EQ(t.encode(" ", false), ids(t, {"\xE2\x96\x81\xE2\x96\x81"}));
  EXPECT_EQ(t.encode("  ", false), ids(t, {"\xE2\x96\x81\xE2\x96\x81", "\xE2\x96\x81"}));
}

TEST(SpmEncode, UnknownCharactersFallBackToBytes) {
  SpmTokenizer t(no_prefix(make_vocab(kLetters)));
  EXPECT_EQ(t.encode("\xC3\xA9", false), (std::vector<int32_t>{byte_id(0xC3), byte_id(0xA9)}));
  EXPECT_EQ(t.encode("\n", false), (std::vector<int32_t>{byte_id('\n')}));
}

TEST(SpmEncode, InvalidUtf8LeadByteSwallowsFollowingBytesLikeLlamaCpp) {
  // 0xFF reads as a 4-byte lead, so "\xFF" "ab" is one 3-byte symbol (clamped at the end) that
  // is no piece: all three bytes go out as byte tokens, as llama.cpp does.
  SpmTokenizer t(no_prefix(make_vocab(kLetters)));
  EXPECT_EQ(t.encode("\xFF" "ab", false),
            (std::vector<int32_t>{byte_id(0xFF), byte_id('a'), byte_id('b')}));
  // A lone continuation byte is a one-byte symbol.
  EXPECT_EQ(t.encode("a\x80", false), (std::vector<int32_t>{t.piece_id("a"), byte_id(0x80)}));
}

TEST(SpmEncode, MissingByteTokensGiveUnknownOrAClearError) {
  SpmTokenizer t(no_prefix(make_vocab(kLetters, /*with_bytes=*/false)));
  EXPECT_EQ(t.encode("a\xC3\xA9", false), (std::vector<int32_t>{t.piece_id("a"), 0, 0}));
  Vocab v = no_prefix(make_vocab(kLetters, false));
  v.unk = -1;
  SpmTokenizer no_unk(v);
  try {
    no_unk.encode("\xC3\xA9", false);
    FAIL() << "expected pfx::Error";
  } catch (const pfx::Error& e) {
    EXPECT_NE(std::string(e.what()).find("<0xC3>"), std::string::npos) << e.what();
  }
}

TEST(SpmEncode, RawBytePieceIsTheSecondFallback) {
  // Without "<0x7A>", llama.cpp's byte_to_token tries the one-character piece "z".
  Vocab v = no_prefix(make_vocab({{"z", -1, tok::kNormal}}, /*with_bytes=*/false));
  SpmTokenizer t(v);
  EXPECT_EQ(t.encode("z", false), (std::vector<int32_t>{t.piece_id("z")}));
}

TEST(SpmEncode, BosAndEosFollowTheVocabFlags) {
  SpmTokenizer t(make_vocab(kLetters));
  EXPECT_EQ(t.encode("a", true), (std::vector<int32_t>{1, t.piece_id("\xE2\x96\x81" "a")}));
  Vocab nobos = make_vocab(kLetters);
  nobos.add_bos = false;
  EXPECT_EQ(SpmTokenizer(nobos).encode("a", true), ids(t, {"\xE2\x96\x81" "a"}));
  Vocab eos = make_vocab(kLetters);
  eos.add_eos = true;
  EXPECT_EQ(SpmTokenizer(eos).encode("a", true),
            (std::vector<int32_t>{1, t.piece_id("\xE2\x96\x81" "a"), 2}));
  EXPECT_EQ(SpmTokenizer(eos).encode("a", false), ids(t, {"\xE2\x96\x81" "a"}));
}

TEST(SpmEncode, UserDefinedPiecesAlwaysMatchAndRestartTheSpacePrefix) {
  auto pieces = kLetters;
  pieces.push_back({"<tag>", 0, tok::kUserDefined});
  SpmTokenizer t(make_vocab(pieces));
  const int32_t tag = t.piece_id("<tag>");
  EXPECT_EQ(t.encode("a<tag>b", false),
            (std::vector<int32_t>{t.piece_id("\xE2\x96\x81" "a"), tag,
                                  t.piece_id("\xE2\x96\x81" "b")}));
  EXPECT_EQ(t.encode("<tag><tag>", false), (std::vector<int32_t>{tag, tag}));
}

TEST(SpmEncode, ControlPiecesMatchOnlyWithParseSpecial) {
  SpmTokenizer t(make_vocab(kLetters));
  EXPECT_EQ(t.encode("<s>a", false, /*parse_special=*/true),
            (std::vector<int32_t>{1, t.piece_id("\xE2\x96\x81" "a")}));
  const auto plain = t.encode("<s>a", false);
  EXPECT_EQ(plain.front(), t.piece_id("\xE2\x96\x81"));
  EXPECT_EQ(plain[1], byte_id('<'));
}

TEST(SpmDecode, RendersPiecesByType) {
  auto pieces = kLetters;
  pieces.push_back({"<tag>", 0, tok::kUserDefined});
  pieces.push_back({"gone", 0, tok::kUnused});
  SpmTokenizer t(make_vocab(pieces));
  EXPECT_EQ(t.token_to_piece(t.piece_id("\xE2\x96\x81" "a")), " a");
  EXPECT_EQ(t.token_to_piece(byte_id('\n')), "\n");
  EXPECT_EQ(t.token_to_piece(byte_id(0xFF)), "\xFF");
  EXPECT_EQ(t.token_to_piece(0), "");
  EXPECT_EQ(t.token_to_piece(1), "");
  EXPECT_EQ(t.token_to_piece(t.piece_id("<tag>")), "<tag>");
  EXPECT_EQ(t.token_to_piece(t.piece_id("gone")), "");
  // special = llama.cpp's unparse_special: control and unknown tokens show their text.
  EXPECT_EQ(t.token_to_piece(1, /*special=*/true), "<s>");
  EXPECT_EQ(t.token_to_piece(0, /*special=*/true), "<unk>");
  EXPECT_EQ(t.token_to_piece(t.piece_id("gone"), /*special=*/true), "");
  EXPECT_EQ(t.decode(std::vector<int32_t>{1, t.piece_id("\xE2\x96\x81" "a")}, true), "<s> a");
}

TEST(SpmDecode, StripsOneLeadingSpaceOfTheFirstTokenOnly) {
  SpmTokenizer t(make_vocab(kLetters));
  const auto a = t.piece_id("\xE2\x96\x81" "a"), b = t.piece_id("\xE2\x96\x81" "b");
  const auto two = t.piece_id("\xE2\x96\x81\xE2\x96\x81");
  EXPECT_EQ(t.decode(std::vector<int32_t>{a, b}), "a b");
  EXPECT_EQ(t.decode(std::vector<int32_t>{two, a}), "  a");
  // llama_detokenize: a leading BOS is the first token, so the next piece keeps its space.
  EXPECT_EQ(t.decode(std::vector<int32_t>{1, a, b}), " a b");
  EXPECT_EQ(t.decode(std::vector<int32_t>{}), "");
  SpmTokenizer np(no_prefix(make_vocab(kLetters)));
  EXPECT_EQ(np.decode(std::vector<int32_t>{a, b}), " a b");
  EXPECT_EQ(t.decode_continuation(std::vector<int32_t>{a, b}), " a b");
  EXPECT_THROW(t.decode_continuation(std::vector<int32_t>{a, -1}), pfx::Error);
}

TEST(SpmDecode, RoundTripsTextWithoutBos) {
  SpmTokenizer t(make_vocab(kLetters));
  for (std::string s : {"", " ", "abc", " a  b ", "\xC3\xA9t\xC3\xA9\n", "\xFF\xFE", "x\ty"}) {
    EXPECT_EQ(t.decode(t.encode(s, false)), s) << "'" << s << "'";
  }
}

TEST(SpmDecode, OutOfRangeIdsAreClearErrors) {
  SpmTokenizer t(make_vocab(kLetters));
  const int32_t n = static_cast<int32_t>(t.size());
  try {
    t.decode(std::vector<int32_t>{3, n});
    FAIL() << "expected pfx::Error";
  } catch (const pfx::Error& e) {
    const std::string m = e.what();
    EXPECT_NE(m.find("ids[1] = " + std::to_string(n)), std::string::npos) << m;
  }
  EXPECT_THROW(t.decode(std::vector<int32_t>{-1}), pfx::Error);
  EXPECT_THROW(t.token_to_piece(n), pfx::Error);
  EXPECT_THROW(t.token_to_piece(-7), pfx::Error);
}

TEST(SpmVocab, RejectsMalformedVocabs) {
  auto expect_error = [](Vocab v, const std::string& needle) {
    try {
      SpmTokenizer t(std::move(v));
      ADD_FAILURE() << "expected pfx::Error mentioning '" << needle << "'";
    } catch (const pfx::Error& e) {
      EXPECT_NE(std::string(e.what()).find(needle), std::string::npos) << e.what();
    }
  };
  Vocab dup = make_vocab({{"a", 0, tok::kNormal}, {"a", 0, tok::kNormal}});
  expect_error(dup, "appears at ids");
  Vocab scores = make_vocab(kLetters);
  scores.scores.pop_back();
  expect_error(scores, "scores for");
  Vocab types = make_vocab(kLetters);
  types.types.push_back(tok::kNormal);
  expect_error(types, "token types for");
  Vocab byte = make_vocab({{"<0xZZ>", 0, tok::kByte}}, false);
  expect_error(byte, "<0xHH>");
  Vocab bos = make_vocab(kLetters);
  bos.bos = -1;
  expect_error(bos, "add_bos");
  Vocab range = make_vocab(kLetters);
  range.unk = 100000;
  expect_error(range, "UNK token id 100000");
  expect_error(Vocab{}, "no pieces");
}

TEST(SpmVocab, EmptyPiecesGetLlamaCppPlaceholderNames) {
  Vocab v = make_vocab({{"", 0, tok::kNormal}, {"a", 0, tok::kNormal}});
  SpmTokenizer t(v);
  EXPECT_EQ(t.vocab().pieces[259], "[EMPTY_259]");
  EXPECT_EQ(t.piece_id("[EMPTY_259]"), 259);
}

TEST(SpmVocab, MissingScoresAndTypesDefault) {
  Vocab v;
  v.pieces = {"<s>", "a", "\xE2\x96\x81" "a"};
  v.bos = 0;
  SpmTokenizer t(v);
  EXPECT_EQ(t.vocab().scores, std::vector<float>(3, 0.0f));
  EXPECT_EQ(t.vocab().types, std::vector<int32_t>(3, tok::kNormal));
  EXPECT_EQ(t.encode("a", true), (std::vector<int32_t>{0, 2}));
  EXPECT_EQ(t.token_to_piece(0), "<s>");  // a normal-typed piece renders verbatim
}

}  // namespace

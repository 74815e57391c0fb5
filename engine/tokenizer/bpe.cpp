// Byte-level BPE encode/decode with llama.cpp's semantics (see bpe.h). The merge loop follows
// llm_tokenizer_bpe_session in llama.cpp's src/llama-vocab.cpp.
#include "tokenizer/bpe.h"

#include <algorithm>
#include <queue>

#include "tokenizer/byte_encoding.h"
#include "tokenizer/unicode.h"
#include "util/error.h"

namespace pfx::tok {
namespace {

std::string rank_key(std::string_view left, std::string_view right) {
  std::string key;
  key.reserve(left.size() + 1 + right.size());
  key.append(left);
  key += '\0';  // never inside a byte-level symbol (byte 0 is spelled U+0100)
  key.append(right);
  return key;
}

// The bytes a normal token's characters spell. A character outside the byte alphabet (only in a
// malformed vocab) is kept as its UTF-8 (llama.cpp prints "[UNK_BYTE_0x…]" there).
std::string byte_decode(const std::string& piece) {
  std::string out;
  for (char32_t cp : decode_utf8(piece)) {
    if (const auto b = code_point_to_byte(cp)) {
      out += static_cast<char>(*b);
    } else {
      append_utf8(out, cp);
    }
  }
  return out;
}

}  // namespace

BpeTokenizer::BpeTokenizer(Vocab vocab)
    : Tokenizer(std::move(vocab)), flavor_(bpe_flavor(vocab_.pre, "vocab")) {
  if (vocab_.kind != VocabKind::Bpe) fail("BpeTokenizer: the vocab is not a BPE (gpt2) vocab");
  render_pieces(byte_decode);
  ranks_.reserve(vocab_.merges.size());
  for (size_t i = 0; i < vocab_.merges.size(); ++i) {
    const std::string& m = vocab_.merges[i];
    const size_t space = m.size() > 1 ? m.find(' ', 1) : std::string::npos;
    if (space == std::string::npos)
      fail("vocab: tokenizer.ggml.merges[", i, "] = '", m, "': expected two symbols separated by a space");
    ranks_.emplace(rank_key(std::string_view(m).substr(0, space), std::string_view(m).substr(space + 1)),
                   static_cast<int>(i));  // emplace keeps the first rank of a repeated pair
  }
}

int BpeTokenizer::rank(std::string_view left, std::string_view right) const {
  const auto it = ranks_.find(rank_key(left, right));
  return it == ranks_.end() ? -1 : it->second;
}

void BpeTokenizer::encode_text(std::string_view text, bool /*after_special*/, std::vector<int32_t>& out) const {
  for (const std::string& word : split_words(flavor_.split, text)) encode_word(byte_encode(word), out);
}

// Symbols form a doubly linked list over the encoded word's characters; a candidate is a pair of
// neighbours that is a merge. The candidate of lowest rank (then leftmost) merges into its left
// symbol and the new neighbour pairs are queued. A popped candidate is stale when either side has
// changed since it was queued: symbols only grow, so comparing the summed length with the queued
// length detects exactly that.
void BpeTokenizer::encode_word(const std::string& word, std::vector<int32_t>& out) const {
  if (flavor_.ignore_merges) {
    if (const int32_t id = piece_id(word); id >= 0) {
      out.push_back(id);
      return;
    }
  }
  struct Symbol {
    int prev, next;
    size_t begin, length;  // length 0: merged away
  };
  std::vector<Symbol> syms;
  for (size_t off = 0; off < word.size();) {
    const size_t len = std::min(utf8_sequence_length(static_cast<unsigned char>(word[off])), word.size() - off);
    const int index = static_cast<int>(syms.size());
    syms.push_back({index - 1, off + len == word.size() ? -1 : index + 1, off, len});
    off += len;
  }
  const std::string_view text = word;

  struct Candidate {
    int rank;
    int left, right;
    size_t length;
  };
  auto after = [](const Candidate& a, const Candidate& b) {
    return a.rank > b.rank || (a.rank == b.rank && a.left > b.left);
  };
  std::priority_queue<Candidate, std::vector<Candidate>, decltype(after)> queue(after);
  auto consider = [&](int left, int right) {
    if (left < 0 || right < 0) return;
    const Symbol& l = syms[static_cast<size_t>(left)];
    const Symbol& r = syms[static_cast<size_t>(right)];
    const int k = rank(text.substr(l.begin, l.length), text.substr(r.begin, r.length));
    if (k >= 0) queue.push({k, left, right, l.length + r.length});
  };
  for (int i = 1; i < static_cast<int>(syms.size()); ++i) consider(i - 1, i);

  while (!queue.empty()) {
    const Candidate c = queue.top();
    queue.pop();
    Symbol& left = syms[static_cast<size_t>(c.left)];
    Symbol& right = syms[static_cast<size_t>(c.right)];
    if (left.length == 0 || right.length == 0 || left.length + right.length != c.length) continue;
    left.length += right.length;
    right.length = 0;
    left.next = right.next;
    if (right.next >= 0) syms[static_cast<size_t>(right.next)].prev = c.left;
    consider(left.prev, c.left);
    consider(c.left, left.next);
  }

  for (int i = syms.empty() ? -1 : 0; i >= 0; i = syms[static_cast<size_t>(i)].next) {
    const std::string_view s = text.substr(syms[static_cast<size_t>(i)].begin, syms[static_cast<size_t>(i)].length);
    if (const int32_t id = piece_id(s); id >= 0) {
      out.push_back(id);
      continue;
    }
    for (char ch : s) {  // llama.cpp looks each byte up as a one-byte piece, and drops what is missing
      const int32_t id = piece_id(std::string_view(&ch, 1));
      if (id < 0)
        fail("BpeTokenizer::encode: symbol '", s, "' is not a token and neither are its bytes; the vocab lacks the "
             "byte alphabet (malformed tokenizer.ggml.tokens)");
      out.push_back(id);
    }
  }
}

std::string BpeTokenizer::clean_decoded(std::string text) const {
  return flavor_.clean_spaces ? clean_spaces(std::move(text)) : text;
}

std::string clean_spaces(std::string text) {
  // Pass 1: no space before ? ! . ,
  std::string a;
  a.reserve(text.size());
  for (size_t i = 0; i < text.size(); ++i) {
    const char x = text[i];
    if (i > 0 && text[i - 1] == ' ' && (x == '?' || x == '!' || x == '.' || x == ',')) a.pop_back();
    a += x;
  }
  // Pass 2: " ' " → "'". The character after a collapsed quote counts as not preceded by a space.
  std::string b;
  b.reserve(a.size());
  bool prev_space = false;
  for (size_t i = 0; i < a.size(); ++i) {
    const char x = a[i];
    if (i > 0 && x == '\'' && prev_space && i + 1 < a.size() && a[i + 1] == ' ') {
      b.pop_back();
      b += x;
      ++i;  // the space after the quote is dropped
      prev_space = false;
      continue;
    }
    b += x;
    prev_space = x == ' ';
  }
  // Pass 3: " 's", " 'm", " 're", " 've" lose the space.
  std::string c;
  c.reserve(b.size());
  for (size_t i = 0; i < b.size(); ++i) {
    const char x = b[i];
    if (i > 0 && b[i - 1] == ' ' && x == '\'' && i + 1 < b.size()) {
      const char x1 = b[i + 1];
      const char x2 = i + 2 < b.size() ? b[i + 2] : '\0';
      const bool two = x1 == 's' || x1 == 'm';
      const bool three = i + 2 < b.size() && ((x1 == 'r' && x2 == 'e') || (x1 == 'v' && x2 == 'e'));
      if (two || three) c.pop_back();
    }
    c += x;
  }
  return c;
}

}  // namespace pfx::tok

// SpmTokenizer: encode/decode with llama.cpp's SentencePiece ("llama") semantics. The merge loop
// follows llm_tokenizer_spm_session in llama.cpp's src/llama-vocab.cpp; see spm.h.
#include "tokenizer/spm.h"

#include <algorithm>
#include <queue>
#include <string>

#include "tokenizer/byte_piece.h"
#include "tokenizer/unicode.h"
#include "util/error.h"

namespace pfx::tok {
namespace {

constexpr std::string_view kSpaceMark = "\xE2\x96\x81";  // U+2581 "▁", SentencePiece's space

std::string replace_all(std::string_view s, std::string_view from, std::string_view to) {
  std::string out;
  out.reserve(s.size());
  size_t pos = 0;
  for (size_t hit; (hit = s.find(from, pos)) != std::string_view::npos; pos = hit + from.size()) {
    out.append(s, pos, hit - pos);
    out.append(to);
  }
  out.append(s, pos);
  return out;
}

}  // namespace

SpmTokenizer::SpmTokenizer(Vocab vocab) : Tokenizer(std::move(vocab)) {
  render_pieces([](const std::string& piece) { return replace_all(piece, kSpaceMark, " "); });
  // llama.cpp's byte_to_token: "<0xHH>", else the byte itself as a one-character piece (built
  // from a C string, so byte 0 has no such fallback).
  for (int b = 0; b < 256; ++b) {
    int32_t id = piece_id(byte_piece(static_cast<uint8_t>(b)));
    if (id < 0 && b != 0) id = piece_id(std::string(1, static_cast<char>(b)));
    byte_token_[static_cast<size_t>(b)] = id;
  }
}

void SpmTokenizer::encode_text(std::string_view text, bool after_special, std::vector<int32_t>& out) const {
  std::string raw;
  if (vocab_.add_space_prefix && after_special) raw = " ";
  raw.append(text);
  encode_fragment(replace_all(raw, " ", kSpaceMark), out);
}

// The SentencePiece merge loop. Symbols form a doubly linked list over the text; a candidate
// is a pair of neighbours whose concatenation is a piece. The best candidate (highest piece
// score, then leftmost) is merged into its left symbol and the new neighbour pairs are queued.
// A popped candidate is stale when either side has changed since it was queued: sizes only
// grow, so comparing the summed length with the queued length detects exactly that.
void SpmTokenizer::encode_fragment(std::string_view text, std::vector<int32_t>& out) const {
  struct Symbol {
    int prev, next;
    size_t begin, length;  // length 0: merged away
  };
  std::vector<Symbol> syms;
  for (size_t off = 0; off < text.size();) {
    const size_t len =
        std::min(utf8_sequence_length(static_cast<unsigned char>(text[off])), text.size() - off);
    const int index = static_cast<int>(syms.size());
    syms.push_back({index - 1, off + len == text.size() ? -1 : index + 1, off, len});
    off += len;
  }

  struct Candidate {
    float score;
    int left, right;
    size_t length;
  };
  auto ranks_below = [](const Candidate& a, const Candidate& b) {
    return a.score < b.score || (a.score == b.score && a.left > b.left);
  };
  std::priority_queue<Candidate, std::vector<Candidate>, decltype(ranks_below)> queue(ranks_below);
  auto consider = [&](int left, int right) {
    if (left < 0 || right < 0) return;
    const size_t length = syms[left].length + syms[right].length;
    const int32_t id = piece_id(text.substr(syms[left].begin, length));
    if (id < 0) return;
    queue.push({vocab_.scores[static_cast<size_t>(id)], left, right, length});
  };

  for (int i = 1; i < static_cast<int>(syms.size()); ++i) consider(i - 1, i);

  while (!queue.empty()) {
    const Candidate c = queue.top();
    queue.pop();
    Symbol& left = syms[c.left];
    Symbol& right = syms[c.right];
    if (left.length == 0 || right.length == 0 || left.length + right.length != c.length) continue;
    left.length += right.length;
    right.length = 0;
    left.next = right.next;
    if (right.next >= 0) syms[right.next].prev = c.left;
    consider(left.prev, c.left);
    consider(c.left, left.next);
  }

  // Every merged symbol is a piece (a candidate is only queued when it is). An unmerged
  // character that is not a piece falls back to bytes. (llama.cpp first looks the text up in
  // its rev_merge map, but that map only holds texts that are pieces, so that path never
  // applies to a text that is not one.)
  for (int i = syms.empty() ? -1 : 0; i >= 0; i = syms[i].next) {
    const std::string_view s = text.substr(syms[i].begin, syms[i].length);
    const int32_t id = piece_id(s);
    if (id >= 0) {
      out.push_back(id);
    } else {
      append_bytes(s, out);
    }
  }
}

// Byte fallback. Where the vocab has no token for a byte, llama.cpp throws (std::out_of_range);
// we emit the unknown token as SentencePiece does without byte fallback, or fail clearly.
void SpmTokenizer::append_bytes(std::string_view bytes, std::vector<int32_t>& out) const {
  for (char ch : bytes) {
    const auto b = static_cast<unsigned char>(ch);
    const int32_t id = byte_token_[b];
    if (id >= 0) {
      out.push_back(id);
    } else if (vocab_.unk >= 0) {
      out.push_back(vocab_.unk);
    } else {
      fail("SpmTokenizer::encode: byte ", byte_piece(b),
           " has no token (neither that piece nor the raw byte) and the vocab has no unknown token");
    }
  }
}

}  // namespace pfx::tok

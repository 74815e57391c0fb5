// SpmTokenizer: encode/decode with llama.cpp's SentencePiece ("llama") semantics. The merge loop
// follows llm_tokenizer_spm_session in llama.cpp's src/llama-vocab.cpp; see spm.h.
#include "tokenizer/spm.h"

#include <algorithm>
#include <queue>

#include "tokenizer/byte_piece.h"
#include "util/error.h"

namespace pfx::tok {
namespace {

constexpr std::string_view kSpaceMark = "\xE2\x96\x81";  // U+2581 "▁", SentencePiece's space

// Bytes of a UTF-8 sequence from its lead byte, as llama.cpp's unicode_len_utf8: continuation
// and invalid lead bytes count as one-byte characters, 0xF8..0xFF as four.
size_t utf8_len(unsigned char lead) {
  static constexpr unsigned char kLen[16] = {1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 2, 2, 3, 4};
  return kLen[lead >> 4];
}

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

// What llama_token_to_piece gives for one token; `special` renders control and unknown tokens
// as their text instead of nothing.
std::string render(const std::string& piece, int32_t type, bool special) {
  switch (type) {
    case kNormal:
      return replace_all(piece, kSpaceMark, " ");
    case kUserDefined:
      return piece;
    case kByte:
      return std::string(1, static_cast<char>(parse_byte_piece(piece)));
    case kControl:
    case kUnknown:
      return special ? piece : std::string();
    default:  // unused, undefined: nothing
      return {};
  }
}

// Ids whose type is in `types`, longest piece first; equal lengths by id (llama.cpp uses an
// unstable sort there, which only matters for two equally long pieces overlapping in a text).
std::vector<int32_t> by_length(const Vocab& v, std::initializer_list<int32_t> types) {
  std::vector<int32_t> ids;
  for (size_t i = 0; i < v.types.size(); ++i) {
    if (std::find(types.begin(), types.end(), v.types[i]) != types.end()) {
      ids.push_back(static_cast<int32_t>(i));
    }
  }
  std::stable_sort(ids.begin(), ids.end(), [&](int32_t a, int32_t b) {
    return v.pieces[a].size() > v.pieces[b].size();
  });
  return ids;
}

}  // namespace

SpmTokenizer::SpmTokenizer(Vocab vocab) : vocab_(std::move(vocab)) {
  normalize_and_validate(vocab_, "vocab");
  const size_t n = vocab_.pieces.size();
  if (vocab_.scores.empty()) vocab_.scores.assign(n, 0.0f);
  if (vocab_.types.empty()) vocab_.types.assign(n, kNormal);

  piece_ids_.reserve(n);
  rendered_.reserve(n);
  rendered_special_.reserve(n);
  for (size_t i = 0; i < n; ++i) {
    piece_ids_.emplace(vocab_.pieces[i], static_cast<int32_t>(i));
    rendered_.push_back(render(vocab_.pieces[i], vocab_.types[i], false));
    rendered_special_.push_back(render(vocab_.pieces[i], vocab_.types[i], true));
  }

  // llama.cpp's byte_to_token: "<0xHH>", else the byte itself as a one-character piece (built
  // from a C string, so byte 0 has no such fallback).
  for (int b = 0; b < 256; ++b) {
    int32_t id = piece_id(byte_piece(static_cast<uint8_t>(b)));
    if (id < 0 && b != 0) id = piece_id(std::string(1, static_cast<char>(b)));
    byte_token_[static_cast<size_t>(b)] = id;
  }

  user_defined_by_length_ = by_length(vocab_, {kUserDefined});
  special_by_length_ = by_length(vocab_, {kUserDefined, kControl, kUnknown});
}

int32_t SpmTokenizer::piece_id(std::string_view piece) const {
  auto it = piece_ids_.find(piece);
  return it == piece_ids_.end() ? -1 : it->second;
}

// Splits the text around verbatim occurrences of special pieces, one piece at a time, longest
// first, leftmost occurrence first (llama.cpp's tokenizer_st_partition).
std::vector<SpmTokenizer::Fragment> SpmTokenizer::partition(std::string_view text,
                                                            bool parse_special) const {
  std::vector<Fragment> frags;
  if (text.empty()) return frags;
  frags.push_back({-1, 0, text.size()});
  const auto& specials = parse_special ? special_by_length_ : user_defined_by_length_;
  for (int32_t id : specials) {
    const std::string& piece = vocab_.pieces[static_cast<size_t>(id)];
    std::vector<Fragment> next;
    next.reserve(frags.size());
    for (const Fragment& f : frags) {
      if (f.token >= 0) {
        next.push_back(f);
        continue;
      }
      const std::string_view span = text.substr(f.begin, f.length);
      size_t pos = 0;
      for (size_t hit; (hit = span.find(piece, pos)) != std::string_view::npos;
           pos = hit + piece.size()) {
        if (hit > pos) next.push_back({-1, f.begin + pos, hit - pos});
        next.push_back({id, 0, 0});
      }
      if (pos < span.size()) next.push_back({-1, f.begin + pos, span.size() - pos});
    }
    frags = std::move(next);
  }
  return frags;
}

std::vector<int32_t> SpmTokenizer::encode(std::string_view text, bool add_bos,
                                          bool parse_special) const {
  std::vector<int32_t> out;
  out.reserve(text.size() / 2 + 2);
  if (add_bos && vocab_.add_bos) out.push_back(vocab_.bos);

  bool after_special = true;  // the start counts as "after a special token": prefix a space
  for (const Fragment& f : partition(text, parse_special)) {
    if (f.token >= 0) {
      out.push_back(f.token);
      after_special = true;
      continue;
    }
    std::string raw;
    if (vocab_.add_space_prefix && after_special) raw = " ";
    raw.append(text.substr(f.begin, f.length));
    encode_fragment(replace_all(raw, " ", kSpaceMark), out);
    after_special = false;
  }

  if (add_bos && vocab_.add_eos) out.push_back(vocab_.eos);
  return out;
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
        std::min(utf8_len(static_cast<unsigned char>(text[off])), text.size() - off);
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

bool SpmTokenizer::in_vocab(int32_t id) const {
  return id >= 0 && static_cast<size_t>(id) < vocab_.pieces.size();
}

std::string SpmTokenizer::token_to_piece(int32_t id, bool special) const {
  if (!in_vocab(id)) {
    fail("SpmTokenizer::token_to_piece: token id ", id, " is outside the vocab; expected 0..",
         vocab_.pieces.size() - 1);
  }
  return (special ? rendered_special_ : rendered_)[static_cast<size_t>(id)];
}

std::string SpmTokenizer::decode(std::span<const int32_t> ids, bool special) const {
  return concat(ids, special, vocab_.add_space_prefix, "decode");
}

std::string SpmTokenizer::decode_continuation(std::span<const int32_t> ids, bool special) const {
  return concat(ids, special, false, "decode_continuation");
}

std::string SpmTokenizer::concat(std::span<const int32_t> ids, bool special,
                                 bool strip_first_space, std::string_view caller) const {
  for (size_t i = 0; i < ids.size(); ++i) {
    if (!in_vocab(ids[i])) {
      fail("SpmTokenizer::", caller, ": ids[", i, "] = ", ids[i],
           " is outside the vocab; expected 0..", vocab_.pieces.size() - 1);
    }
  }
  const auto& rendered = special ? rendered_special_ : rendered_;
  std::string out;
  for (size_t i = 0; i < ids.size(); ++i) {
    std::string_view piece = rendered[static_cast<size_t>(ids[i])];
    // llama_detokenize strips one leading space of the first token only, whatever it is.
    if (i == 0 && strip_first_space && !piece.empty() && piece.front() == ' ') {
      piece.remove_prefix(1);
    }
    out.append(piece);
  }
  return out;
}

}  // namespace pfx::tok

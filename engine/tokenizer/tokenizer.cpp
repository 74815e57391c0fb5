// The parts of llama.cpp's tokenize/detokenize both vocabulary kinds share (see tokenizer.h):
// tokenizer_st_partition, BOS/EOS, token_to_piece by token type, llama_detokenize.
#include "tokenizer/tokenizer.h"

#include <algorithm>
#include <initializer_list>

#include "tokenizer/bpe.h"
#include "tokenizer/byte_piece.h"
#include "tokenizer/spm.h"
#include "util/error.h"

namespace pfx::tok {
namespace {

// Ids whose type is in `types`, longest piece first; equal lengths by id (llama.cpp uses an
// unstable sort there, which only matters for two equally long pieces overlapping in a text).
std::vector<int32_t> by_length(const Vocab& v, std::initializer_list<int32_t> types) {
  std::vector<int32_t> ids;
  for (size_t i = 0; i < v.types.size(); ++i) {
    if (std::find(types.begin(), types.end(), v.types[i]) != types.end()) ids.push_back(static_cast<int32_t>(i));
  }
  std::stable_sort(ids.begin(), ids.end(),
                   [&](int32_t a, int32_t b) { return v.pieces[a].size() > v.pieces[b].size(); });
  return ids;
}

}  // namespace

Tokenizer::Tokenizer(Vocab vocab) : vocab_(std::move(vocab)) {
  normalize_and_validate(vocab_, "vocab");
  const size_t n = vocab_.pieces.size();
  if (vocab_.scores.empty()) vocab_.scores.assign(n, 0.0f);
  if (vocab_.types.empty()) vocab_.types.assign(n, kNormal);
  piece_ids_.reserve(n);
  for (size_t i = 0; i < n; ++i) piece_ids_.emplace(vocab_.pieces[i], static_cast<int32_t>(i));
  user_defined_by_length_ = by_length(vocab_, {kUserDefined});
  special_by_length_ = by_length(vocab_, {kUserDefined, kControl, kUnknown});
}

void Tokenizer::render_pieces(const std::function<std::string(const std::string&)>& normal) {
  const size_t n = vocab_.pieces.size();
  rendered_.assign(n, {});
  rendered_special_.assign(n, {});
  for (size_t i = 0; i < n; ++i) {
    const std::string& piece = vocab_.pieces[i];
    switch (vocab_.types[i]) {
      case kNormal: rendered_[i] = rendered_special_[i] = normal(piece); break;
      case kUserDefined: rendered_[i] = rendered_special_[i] = piece; break;
      case kByte: rendered_[i] = rendered_special_[i] = std::string(1, static_cast<char>(parse_byte_piece(piece))); break;
      case kControl:
      case kUnknown: rendered_special_[i] = piece; break;  // "" unless special
      default: break;                                       // unused, undefined: nothing
    }
  }
}

int32_t Tokenizer::piece_id(std::string_view piece) const {
  auto it = piece_ids_.find(piece);
  return it == piece_ids_.end() ? -1 : it->second;
}

// Splits the text around verbatim occurrences of special pieces, one piece at a time, longest
// first, leftmost occurrence first (llama.cpp's tokenizer_st_partition).
std::vector<Tokenizer::Fragment> Tokenizer::partition(std::string_view text, bool parse_special) const {
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
      for (size_t hit; (hit = span.find(piece, pos)) != std::string_view::npos; pos = hit + piece.size()) {
        if (hit > pos) next.push_back({-1, f.begin + pos, hit - pos});
        next.push_back({id, 0, 0});
      }
      if (pos < span.size()) next.push_back({-1, f.begin + pos, span.size() - pos});
    }
    frags = std::move(next);
  }
  return frags;
}

std::vector<int32_t> Tokenizer::encode(std::string_view text, bool add_bos, bool parse_special) const {
  std::vector<int32_t> out;
  out.reserve(text.size() / 2 + 2);
  if (add_bos && vocab_.add_bos) out.push_back(vocab_.bos);
  bool after_special = true;  // the start counts as "after a special token"
  for (const Fragment& f : partition(text, parse_special)) {
    if (f.token >= 0) {
      out.push_back(f.token);
      after_special = true;
      continue;
    }
    encode_text(text.substr(f.begin, f.length), after_special, out);
    after_special = false;
  }
  if (add_bos && vocab_.add_eos) out.push_back(vocab_.eos);
  return out;
}

bool Tokenizer::in_vocab(int32_t id) const { return id >= 0 && static_cast<size_t>(id) < vocab_.pieces.size(); }

std::string Tokenizer::token_to_piece(int32_t id, bool special) const {
  if (!in_vocab(id))
    fail("tokenizer: token_to_piece: token id ", id, " is outside the vocab; expected 0..", vocab_.pieces.size() - 1);
  return (special ? rendered_special_ : rendered_)[static_cast<size_t>(id)];
}

std::string Tokenizer::decode(std::span<const int32_t> ids, bool special) const {
  return clean_decoded(concat(ids, special, vocab_.add_space_prefix, "decode"));
}

std::string Tokenizer::decode_continuation(std::span<const int32_t> ids, bool special) const {
  return concat(ids, special, false, "decode_continuation");
}

std::string Tokenizer::concat(std::span<const int32_t> ids, bool special, bool strip_first_space,
                              std::string_view caller) const {
  for (size_t i = 0; i < ids.size(); ++i) {
    if (!in_vocab(ids[i]))
      fail("tokenizer: ", caller, ": ids[", i, "] = ", ids[i], " is outside the vocab; expected 0..",
           vocab_.pieces.size() - 1);
  }
  const auto& rendered = special ? rendered_special_ : rendered_;
  std::string out;
  for (size_t i = 0; i < ids.size(); ++i) {
    std::string_view piece = rendered[static_cast<size_t>(ids[i])];
    // llama_detokenize strips one leading space of the first token only, whatever it is.
    if (i == 0 && strip_first_space && !piece.empty() && piece.front() == ' ') piece.remove_prefix(1);
    out.append(piece);
  }
  return out;
}

std::unique_ptr<Tokenizer> make_tokenizer(Vocab vocab) {
  if (vocab.kind == VocabKind::Bpe) return std::make_unique<BpeTokenizer>(std::move(vocab));
  return std::make_unique<SpmTokenizer>(std::move(vocab));
}

std::unique_ptr<Tokenizer> make_tokenizer(const gguf::File& file) { return make_tokenizer(vocab_from_gguf(file)); }

}  // namespace pfx::tok

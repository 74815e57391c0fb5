// Tokenizer: text ↔ token ids with llama.cpp's semantics, for either vocabulary kind. The parts
// both kinds share live here (special-piece partition, BOS/EOS, token rendering by type,
// detokenize); SpmTokenizer (spm.h) and BpeTokenizer (bpe.h) supply how a stretch of plain text
// becomes ids, how a normal token's text renders, and any clean-up after detokenizing.
//
//   auto t = pfx::tok::make_tokenizer(file);      // by tokenizer.ggml.model
//   std::vector<int32_t> ids = t->encode("Hello", /*add_bos=*/true);
#pragma once
#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "tokenizer/vocab.h"

namespace pfx::gguf {
class File;
}

namespace pfx::tok {

class Tokenizer {
 public:
  virtual ~Tokenizer() = default;
  Tokenizer(const Tokenizer&) = delete;  // the rendered-piece tables are large; share by reference
  Tokenizer& operator=(const Tokenizer&) = delete;

  // add_bos is llama.cpp's add_special: BOS is prepended when it is set and the vocab's add_bos
  // is set too; EOS is appended likewise when the vocab's add_eos is set. The text is first split
  // around verbatim occurrences of user-defined pieces and, with parse_special, of control and
  // unknown pieces ("<s>", "<|eot_id|>"), longest piece first; those become their ids.
  std::vector<int32_t> encode(std::string_view text, bool add_bos, bool parse_special = false) const;

  // The bytes this token contributes to output text (llama_token_to_piece): normal tokens as the
  // kind renders them, user-defined pieces verbatim, byte tokens <0xHH> as the byte, control and
  // unknown tokens as "" (their text with `special`), unused/undefined tokens as "". Throws
  // pfx::Error for an id outside the vocab.
  std::string token_to_piece(int32_t id, bool special = false) const;

  // llama_detokenize with remove_special=false, as common_detokenize calls it: the
  // concatenation of token_to_piece, minus one leading space of the first token when the vocab's
  // add_space_prefix is set, then the kind's clean-up (BPE clean_spaces). Throws pfx::Error
  // naming the position and id of the first id outside the vocab.
  std::string decode(std::span<const int32_t> ids, bool special = false) const;

  // Plain concatenation of token_to_piece, no space stripped and no clean-up: the bytes these
  // tokens add after earlier ones, i.e. what llama.cpp prints for generated tokens. Throws like
  // decode.
  std::string decode_continuation(std::span<const int32_t> ids, bool special = false) const;

  const Vocab& vocab() const { return vocab_; }
  size_t size() const { return vocab_.pieces.size(); }
  // Token id of a piece (exact stored text), or -1.
  int32_t piece_id(std::string_view piece) const;

 protected:
  // Validates the vocab (normalize_and_validate); throws pfx::Error on a bad one.
  explicit Tokenizer(Vocab vocab);
  // Called once by the subclass constructor: fills the token_to_piece tables, with `normal`
  // rendering the text of a normal token.
  void render_pieces(const std::function<std::string(const std::string&)>& normal);
  // Appends the ids of a stretch of plain text; after_special: it starts the text or follows a
  // special piece (SentencePiece then prefixes a space).
  virtual void encode_text(std::string_view text, bool after_special, std::vector<int32_t>& out) const = 0;
  // Post-processing of a detokenized text (identity by default).
  virtual std::string clean_decoded(std::string text) const { return text; }

  Vocab vocab_;

 private:
  struct Fragment {
    int32_t token;         // >= 0: a piece matched verbatim; -1: text
    size_t begin, length;  // text fragments: byte range in the input
  };
  std::vector<Fragment> partition(std::string_view text, bool parse_special) const;
  bool in_vocab(int32_t id) const;
  std::string concat(std::span<const int32_t> ids, bool special, bool strip_first_space,
                     std::string_view caller) const;

  struct PieceHash {
    using is_transparent = void;
    size_t operator()(std::string_view s) const { return std::hash<std::string_view>{}(s); }
  };
  std::unordered_map<std::string, int32_t, PieceHash, std::equal_to<>> piece_ids_;
  std::vector<std::string> rendered_;           // token_to_piece per id
  std::vector<std::string> rendered_special_;   // token_to_piece(id, special=true) per id
  std::vector<int32_t> user_defined_by_length_; // matched in every text, longest first
  std::vector<int32_t> special_by_length_;      // + control/unknown, for parse_special
};

// The tokenizer of a vocabulary: SpmTokenizer for "llama", BpeTokenizer for "gpt2".
std::unique_ptr<Tokenizer> make_tokenizer(Vocab vocab);
// make_tokenizer(vocab_from_gguf(file)).
std::unique_ptr<Tokenizer> make_tokenizer(const gguf::File& file);

}  // namespace pfx::tok

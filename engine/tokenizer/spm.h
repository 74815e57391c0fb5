// SpmTokenizer: llama.cpp's SentencePiece ("llama"/spm) tokenizer, reproduced id for id.
//
// encode: the text is split around user-defined pieces (and, with parse_special, control and
// unknown pieces) found verbatim; every text fragment that follows the start or such a piece
// gets a leading space (add_space_prefix); spaces become "▁"; the fragment is split into UTF-8
// characters and adjacent symbols are merged greedily, best piece score first (ties: leftmost),
// while the merged text is a piece; symbols that are not pieces become byte tokens <0xHH>.
// decode: concatenated token_to_piece, with one leading space of the very first token removed
// when add_space_prefix is set (llama_detokenize with remove_special=false, as
// common_detokenize calls it: a leading BOS is that first token, so its successor keeps its
// space).
#pragma once
#include <array>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "tokenizer/vocab.h"

namespace pfx::tok {

class SpmTokenizer {
 public:
  // Validates the vocab (normalize_and_validate); throws pfx::Error on a bad one.
  explicit SpmTokenizer(Vocab vocab);

  // add_bos is llama.cpp's add_special: BOS is prepended when it is set and the vocab's add_bos
  // is set too (tokenizer.ggml.add_bos_token, true by default); EOS is appended likewise when
  // the vocab's add_eos is set. parse_special: also match control/unknown pieces ("<s>") found
  // in the text as single tokens (llama.cpp's parse_special); user-defined pieces always match.
  std::vector<int32_t> encode(std::string_view text, bool add_bos, bool parse_special = false) const;

  // The bytes this token contributes to output text: "▁" → " " for normal pieces, <0x0A> → "\n",
  // user-defined pieces verbatim, control/unknown tokens → "" (their text with `special`,
  // llama.cpp's unparse_special), unused/undefined tokens → "". Throws pfx::Error for an id
  // outside the vocab.
  std::string token_to_piece(int32_t id, bool special = false) const;

  // Concatenation of token_to_piece, minus one leading space of the first token when
  // add_space_prefix is set (see the file comment). Throws pfx::Error naming the position and
  // id of the first id outside the vocab.
  std::string decode(std::span<const int32_t> ids, bool special = false) const;

  // Plain concatenation of token_to_piece, no space stripped: the bytes these tokens add after
  // earlier ones, i.e. what llama.cpp prints for generated tokens (decode would drop the first
  // generated token's leading space). Throws like decode.
  std::string decode_continuation(std::span<const int32_t> ids, bool special = false) const;

  const Vocab& vocab() const { return vocab_; }
  size_t size() const { return vocab_.pieces.size(); }

  // Token id of a piece (exact text, "▁" for spaces), or -1.
  int32_t piece_id(std::string_view piece) const;

 private:
  struct Fragment {
    int32_t token;           // >= 0: a piece matched verbatim; -1: text
    size_t begin, length;    // text fragments: byte range in the input
  };
  std::vector<Fragment> partition(std::string_view text, bool parse_special) const;
  void encode_fragment(std::string_view escaped, std::vector<int32_t>& out) const;
  void append_bytes(std::string_view bytes, std::vector<int32_t>& out) const;
  bool in_vocab(int32_t id) const;
  std::string concat(std::span<const int32_t> ids, bool special, bool strip_first_space,
                     std::string_view caller) const;

  struct PieceHash {
    using is_transparent = void;
    size_t operator()(std::string_view s) const { return std::hash<std::string_view>{}(s); }
  };

  Vocab vocab_;
  std::unordered_map<std::string, int32_t, PieceHash, std::equal_to<>> piece_ids_;
  std::vector<std::string> rendered_;           // token_to_piece per id
  std::vector<std::string> rendered_special_;   // token_to_piece(id, special=true) per id
  std::array<int32_t, 256> byte_token_{};       // byte-fallback token per byte, -1: none
  std::vector<int32_t> user_defined_by_length_; // matched in every text, longest first
  std::vector<int32_t> special_by_length_;      // + control/unknown, for parse_special
};

}  // namespace pfx::tok

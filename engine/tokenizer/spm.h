// SpmTokenizer: llama.cpp's SentencePiece ("llama"/spm) tokenizer, reproduced id for id.
//
// encode: the text is split around special pieces (tokenizer.h); every text fragment that
// follows the start or such a piece gets a leading space (add_space_prefix); spaces become "▁";
// the fragment is split into UTF-8 characters and adjacent symbols are merged greedily, best
// piece score first (ties: leftmost), while the merged text is a piece; symbols that are not
// pieces become byte tokens <0xHH>.
// decode: normal pieces render with "▁" → " "; one leading space of the very first token is
// removed when add_space_prefix is set (a leading BOS is that first token, so its successor keeps
// its space).
#pragma once
#include <array>
#include <cstdint>
#include <string_view>
#include <vector>

#include "tokenizer/tokenizer.h"

namespace pfx::tok {

class SpmTokenizer final : public Tokenizer {
 public:
  // Validates the vocab (normalize_and_validate); throws pfx::Error on a bad one.
  explicit SpmTokenizer(Vocab vocab);

 private:
  void encode_text(std::string_view text, bool after_special, std::vector<int32_t>& out) const override;
  void encode_fragment(std::string_view escaped, std::vector<int32_t>& out) const;
  void append_bytes(std::string_view bytes, std::vector<int32_t>& out) const;

  std::array<int32_t, 256> byte_token_{};  // byte-fallback token per byte, -1: none
};

}  // namespace pfx::tok

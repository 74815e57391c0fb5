// BpeTokenizer: GPT-2-style byte-level BPE (tokenizer.ggml.model = gpt2) with llama.cpp's
// pre-tokenizers (pretokenizer.h), reproduced id for id: Llama 3.x (llama-bpe) and Qwen2.
//
// encode: the text is split around special pieces (tokenizer.h); each plain stretch is split into
// words by the pre-tokenizer, each word's bytes are spelled in GPT-2's byte alphabet
// (byte_encoding.h) and its characters merged pairwise, the pair of lowest merge rank first
// (ties: leftmost), until no adjacent pair is a merge (tokenizer.ggml.merges: rank = index; a
// pair listed twice keeps its first rank). With the flavour's ignore_merges (llama3), a word that
// is itself a token is taken whole. Each final symbol is a token (a symbol that is not, which a
// well-formed vocab never produces, is looked up byte by byte and otherwise refused).
// decode: normal tokens render as the bytes their characters spell; with the flavour's
// clean_spaces (llama3) llama.cpp's clean-up follows (clean_spaces below).
#pragma once
#include <cstdint>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "tokenizer/pretokenizer.h"
#include "tokenizer/tokenizer.h"

namespace pfx::tok {

class BpeTokenizer final : public Tokenizer {
 public:
  // Validates the vocab, parses the merges ("left right", split at the first space after the
  // first character) and resolves vocab.pre; throws pfx::Error on a bad vocab, a merge without a
  // space or an unsupported pre-tokenizer.
  explicit BpeTokenizer(Vocab vocab);

  const BpeFlavor& flavor() const { return flavor_; }
  // Rank of merging `left` with `right`, or -1.
  int rank(std::string_view left, std::string_view right) const;

 private:
  void encode_text(std::string_view text, bool after_special, std::vector<int32_t>& out) const override;
  std::string clean_decoded(std::string text) const override;
  void encode_word(const std::string& encoded, std::vector<int32_t>& out) const;

  BpeFlavor flavor_;
  std::unordered_map<std::string, int> ranks_;  // key: left + '\0' + right
};

// llama.cpp's clean-up of detokenized BPE text, on ASCII: " ?", " !", " .", " ," lose the space;
// " ' " becomes "'"; " 's", " 'm", " 're", " 've" lose the space (" 't", " 'd", " 'll" keep it).
// Each rule is a pass over the previous pass's output, in that order.
std::string clean_spaces(std::string text);

}  // namespace pfx::tok

// BPE pre-tokenizers: the regex split a GPT-2-style byte-level BPE applies before merging, named
// as GGUF's tokenizer.ggml.pre names them. Only the flavours below are known; any other name is
// refused (bpe_flavor throws), never approximated by a neighbour.
//
//   llama3 (Llama 3.x; names llama-bpe, llama3, llama-v3), the pattern of its tokenizer.json:
//     (?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|
//     \s*[\r\n]+|\s+(?!\S)|\s+
//   qwen2 (Qwen2/Qwen2.5; names qwen2, deepseek-r1-qwen): the same with \p{N} (one digit per word)
//     in place of \p{N}{1,3}.
// Matching is the regex's: at each position the first alternative that matches wins, each
// quantifier greedy. Character classes come from unicode.h (ICU).
#pragma once
#include <string>
#include <string_view>
#include <vector>

namespace pfx::tok {

enum class SplitPattern { Llama3, Qwen2 };

// What a pre-tokenizer name means, beyond its split (llama.cpp's llama_vocab::impl::load):
struct BpeFlavor {
  std::string name;            // the canonical name ("llama3", "qwen2")
  SplitPattern split;
  bool ignore_merges;          // a word that is itself a token is emitted whole, unmerged
  bool clean_spaces;           // decode drops spaces before punctuation (clean_up_tokenization_spaces)
  bool add_bos_default;        // add BOS when tokenizer.ggml.add_bos_token is absent
};

// The flavour of a tokenizer.ggml.pre value; throws pfx::Error naming `origin`, the value and the
// supported names when it is not one we implement.
BpeFlavor bpe_flavor(std::string_view pre, std::string_view origin);

// Splits text into words (UTF-8, invalid bytes replaced as unicode.h's decode_utf8 does); the
// words concatenate to the (repaired) text.
std::vector<std::string> split_words(SplitPattern pattern, std::string_view text);

}  // namespace pfx::tok

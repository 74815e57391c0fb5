// Vocab: a tokenizer vocabulary as GGUF stores it (tokenizer.ggml.*): SentencePiece ("llama",
// spm.h) or GPT-2 byte-level BPE ("gpt2", bpe.h); its validation, and the loader from a GGUF file.
// make_tokenizer (tokenizer.h) picks the tokenizer for a vocab.
#pragma once
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace pfx::gguf {
class File;
}

namespace pfx::tok {

// Values of tokenizer.ggml.token_type (llama.cpp's llama_token_type). Anything else reads as
// kUndefined, as in llama.cpp.
enum TokenType : int32_t {
  kUndefined = 0,
  kNormal = 1,
  kUnknown = 2,
  kControl = 3,
  kUserDefined = 4,
  kUnused = 5,
  kByte = 6,
};

// tokenizer.ggml.model: "llama" (SentencePiece) or "gpt2" (byte-level BPE).
enum class VocabKind { Spm, Bpe };

struct Vocab {
  VocabKind kind = VocabKind::Spm;
  std::vector<std::string> pieces;  // token text; SPM spells spaces U+2581 "▁", BPE U+0120 "Ġ"
  std::vector<float> scores;        // one per piece, or empty (all 0)
  std::vector<int32_t> types;       // TokenType per piece, or empty (all kNormal)
  int32_t bos = -1, eos = -1, unk = -1, pad = -1;  // -1: none
  int32_t eot = -1;              // end of turn (<|eot_id|>, <|im_end|>): key or found by its text
  bool add_bos = true;           // tokenizer.ggml.add_bos_token
  bool add_eos = false;          // tokenizer.ggml.add_eos_token
  bool add_space_prefix = true;  // tokenizer.ggml.add_space_prefix
  // BPE only: tokenizer.ggml.merges ("left right", rank = index) and tokenizer.ggml.pre.
  std::vector<std::string> merges;
  std::string pre;
};

// Reads tokenizer.ggml.{model,tokens,scores,token_type,merges,pre,bos_token_id,eos_token_id,
// eot_token_id,unknown_token_id,padding_token_id,add_bos_token,add_eos_token,add_space_prefix}
// the way llama.cpp's loader does: model must be "llama" or "gpt2" (anything else is refused by
// name). Missing ids default to bos 1, eos 2, unk 0 (llama) or bos 11, eos 11 (gpt2, as
// llama.cpp); an id key holding a value outside the vocab (e.g. 0xFFFFFFFF for "none") keeps the
// default; add_bos defaults to true (llama), else to the pre-tokenizer's default (pretokenizer.h),
// add_space_prefix to true (llama) or false (gpt2); without eot_token_id the first of
// <|eot_id|>, <|im_end|>, <|end|>, <end_of_turn>, <|endoftext|> in the vocab is the EOT token
// (and is marked control, as llama.cpp does). An empty piece becomes "[EMPTY_<id>]". gpt2 needs
// merges and a supported tokenizer.ggml.pre. Errors name the file and the key.
Vocab vocab_from_gguf(const gguf::File& file);

// Replaces empty pieces by "[EMPTY_<id>]" (llama.cpp does the same, so such tokens stay
// addressable), then checks sizes, duplicate pieces, special ids and byte-token spelling.
// `origin` starts every error message (a file name, or "vocab" for one built in code).
void normalize_and_validate(Vocab& vocab, std::string_view origin);

}  // namespace pfx::tok

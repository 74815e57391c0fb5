// Vocab: a SentencePiece ("llama"/spm) vocabulary as GGUF stores it (tokenizer.ggml.*), its
// validation, and the loader from a GGUF file. The tokenizer that uses it is in spm.h.
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

struct Vocab {
  std::vector<std::string> pieces;  // token text; spaces appear as U+2581 "▁"
  std::vector<float> scores;        // one per piece, or empty (all 0)
  std::vector<int32_t> types;       // TokenType per piece, or empty (all kNormal)
  int32_t bos = -1, eos = -1, unk = -1, pad = -1;  // -1: none
  bool add_bos = true;           // tokenizer.ggml.add_bos_token
  bool add_eos = false;          // tokenizer.ggml.add_eos_token
  bool add_space_prefix = true;  // tokenizer.ggml.add_space_prefix
};

// Reads tokenizer.ggml.{model,tokens,scores,token_type,bos_token_id,eos_token_id,
// unknown_token_id,padding_token_id,add_bos_token,add_eos_token,add_space_prefix} the way
// llama.cpp's loader does: model must be "llama"; missing ids default to bos 1, eos 2, unk 0;
// an id key holding a value outside the vocab (e.g. 0xFFFFFFFF for "none") keeps the default;
// an empty piece becomes "[EMPTY_<id>]". Errors name the file and the key.
Vocab vocab_from_gguf(const gguf::File& file);

// Replaces empty pieces by "[EMPTY_<id>]" (llama.cpp does the same, so such tokens stay
// addressable), then checks sizes, duplicate pieces, special ids and byte-token spelling.
// `origin` starts every error message (a file name, or "vocab" for one built in code).
void normalize_and_validate(Vocab& vocab, std::string_view origin);

}  // namespace pfx::tok

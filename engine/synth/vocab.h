// The tokenizer.* metadata of a synthetic model: copied from a GGUF file, or generated.
#pragma once
#include <string>
#include <utility>
#include <vector>

#include "gguf/gguf.h"
#include "synth/synth.h"

namespace pfx::synth {

struct VocabMetadata {
  std::vector<std::pair<std::string, gguf::Value>> kv;  // tokenizer.* keys, in write order
  std::string source;  // "copied from <file>" / "synthetic ..."; stored as pfx.synth.vocab_source
};

// Synthetic (deterministic, seed-independent): <unk>, <s>, </s>, the 256 byte pieces <0x00>..
// <0xFF>, then "▁" and letter pieces ("▁e", "e", "▁t", "t", ..., then two letters, ...) with
// scores -1, -2, ... so shorter, earlier pieces win merges. Copied: every tokenizer.* key of
// profile.vocab.copy_from (tokenizer.ggml.model "llama" or "gpt2"; size must equal vocab.size,
// or with vocab.pad_to_size be reached by "[PAD<id>]" tokens of type unused).
VocabMetadata make_vocab(const SynthProfile& profile);

}  // namespace pfx::synth

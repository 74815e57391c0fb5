// What we do with each `<arch>.*` metadata key of a model file. A key that can change the model's
// arithmetic is either implemented (read by read_llama_config), provably harmless here (a warning
// says why, e.g. YaRN parameters in a file that does not use YaRN), or the file is refused with
// the key's name; a key we do not know at all is refused too, since we cannot tell what it does.
// Keys outside the architecture's namespace (general.*, tokenizer.*, quantize.*, split.*)
// describe the file, the tokenizer or its provenance and are left to their readers.
#pragma once
#include <string>
#include <vector>

#include "gguf/gguf.h"
#include "model/llama.h"

namespace pfx::model {

// Checks every `<c.arch>.` key of `file` (c as read_llama_config read it). Throws pfx::Error
// naming the file and the first refused key (and why); returns one warning line per harmless key
// that a reader might expect to matter.
std::vector<std::string> check_metadata(const gguf::File& file, const LlamaConfig& c);

}  // namespace pfx::model

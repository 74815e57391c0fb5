// Greedy decoding on any Backend: argmax with ties to the lowest id, a fixed number of tokens.
// It never stops at EOS: llama.cpp's reference runs in ../shared/fixtures generate exactly N tokens
// (none of them contains EOS), and the greedy gate compares fixed-length streams byte for byte.
#pragma once
#include <cstdint>
#include <span>
#include <vector>

#include "model/backend.h"

namespace pfx {

struct GreedyResult {
  std::vector<int32_t> generated;  // n_new token ids
  std::vector<float> last_logits;  // [n_vocab]: the logits the last generated token was picked from
};

// Resets the backend, prefills `prompt` (must be non-empty), then picks n_new tokens one at a
// time, feeding each back except the last. n_new == 0 returns the prompt's last logits and no
// tokens. Throws pfx::Error for an empty prompt or negative n_new.
GreedyResult greedy(Backend& backend, std::span<const int32_t> prompt, int n_new);

}  // namespace pfx

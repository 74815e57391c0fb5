// Backend: the one interface every forward-pass implementation (CPU reference, CUDA) offers to
// the CLI, greedy decoding and the tests. A backend owns its KV cache; forward() appends tokens.
#pragma once
#include <cstdint>
#include <span>
#include <string>
#include <vector>

namespace pfx {

class Backend {
 public:
  virtual ~Backend() = default;
  // Short identifier for reports and JSON ("cpu", "cuda").
  virtual std::string name() const = 0;
  // Clears the KV cache; the next forward() starts at position 0.
  virtual void reset() = 0;
  // Runs `tokens` at positions position() .. position() + n - 1 and advances position() by n.
  // Returns float logits row-major: [n, n_vocab] when all_logits, else [1, n_vocab] for the last
  // token. Throws pfx::Error (position unchanged) for an empty batch, a token id outside the
  // vocabulary or a batch that would overrun the backend's context.
  virtual std::vector<float> forward(std::span<const int32_t> tokens, bool all_logits) = 0;
  // Tokens held in the KV cache.
  virtual int64_t position() const = 0;
};

}  // namespace pfx

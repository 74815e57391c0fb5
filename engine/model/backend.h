// Backend: the one interface every forward-pass implementation (CPU reference, CUDA) offers to
// the CLI, greedy decoding and the tests. A backend owns its KV cache; forward() appends tokens.
#pragma once
#include <cstdint>
#include <filesystem>
#include <span>
#include <string>
#include <vector>

#include "contract/prefill_cli.h"
#include "util/npy.h"

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

  // A debugging aid for parity and accuracy hunts: while set (non-empty), forward() writes the
  // residual stream after each layer as DIR/blk.N.posP.npy, float32 [tokens, n_embd] for the
  // tokens at positions P.. of that call. Comparing two backends' files finds the first layer
  // where they part. The directory must exist.
  void set_residual_dump(std::filesystem::path dir) { residual_dump_ = std::move(dir); }

 protected:
  bool dumping_residual() const { return !residual_dump_.empty(); }
  void dump_residual(int64_t layer, int64_t pos, const float* x, int64_t tokens, int64_t n_embd) const {
    write_npy(residual_dump_ / contract::residual_dump_file_name(layer, pos), x, {tokens, n_embd});
  }

 private:
  std::filesystem::path residual_dump_;
};

}  // namespace pfx

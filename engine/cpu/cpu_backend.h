// CpuBackend: the multi-threaded f32 reference forward pass for llama models, with an f32 KV
// cache. Weights are dequantized exactly (quant/dequant.h) and every product is computed in f32
// on them, so its logits track the fixtures' float64 oracle closely; CI runs it as the oracle.
//
// Per layer: x += Wo·attn(rope(Wq·n + bq), rope(Wk·n + bk), Wv·n + bv) with n = rms_norm(x)·attn_norm
// (biases where the model has them: qwen2);
//            x += Wdown·(silu(Wgate·m) * Wup·m)      with m = rms_norm(x)·ffn_norm;
// logits = Wout·(rms_norm(x)·output_norm).
#pragma once
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "cpu/weight_matrix.h"
#include "model/backend.h"
#include "model/llama.h"

namespace pfx::cpu {

class CpuBackend final : public pfx::Backend {
 public:
  // Keeps a reference to `model` (it must outlive the backend). max_ctx: KV-cache capacity in
  // tokens (> 0). threads <= 0: pfx::default_threads(). Weights stay resident in f32 when that
  // takes at most resident_limit_bytes, else they are dequantized on every use.
  CpuBackend(const model::Model& model, int64_t max_ctx, int threads = 0,
             int64_t resident_limit_bytes = int64_t{4} << 30);

  std::string name() const override { return "cpu"; }
  void reset() override { pos_ = 0; }
  std::vector<float> forward(std::span<const int32_t> tokens, bool all_logits) override;
  int64_t position() const override { return pos_; }

  int64_t max_ctx() const { return max_ctx_; }
  bool weights_resident() const { return resident_; }

 private:
  struct Layer {
    std::vector<float> attn_norm, ffn_norm;
    std::vector<float> bq, bk, bv;  // empty: no Q/K/V biases
    WeightMatrix wq, wk, wv, wo, w_gate, w_up, w_down;
  };

  const model::Model& model_;
  model::LlamaConfig cfg_;
  int64_t max_ctx_;
  int threads_;
  bool resident_ = false;
  int64_t pos_ = 0;

  WeightMatrix token_embd_, output_;  // output_ unused when tied to token_embd_
  bool output_tied_ = false;
  std::vector<float> output_norm_;
  std::vector<Layer> layers_;
  // [n_layer][max_ctx][kv_dim] each.
  std::vector<float> k_cache_, v_cache_;
};

}  // namespace pfx::cpu

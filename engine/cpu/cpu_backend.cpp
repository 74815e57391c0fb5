// The f32 reference forward pass (see cpu_backend.h).
#include "cpu/cpu_backend.h"

#include <algorithm>

#include "cpu/ops.h"
#include "model/layer_vectors.h"
#include "quant/dequant.h"
#include "util/error.h"
#include "util/parallel.h"

namespace pfx::cpu {
namespace {

// A norm weight [1, n] as f32.
std::vector<float> dequantize_vector(const model::TensorRef& t) {
  std::vector<float> v(static_cast<size_t>(t.cols));
  quant::dequantize_row(t.type, t.data, v.data(), t.cols);
  return v;
}

int64_t f32_bytes(const model::TensorRef& t) { return t.rows * t.cols * static_cast<int64_t>(sizeof(float)); }

}  // namespace

CpuBackend::CpuBackend(const model::Model& model, int64_t max_ctx, int threads, int64_t resident_limit_bytes)
    : model_(model), cfg_(model.config()), max_ctx_(max_ctx), threads_(threads > 0 ? threads : default_threads()) {
  if (max_ctx <= 0) fail("CPU backend: max_ctx is ", max_ctx, "; expected a positive token count");
  if (cfg_.sliding_window > 0 && max_ctx > cfg_.sliding_window)
    fail("CPU backend: a context of ", max_ctx, " tokens exceeds ", cfg_.arch, ".attention.sliding_window = ",
         cfg_.sliding_window, " of ", model.path().string(), "; sliding-window attention is not implemented (full "
         "attention equals it only up to the window)");
  const model::LlamaWeights& w = model.weights();

  int64_t total = f32_bytes(w.token_embd) + (w.output_tied ? 0 : f32_bytes(w.output));
  for (const model::LayerWeights& l : w.layers)
    for (const model::TensorRef* t : {&l.wq, &l.wk, &l.wv, &l.wo, &l.w_gate, &l.w_up, &l.w_down}) total += f32_bytes(*t);
  resident_ = total <= resident_limit_bytes;

  token_embd_ = WeightMatrix(w.token_embd, resident_, threads_);
  output_tied_ = w.output_tied;
  if (!output_tied_) output_ = WeightMatrix(w.output, resident_, threads_);
  output_norm_ = dequantize_vector(w.output_norm);
  layers_.resize(w.layers.size());
  for (size_t i = 0; i < w.layers.size(); ++i) {
    const model::LayerWeights& src = w.layers[i];
    Layer& l = layers_[i];
    model::convert_layer_vectors(src, l, dequantize_vector);
    l.wq = WeightMatrix(src.wq, resident_, threads_);
    l.wk = WeightMatrix(src.wk, resident_, threads_);
    l.wv = WeightMatrix(src.wv, resident_, threads_);
    l.wo = WeightMatrix(src.wo, resident_, threads_);
    l.w_gate = WeightMatrix(src.w_gate, resident_, threads_);
    l.w_up = WeightMatrix(src.w_up, resident_, threads_);
    l.w_down = WeightMatrix(src.w_down, resident_, threads_);
  }
  const size_t cache = static_cast<size_t>(cfg_.n_layer * max_ctx_ * cfg_.kv_dim());
  k_cache_.assign(cache, 0.0f);
  v_cache_.assign(cache, 0.0f);
}

std::vector<float> CpuBackend::forward(std::span<const int32_t> tokens, bool all_logits) {
  const int64_t n = static_cast<int64_t>(tokens.size());
  if (n == 0) fail("CPU backend: forward() called with no tokens");
  if (pos_ + n > max_ctx_)
    fail("CPU backend: ", n, " tokens at position ", pos_, " overrun the KV cache of ", max_ctx_, " tokens");
  for (int64_t t = 0; t < n; ++t)
    if (tokens[static_cast<size_t>(t)] < 0 || tokens[static_cast<size_t>(t)] >= cfg_.n_vocab)
      fail("CPU backend: token id ", tokens[static_cast<size_t>(t)], " at batch index ", t,
           " is outside the vocabulary [0, ", cfg_.n_vocab, ") of ", model_.path().string());

  const int64_t d = cfg_.n_embd, qd = cfg_.q_dim(), kvd = cfg_.kv_dim(), ff = cfg_.n_ff;
  std::vector<float> x(static_cast<size_t>(n * d)), h(static_cast<size_t>(n * d));
  std::vector<float> q(static_cast<size_t>(n * qd)), attn(static_cast<size_t>(n * qd));
  std::vector<float> k(static_cast<size_t>(n * kvd)), v(static_cast<size_t>(n * kvd));
  std::vector<float> gate(static_cast<size_t>(n * ff)), up(static_cast<size_t>(n * ff));
  std::vector<float> proj(static_cast<size_t>(n * d));

  // Embedding lookup: dequantize each token's row.
  for (int64_t t = 0; t < n; ++t) {
    const float* row = token_embd_.row(tokens[static_cast<size_t>(t)], x.data() + t * d);
    if (row != x.data() + t * d) std::copy(row, row + d, x.data() + t * d);
  }

  for (int64_t il = 0; il < cfg_.n_layer; ++il) {
    const Layer& l = layers_[static_cast<size_t>(il)];
    float* k_layer = k_cache_.data() + il * max_ctx_ * kvd;
    float* v_layer = v_cache_.data() + il * max_ctx_ * kvd;

    rms_norm(x.data(), l.attn_norm.data(), n, d, cfg_.rms_eps, h.data());
    matmul(l.wq, h.data(), n, q.data(), threads_);
    matmul(l.wk, h.data(), n, k.data(), threads_);
    matmul(l.wv, h.data(), n, v.data(), threads_);
    if (!l.bq.empty()) {
      add_bias(q.data(), l.bq.data(), n, qd);
      add_bias(k.data(), l.bk.data(), n, kvd);
      add_bias(v.data(), l.bv.data(), n, kvd);
    }
    rope(q.data(), n, cfg_.n_head, cfg_.head_dim, model_.rope_inv_freq(), cfg_.rope_style, pos_);
    rope(k.data(), n, cfg_.n_head_kv, cfg_.head_dim, model_.rope_inv_freq(), cfg_.rope_style, pos_);
    std::copy(k.begin(), k.end(), k_layer + pos_ * kvd);
    std::copy(v.begin(), v.end(), v_layer + pos_ * kvd);
    attention(q.data(), k_layer, v_layer, n, pos_, cfg_.n_head, cfg_.n_head_kv, cfg_.head_dim, attn.data(), threads_);
    matmul(l.wo, attn.data(), n, proj.data(), threads_);
    for (size_t i = 0; i < x.size(); ++i) x[i] += proj[i];

    rms_norm(x.data(), l.ffn_norm.data(), n, d, cfg_.rms_eps, h.data());
    matmul(l.w_gate, h.data(), n, gate.data(), threads_);
    matmul(l.w_up, h.data(), n, up.data(), threads_);
    swiglu(gate.data(), up.data(), n * ff, gate.data());
    matmul(l.w_down, gate.data(), n, proj.data(), threads_);
    for (size_t i = 0; i < x.size(); ++i) x[i] += proj[i];
    if (dumping_residual()) dump_residual(il, pos_, x.data(), n, d);
  }

  // Output head: every position, or only the last.
  const int64_t first = all_logits ? 0 : n - 1, rows = n - first;
  rms_norm(x.data() + first * d, output_norm_.data(), rows, d, cfg_.rms_eps, h.data());
  std::vector<float> logits(static_cast<size_t>(rows * cfg_.n_vocab));
  matmul(output_tied_ ? token_embd_ : output_, h.data(), rows, logits.data(), threads_);
  pos_ += n;
  return logits;
}

}  // namespace pfx::cpu

// Hostile-input checks of a model's config and weights (see checks.h).
#include "model/checks.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "quant/nonfinite.h"
#include "util/checked.h"
#include "util/error.h"
#include "util/escape.h"
#include "util/parallel.h"

namespace pfx::model {
namespace {

// The layer index N of a tensor named "blk.N.<rest>", or -1.
int64_t layer_of(std::string_view name) {
  constexpr std::string_view prefix = "blk.";
  if (name.substr(0, prefix.size()) != prefix) return -1;
  int64_t n = 0;
  size_t i = prefix.size();
  for (; i < name.size() && name[i] >= '0' && name[i] <= '9'; ++i) {
    const auto next = checked_mul<int64_t>(n, 10);
    if (!next) return -1;
    n = *next + (name[i] - '0');
  }
  return i > prefix.size() && i < name.size() && name[i] == '.' ? n : -1;
}

// block_count against the file: each of layers 0 .. n_layer-1 must have at least one tensor.
// Costs O(tensors), allocates O(tensors), whatever n_layer claims.
void check_layers_present(const gguf::File& f, const LlamaConfig& c) {
  std::vector<int64_t> present;
  for (const gguf::TensorInfo& t : f.tensors()) {
    const int64_t layer = layer_of(t.name);
    if (layer >= 0 && layer < c.n_layer) present.push_back(layer);
  }
  std::sort(present.begin(), present.end());
  present.erase(std::unique(present.begin(), present.end()), present.end());
  if (static_cast<int64_t>(present.size()) == c.n_layer) return;
  int64_t missing = 0;
  while (missing < static_cast<int64_t>(present.size()) && present[static_cast<size_t>(missing)] == missing) ++missing;
  fail(f.path().string(), ": metadata key '", c.arch, ".block_count' is ", c.n_layer, " but the file has tensors for ",
       present.size(), " of those layers: layer ", missing, " has none (expected tensors named blk.", missing,
       ".*; the file has ", f.tensors().size(), " tensors)");
}

}  // namespace

float float_key(const gguf::File& f, const std::string& key, std::optional<double> dflt) {
  const double v = dflt && !f.has(key) ? *dflt : f.get_float(key);
  if (!std::isfinite(v) || std::fabs(v) > std::numeric_limits<float>::max())
    fail(f.path().string(), ": metadata key '", key, "' is ", v, "; expected a finite float32 value");
  return static_cast<float>(v);
}

void check_config(const gguf::File& f, const LlamaConfig& c) {
  const std::string file = f.path().string(), a = c.arch + ".";
  if (!std::isfinite(c.rms_eps) || !(c.rms_eps > 0.0f) || !(c.rms_eps < 1.0f))
    fail(file, ": metadata key '", a, "attention.layer_norm_rms_epsilon' is ", c.rms_eps,
         " (as float32); expected a finite value in (0, 1)");
  if (!std::isfinite(c.rope_freq_base) || !(c.rope_freq_base > 1.0f))
    fail(file, ": metadata key '", a, "rope.freq_base' is ", c.rope_freq_base,
         " (as float32); expected a finite value > 1");
  (void)mul_or_fail<int64_t>(c.n_head, c.head_dim, file, ": ", a, "attention.head_count x head dim (q_dim)");
  (void)mul_or_fail<int64_t>(c.n_head_kv, c.head_dim, file, ": ", a, "attention.head_count_kv x head dim (kv_dim)");
  if (c.n_head_kv > c.n_head)
    fail(file, ": ", a, "attention.head_count_kv (", c.n_head_kv, ") exceeds ", a, "attention.head_count (",
         c.n_head, ")");
  check_layers_present(f, c);
  if (f.has(a + "vocab_size")) {
    const uint64_t v = f.get_uint(a + "vocab_size");
    if (v != static_cast<uint64_t>(c.n_vocab))
      fail(file, ": metadata key '", a, "vocab_size' is ", v, " but token_embd.weight has ", c.n_vocab,
           " rows; expected equal");
  }
}

void check_context_length(const Model& m, int64_t n_positions, const std::string& what) {
  const LlamaConfig& c = m.config();
  if (n_positions <= 0) fail(m.path().string(), ": ", what, ": expected at least one position");
  if (n_positions > c.n_ctx_train)
    fail(m.path().string(), ": ", what, " needs ", n_positions, " positions, more than the model's context length ",
         c.n_ctx_train, " (metadata key '", c.arch, ".context_length')");
}

std::vector<std::string> nonfinite_weights(const Model& m, int threads) {
  std::vector<const TensorRef*> refs;
  const LlamaWeights& w = m.weights();
  refs.push_back(&w.token_embd);
  refs.push_back(&w.output_norm);
  if (!w.output_tied) refs.push_back(&w.output);
  if (w.rope_freqs.info) refs.push_back(&w.rope_freqs);
  for (const LayerWeights& l : w.layers) {
    for (const TensorRef* t : {&l.attn_norm, &l.wq, &l.wk, &l.wv, &l.wo, &l.ffn_norm, &l.w_gate, &l.w_up, &l.w_down})
      refs.push_back(t);
    if (l.has_qkv_bias())  // qwen2's optional Q/K/V biases (models engineer, issue 13)
      for (const TensorRef* t : {&l.bq, &l.bk, &l.bv}) refs.push_back(t);
  }
  std::vector<std::string> warnings(refs.size());
  parallel_for(
      static_cast<int64_t>(refs.size()),
      [&](int64_t b, int64_t e) {
        for (int64_t i = b; i < e; ++i) {
          const TensorRef& t = *refs[static_cast<size_t>(i)];
          const int64_t n = t.rows * t.cols;
          const auto bad = quant::count_nonfinite(t.type, t.data, n);
          if (!bad || !bad->any()) continue;
          warnings[static_cast<size_t>(i)] = m.path().string() + ": tensor " + quote_untrusted(t.name) + " (" +
                                             std::string(quant::type_name(t.type)) + "): " +
                                             std::to_string(bad->values) + " of " + std::to_string(n) +
                                             " values are NaN or infinite, the first at element " +
                                             std::to_string(bad->first);
        }
      },
      threads);
  std::erase_if(warnings, [](const std::string& s) { return s.empty(); });
  return warnings;
}

}  // namespace pfx::model

// read_llama_config: the hyper-parameters of a llama-family GGUF file (see llama.h, arch.h).
#include <cmath>
#include <string>

#include "model/arch.h"
#include "model/checks.h"
#include "model/dims.h"
#include "model/llama.h"
#include "util/error.h"
#include "util/escape.h"

namespace pfx::model {
namespace {

// A positive hyper-parameter; `key` names it in the error.
int64_t positive(const gguf::File& f, const std::string& key, uint64_t value) {
  if (value == 0 || value > (uint64_t{1} << 40))
    fail(f.path().string(), ": metadata key '", key, "': expected a positive count, found ", value);
  return static_cast<int64_t>(value);
}

}  // namespace

LlamaConfig read_llama_config(const gguf::File& f) {
  const std::string file = f.path().string();
  LlamaConfig c;
  c.arch = f.get_string("general.architecture");
  const ArchTraits* arch = find_arch(c.arch);
  if (!arch) fail(file, ": general.architecture is ", quote_untrusted(c.arch), "; supported: ", supported_arch_names());
  c.rope_style = arch->rope_style;
  const std::string a = c.arch + ".";

  c.n_embd = positive(f, a + "embedding_length", f.get_uint(a + "embedding_length"));
  c.n_layer = positive(f, a + "block_count", f.get_uint(a + "block_count"));
  c.n_head = positive(f, a + "attention.head_count", f.get_uint(a + "attention.head_count"));
  c.n_head_kv = positive(f, a + "attention.head_count_kv",
                         f.get_uint_or(a + "attention.head_count_kv", static_cast<uint64_t>(c.n_head)));
  c.n_ff = positive(f, a + "feed_forward_length", f.get_uint(a + "feed_forward_length"));
  c.n_ctx_train = positive(f, a + "context_length", f.get_uint(a + "context_length"));
  c.rms_eps = float_key(f, a + "attention.layer_norm_rms_epsilon");
  c.rope_freq_base = float_key(f, a + "rope.freq_base", 10000.0);

  if (c.n_head % c.n_head_kv != 0)
    fail(file, ": ", a, "attention.head_count (", c.n_head, ") must be a multiple of ", a,
         "attention.head_count_kv (", c.n_head_kv, ")");
  if (f.has(a + "attention.key_length")) {
    c.head_dim = positive(f, a + "attention.key_length", f.get_uint(a + "attention.key_length"));
  } else {
    if (c.n_embd % c.n_head != 0)
      fail(file, ": ", a, "embedding_length (", c.n_embd, ") is not a multiple of ", a, "attention.head_count (",
           c.n_head, ") and no ", a, "attention.key_length is given");
    c.head_dim = c.n_embd / c.n_head;
  }
  const uint64_t value_length = f.get_uint_or(a + "attention.value_length", static_cast<uint64_t>(c.head_dim));
  if (static_cast<int64_t>(value_length) != c.head_dim)
    fail(file, ": ", a, "attention.value_length (", value_length, ") differs from the key length (", c.head_dim,
         "); not supported");
  c.n_rot = static_cast<int64_t>(f.get_uint_or(a + "rope.dimension_count", static_cast<uint64_t>(c.head_dim)));
  if (c.n_rot <= 0 || c.n_rot > c.head_dim || c.n_rot % 2 != 0)
    fail(file, ": ", a, "rope.dimension_count is ", c.n_rot, "; expected an even number in [2, head_dim = ",
         c.head_dim, "]");
  // RoPE scaling changes the rotation angles. As llama.cpp: the type defaults to linear, the
  // factor (or the older rope.scale_linear) to none; linear divides every angle by the factor.
  // Llama 3's scaling needs no key: it is the rope_freqs.weight tensor (bound by Model::load).
  const std::string scaling = f.has(a + "rope.scaling.type") ? f.get_string(a + "rope.scaling.type") : "linear";
  const std::string factor_key = f.has(a + "rope.scaling.factor") ? a + "rope.scaling.factor" : a + "rope.scale_linear";
  const double factor = f.get_float_or(factor_key, 0.0);
  if (scaling == "linear") {
    if (factor != 0.0 && !(factor > 0.0 && std::isfinite(factor)))
      fail(file, ": ", factor_key, " is ", factor, "; expected a positive factor");
    c.rope_freq_scale = factor == 0.0 ? 1.0f : static_cast<float>(1.0 / factor);
  } else if (scaling != "none") {
    fail(file, ": ", a, "rope.scaling.type is ", quote_untrusted(scaling), (factor != 0.0 ? " (factor " + std::to_string(factor) + ")" : ""),
         "; only 'none' and 'linear' RoPE scaling (and llama3's rope_freqs.weight) are implemented");
  }
  c.sliding_window = static_cast<int64_t>(f.get_uint_or(a + "attention.sliding_window", 0));

  const gguf::TensorInfo* embd = f.find_tensor("token_embd.weight");
  if (!embd) fail(file, ": missing tensor 'token_embd.weight' (token embeddings)");
  if (embd->dims.size() != 2)
    fail(file, ": tensor 'token_embd.weight': expected 2 dims [n_embd, n_vocab], found ", dims_string(embd->dims));
  c.n_vocab = embd->dims[1];
  if (const gguf::Value* tokens = f.find("tokenizer.ggml.tokens"); tokens && tokens->is_array()) {
    if (static_cast<int64_t>(tokens->array_size()) != c.n_vocab)
      fail(file, ": tokenizer.ggml.tokens has ", tokens->array_size(), " entries but token_embd.weight has ",
           c.n_vocab, " rows; expected equal");
  }
  check_config(f, c);  // every count and value against what the file holds, before any allocation
  return c;
}

}  // namespace pfx::model

// Llama config and weight binding from GGUF (see llama.h).
#include "model/llama.h"

#include <sstream>

#include "model/checks.h"
#include "util/error.h"
#include "util/escape.h"

namespace pfx::model {
namespace {

std::string dims_string(const std::vector<int64_t>& dims) {
  std::ostringstream os;
  os << '[';
  for (size_t i = 0; i < dims.size(); ++i) os << (i ? ", " : "") << dims[i];
  os << ']';
  return os.str();
}

// A positive hyper-parameter; `what` names the key in the error.
int64_t positive(const gguf::File& f, const std::string& key, uint64_t value) {
  if (value == 0 || value > (uint64_t{1} << 40))
    fail(f.path().string(), ": metadata key '", key, "': expected a positive count, found ", value);
  return static_cast<int64_t>(value);
}

// Binds one tensor and checks its ggml dims against `expected`.
TensorRef bind(const gguf::File& f, const std::string& name, const std::vector<int64_t>& expected,
               const std::string& role) {
  const gguf::TensorInfo* info = f.find_tensor(name);
  if (!info)
    fail(f.path().string(), ": missing tensor '", name, "' (", role, "; expected dims ", dims_string(expected),
         " in ggml order)");
  if (info->dims != expected)
    fail(f.path().string(), ": tensor '", name, "' (", role, "): expected dims ", dims_string(expected),
         " (ggml order: row length first), found ", dims_string(info->dims));
  TensorRef t;
  t.info = info;
  t.data = f.tensor_data(*info);
  t.type = info->type;
  t.cols = info->cols();
  t.rows = info->rows();
  t.name = name;
  return t;
}

}  // namespace

LlamaConfig read_llama_config(const gguf::File& f) {
  const std::string file = f.path().string();
  LlamaConfig c;
  c.arch = f.get_string("general.architecture");
  if (c.arch != "llama")
    fail(file, ": general.architecture is ", quote_untrusted(c.arch), "; only 'llama' is supported");
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
  // RoPE scaling changes the rotation angles; the reference implements plain llama RoPE only.
  if (f.has(a + "rope.scaling.type")) {
    const std::string type = f.get_string(a + "rope.scaling.type");
    const double factor = f.get_float_or(a + "rope.scaling.factor", 1.0);
    if (type != "none" && factor != 1.0)
      fail(file, ": ", a, "rope.scaling.type is '", type, "' (factor ", factor, "); only unscaled RoPE is supported");
  }

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

Model Model::load(const std::filesystem::path& path) {
  Model m;
  m.file_ = std::make_unique<gguf::File>(gguf::File::open(path));
  const gguf::File& f = *m.file_;
  m.config_ = read_llama_config(f);
  const LlamaConfig& c = m.config_;

  LlamaWeights& w = m.weights_;
  w.token_embd = bind(f, "token_embd.weight", {c.n_embd, c.n_vocab}, "token embeddings");
  w.output_norm = bind(f, "output_norm.weight", {c.n_embd}, "final RMSNorm weight");
  if (f.find_tensor("output.weight")) {
    w.output = bind(f, "output.weight", {c.n_embd, c.n_vocab}, "output head");
  } else {
    w.output = w.token_embd;  // tied embeddings: the head reuses token_embd
    w.output_tied = true;
  }
  w.layers.resize(static_cast<size_t>(c.n_layer));
  for (int64_t i = 0; i < c.n_layer; ++i) {
    const std::string p = "blk." + std::to_string(i) + ".";
    const std::string role = "layer " + std::to_string(i) + " of " + std::to_string(c.n_layer);
    LayerWeights& l = w.layers[static_cast<size_t>(i)];
    l.attn_norm = bind(f, p + "attn_norm.weight", {c.n_embd}, role + ", attention RMSNorm");
    l.wq = bind(f, p + "attn_q.weight", {c.n_embd, c.q_dim()}, role + ", Q projection");
    l.wk = bind(f, p + "attn_k.weight", {c.n_embd, c.kv_dim()}, role + ", K projection");
    l.wv = bind(f, p + "attn_v.weight", {c.n_embd, c.kv_dim()}, role + ", V projection");
    l.wo = bind(f, p + "attn_output.weight", {c.q_dim(), c.n_embd}, role + ", attention output");
    l.ffn_norm = bind(f, p + "ffn_norm.weight", {c.n_embd}, role + ", FFN RMSNorm");
    l.w_gate = bind(f, p + "ffn_gate.weight", {c.n_embd, c.n_ff}, role + ", FFN gate");
    l.w_up = bind(f, p + "ffn_up.weight", {c.n_embd, c.n_ff}, role + ", FFN up");
    l.w_down = bind(f, p + "ffn_down.weight", {c.n_ff, c.n_embd}, role + ", FFN down");
  }
  return m;
}

}  // namespace pfx::model

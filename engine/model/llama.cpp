// Model::load: weight binding from GGUF (see llama.h). Every tensor of the file must be bound; an
// optional tensor (output, Q/K/V biases, rope_freqs) is bound when present.
#include "model/llama.h"

#include <cmath>
#include <iostream>
#include <set>

#include "model/arch.h"
#include "model/dims.h"
#include "model/metadata_policy.h"
#include "quant/dequant.h"
#include "util/error.h"

namespace pfx::model {
namespace {

// Binds tensors by name and remembers which, so the leftovers can be named.
class Binder {
 public:
  explicit Binder(const gguf::File& f) : f_(f) {}

  // Binds one tensor and checks its ggml dims against `expected`.
  TensorRef bind(const std::string& name, const std::vector<int64_t>& expected, const std::string& role) {
    const gguf::TensorInfo* info = f_.find_tensor(name);
    if (!info)
      fail(f_.path().string(), ": missing tensor '", name, "' (", role, "; expected dims ", dims_string(expected),
           " in ggml order)");
    if (info->dims != expected)
      fail(f_.path().string(), ": tensor '", name, "' (", role, "): expected dims ", dims_string(expected),
           " (ggml order: row length first), found ", dims_string(info->dims));
    bound_.insert(name);
    TensorRef t;
    t.info = info;
    t.data = f_.tensor_data(*info);
    t.type = info->type;
    t.cols = info->cols();
    t.rows = info->rows();
    t.name = name;
    return t;
  }
  // The tensor when the file has it, else an empty TensorRef.
  TensorRef bind_optional(const std::string& name, const std::vector<int64_t>& expected, const std::string& role) {
    return f_.find_tensor(name) ? bind(name, expected, role) : TensorRef{};
  }
  bool has(const std::string& name) const { return f_.find_tensor(name) != nullptr; }

  // Throws naming every tensor of the file that nothing bound (up to 8, then a count).
  void require_all_bound(const std::string& arch) const {
    std::vector<std::string> left;
    for (const gguf::TensorInfo& t : f_.tensors())
      if (!bound_.count(t.name)) left.push_back(t.name);
    if (left.empty()) return;
    std::string names;
    for (size_t i = 0; i < left.size() && i < 8; ++i) names += (i ? ", " : "") + std::string("'") + left[i] + "'";
    if (left.size() > 8) names += ", … (" + std::to_string(left.size()) + " in all)";
    fail(f_.path().string(), ": ", left.size(), " tensor", left.size() == 1 ? "" : "s", " the ", arch,
         " architecture does not use: ", names, "; they may change the model's arithmetic, so the file is refused "
         "rather than run without them");
  }

 private:
  const gguf::File& f_;
  std::set<std::string> bound_;
};

// rope_freqs.weight as f32 factors, each finite and positive.
std::vector<float> freq_factors(const gguf::File& f, const TensorRef& t) {
  std::vector<float> v(static_cast<size_t>(t.cols));
  quant::dequantize_row(t.type, t.data, v.data(), t.cols);
  for (size_t i = 0; i < v.size(); ++i)
    if (!(v[i] > 0.0f) || !std::isfinite(v[i]))
      fail(f.path().string(), ": tensor 'rope_freqs.weight'[", i, "] is ", v[i], "; expected a positive finite factor");
  return v;
}

}  // namespace

Model Model::load(const std::filesystem::path& path) {
  Model m;
  m.file_ = std::make_unique<gguf::File>(gguf::File::open(path));
  const gguf::File& f = *m.file_;
  m.config_ = read_llama_config(f);
  const LlamaConfig& c = m.config_;
  for (const std::string& w : check_metadata(f, c)) std::cerr << "prefill: warning: " << w << "\n";
  const ArchTraits& arch = *find_arch(c.arch);

  Binder b(f);
  LlamaWeights& w = m.weights_;
  w.token_embd = b.bind("token_embd.weight", {c.n_embd, c.n_vocab}, "token embeddings");
  w.output_norm = b.bind("output_norm.weight", {c.n_embd}, "final RMSNorm weight");
  if (b.has("output.weight")) {
    w.output = b.bind("output.weight", {c.n_embd, c.n_vocab}, "output head");
  } else {
    w.output = w.token_embd;  // tied embeddings: the head reuses token_embd
    w.output_tied = true;
  }
  if (arch.rope_freqs) w.rope_freqs = b.bind_optional("rope_freqs.weight", {c.n_rot / 2}, "RoPE frequency factors");
  w.layers.resize(static_cast<size_t>(c.n_layer));
  for (int64_t i = 0; i < c.n_layer; ++i) {
    const std::string p = "blk." + std::to_string(i) + ".";
    const std::string role = "layer " + std::to_string(i) + " of " + std::to_string(c.n_layer);
    LayerWeights& l = w.layers[static_cast<size_t>(i)];
    l.attn_norm = b.bind(p + "attn_norm.weight", {c.n_embd}, role + ", attention RMSNorm");
    l.wq = b.bind(p + "attn_q.weight", {c.n_embd, c.q_dim()}, role + ", Q projection");
    l.wk = b.bind(p + "attn_k.weight", {c.n_embd, c.kv_dim()}, role + ", K projection");
    l.wv = b.bind(p + "attn_v.weight", {c.n_embd, c.kv_dim()}, role + ", V projection");
    // Q/K/V biases: all three or none (every converter writes them together).
    if (b.has(p + "attn_q.bias") || b.has(p + "attn_k.bias") || b.has(p + "attn_v.bias")) {
      l.bq = b.bind(p + "attn_q.bias", {c.q_dim()}, role + ", Q bias (K/V biases are present)");
      l.bk = b.bind(p + "attn_k.bias", {c.kv_dim()}, role + ", K bias (Q/V biases are present)");
      l.bv = b.bind(p + "attn_v.bias", {c.kv_dim()}, role + ", V bias (Q/K biases are present)");
    }
    l.wo = b.bind(p + "attn_output.weight", {c.q_dim(), c.n_embd}, role + ", attention output");
    l.ffn_norm = b.bind(p + "ffn_norm.weight", {c.n_embd}, role + ", FFN RMSNorm");
    l.w_gate = b.bind(p + "ffn_gate.weight", {c.n_embd, c.n_ff}, role + ", FFN gate");
    l.w_up = b.bind(p + "ffn_up.weight", {c.n_embd, c.n_ff}, role + ", FFN up");
    l.w_down = b.bind(p + "ffn_down.weight", {c.n_ff, c.n_embd}, role + ", FFN down");
  }
  b.require_all_bound(c.arch);

  // Every matrix and vector must be a type the reference can decode; say which, before any
  // backend allocates anything.
  auto decodable = [&](const TensorRef& t) {
    if (t.info && !quant::traits(t.type).can_dequantize)
      fail(f.path().string(), ": tensor '", t.name, "' has type ", quant::type_name(t.type),
           ", which this engine cannot decode (supported: f32, f16, bf16, q4_0, q4_1, q5_0, q5_1, q8_0, q4_K, q5_K, "
           "q6_K)");
  };
  for (const TensorRef* t : {&w.token_embd, &w.output_norm, &w.output, &w.rope_freqs}) decodable(*t);
  for (const LayerWeights& l : w.layers)
    for (const TensorRef* t : {&l.attn_norm, &l.wq, &l.wk, &l.wv, &l.bq, &l.bk, &l.bv, &l.wo, &l.ffn_norm, &l.w_gate,
                               &l.w_up, &l.w_down})
      decodable(*t);

  // RoPE frequencies per rotated pair (double): base^(-2i/n_rot) · freq_scale / factor[i].
  std::vector<float> factors;
  if (w.rope_freqs.info) factors = freq_factors(f, w.rope_freqs);
  m.rope_inv_freq_.resize(static_cast<size_t>(c.n_rot / 2));
  for (int64_t i = 0; i < c.n_rot / 2; ++i) {
    double inv = std::pow(static_cast<double>(c.rope_freq_base), -2.0 * static_cast<double>(i) / static_cast<double>(c.n_rot));
    inv *= static_cast<double>(c.rope_freq_scale);
    if (!factors.empty()) inv /= static_cast<double>(factors[static_cast<size_t>(i)]);
    m.rope_inv_freq_[static_cast<size_t>(i)] = inv;
  }
  return m;
}

}  // namespace pfx::model

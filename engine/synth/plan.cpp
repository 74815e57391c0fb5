// Which tensors a profile writes, with which dims, type and init scale; and profile validation
// (see synth.h). The Q4_K_M rule follows llama.cpp's llama_tensor_get_type (src/llama-quant.cpp).
#include <cmath>
#include <set>

#include "quant/types.h"
#include "synth/synth.h"
#include "util/error.h"

namespace pfx::synth {
namespace {

// Per-layer tensors in llama-quantize's file order (by name within a layer); the biases only with
// shape.qkv_bias.
const char* const kLayerRoles[] = {"attn_k.bias",     "attn_k.weight",   "attn_norm.weight", "attn_output.weight",
                                   "attn_q.bias",     "attn_q.weight",   "attn_v.bias",      "attn_v.weight",
                                   "ffn_down.weight", "ffn_gate.weight", "ffn_norm.weight",  "ffn_up.weight"};

bool is_norm_role(std::string_view role) { return role == "attn_norm.weight" || role == "ffn_norm.weight"; }
bool is_bias_role(std::string_view role) { return role.ends_with(".bias"); }

// "blk.7.attn_v.weight" → "attn_v.weight"; other names unchanged.
std::string_view role_of(std::string_view name) {
  if (name.rfind("blk.", 0) != 0) return name;
  const size_t dot = name.find('.', 4);
  return dot == std::string_view::npos ? name : name.substr(dot + 1);
}

bool selects(const TypeRule& r, int64_t layer, int64_t n_layer) {
  switch (r.layers) {
    case LayerSelect::All: return true;
    case LayerSelect::UseMoreBits: return use_more_bits(layer, n_layer);
    case LayerSelect::List:
      for (int64_t l : r.layer_list)
        if (l == layer) return true;
      return false;
  }
  return false;
}

// Index of the first rule matching the tensor, or -1.
int match_rule(const SynthProfile& p, std::string_view name, int64_t layer) {
  for (size_t i = 0; i < p.rules.size(); ++i) {
    const TypeRule& r = p.rules[i];
    if (r.tensor == name) return static_cast<int>(i);
    if (layer >= 0 && r.tensor == role_of(name) && selects(r, layer, p.n_layer)) return static_cast<int>(i);
  }
  return -1;
}

std::string rule_field(int index) { return "types.rules[" + std::to_string(index) + "]"; }

}  // namespace

bool use_more_bits(int64_t layer, int64_t n_layer) {
  // Integer division as in C++; for layer < n_layer/8 the first clause already holds, so the
  // remainder of a negative difference never decides.
  return layer < n_layer / 8 || layer >= 7 * n_layer / 8 || (layer - n_layer / 8) % 3 == 2;
}

quant::Type tensor_type(const SynthProfile& p, std::string_view name, int64_t layer, bool is_norm) {
  const int rule = match_rule(p, name, layer);
  if (rule >= 0) return p.rules[static_cast<size_t>(rule)].type;
  return is_norm ? p.norm_type : p.default_type;
}

std::vector<float> llama3_rope_factors(const RopeScalingSpec& spec, double base, int64_t head_dim) {
  constexpr double kPi = 3.14159265358979323846;
  const double ctx = static_cast<double>(spec.original_context);
  const double low_wavelen = ctx / spec.low_freq_factor, high_wavelen = ctx / spec.high_freq_factor;
  std::vector<float> out;
  for (int64_t i = 0; i < head_dim / 2; ++i) {
    const double freq = std::pow(base, -2.0 * static_cast<double>(i) / static_cast<double>(head_dim));
    const double wavelen = 2.0 * kPi / freq;
    double f = 1.0;
    if (wavelen > low_wavelen) {
      f = spec.factor;
    } else if (wavelen >= high_wavelen) {
      const double smooth = (ctx / wavelen - spec.low_freq_factor) / (spec.high_freq_factor - spec.low_freq_factor);
      f = 1.0 / ((1.0 - smooth) / spec.factor + smooth);
    }
    out.push_back(static_cast<float>(f));
  }
  return out;
}

std::vector<PlannedTensor> plan_tensors(const SynthProfile& p) {
  const int64_t head_dim = p.n_embd / p.n_head, kv_dim = p.n_head_kv * head_dim, vocab = p.vocab.size;
  auto gain = [&](const std::string& role) {
    const auto it = p.init.gain.find(role);
    return it == p.init.gain.end() ? 1.0 : it->second;
  };
  std::vector<PlannedTensor> out;
  auto add = [&](std::string name, std::vector<int64_t> dims, int64_t layer, double mean, double std) {
    const bool norm = dims.size() == 1;
    PlannedTensor t{name, std::move(dims), tensor_type(p, name, layer, norm), mean, std};
    out.push_back(std::move(t));
  };
  if (!p.tie_output) add("output.weight", {p.n_embd, vocab}, -1, 0.0, gain("output") / std::sqrt(double(p.n_embd)));
  add("output_norm.weight", {p.n_embd}, -1, 1.0, p.init.output_norm_std);
  if (p.rope_scaling.llama3) {
    add("rope_freqs.weight", {head_dim / 2}, -1, 0.0, 0.0);
    out.back().values = llama3_rope_factors(p.rope_scaling, p.rope_freq_base, head_dim);
  }
  add("token_embd.weight", {p.n_embd, vocab}, -1, 0.0, p.init.token_embd_std);
  for (int64_t l = 0; l < p.n_layer; ++l) {
    const std::string blk = "blk." + std::to_string(l) + ".";
    for (const char* role_c : kLayerRoles) {
      const std::string role = role_c;
      if (is_bias_role(role)) {
        if (!p.qkv_bias) continue;
        add(blk + role, {role == "attn_q.bias" ? p.n_embd : kv_dim}, l, 0.0, p.init.bias_std);
        continue;
      }
      const std::string short_role = role.substr(0, role.size() - 7);  // without ".weight"
      std::vector<int64_t> dims;
      if (is_norm_role(role)) dims = {p.n_embd};
      else if (role == "attn_q.weight" || role == "attn_output.weight") dims = {p.n_embd, p.n_embd};
      else if (role == "attn_k.weight" || role == "attn_v.weight") dims = {p.n_embd, kv_dim};
      else if (role == "ffn_down.weight") dims = {p.n_ff, p.n_embd};
      else dims = {p.n_embd, p.n_ff};  // ffn_gate, ffn_up
      if (is_norm_role(role)) add(blk + role, dims, l, 1.0, p.init.norm_std);
      else add(blk + role, dims, l, 0.0, gain(short_role) / std::sqrt(double(dims[0])));
    }
  }
  return out;
}

void validate_profile(const SynthProfile& p) {
  const std::string file = p.source.string();
  auto bad = [&](const std::string& field, const auto&... what) { fail(file, ": field '", field, "': ", what...); };
  if (p.name.empty()) bad("name", "expected a non-empty model name");
  if (p.n_embd <= 0 || p.n_layer <= 0 || p.n_head <= 0 || p.n_head_kv <= 0 || p.n_ff <= 0 || p.n_ctx <= 0)
    bad("shape", "every size must be positive (n_embd ", p.n_embd, ", n_layer ", p.n_layer, ", n_head ", p.n_head,
        ", n_head_kv ", p.n_head_kv, ", n_ff ", p.n_ff, ", n_ctx ", p.n_ctx, ")");
  if (p.n_embd % p.n_head != 0) bad("shape.n_head", "n_embd (", p.n_embd, ") must be a multiple of n_head (", p.n_head, ")");
  if ((p.n_embd / p.n_head) % 2 != 0)
    bad("shape.n_head", "head_dim = n_embd / n_head = ", p.n_embd / p.n_head, " must be even (RoPE rotates pairs)");
  if (p.n_head % p.n_head_kv != 0)
    bad("shape.n_head_kv", "n_head (", p.n_head, ") must be a multiple of n_head_kv (", p.n_head_kv, ")");
  if (!(p.rope_freq_base > 0) || !(p.rms_eps > 0)) bad("shape", "rope_freq_base and rms_eps must be positive");
  if (p.arch == "qwen2" && p.rope_scaling.llama3)
    bad("shape.rope_scaling", "qwen2 takes no rope_freqs (llama.cpp's qwen2 graph ignores them)");
  if (p.vocab.size <= 0) bad("vocab.size", "expected a positive vocabulary size, found ", p.vocab.size);
  // <unk>, <s>, </s> and the 256 byte-fallback pieces come first in a synthetic vocabulary.
  if ((p.vocab.copy_from.empty() || p.vocab.synthetic_if_missing) && p.vocab.size < 3 + 256)
    bad("vocab.size", "a synthetic vocabulary needs at least 259 tokens (3 control + 256 byte pieces), found ",
        p.vocab.size);
  for (const auto& [role, g] : p.init.gain)
    if (!(g > 0) || !std::isfinite(g)) bad("init.gain." + role, "expected a positive number, found ", g);
  if (!(p.init.token_embd_std > 0) || !(p.init.norm_std >= 0) || !(p.init.output_norm_std >= 0))
    bad("init", "token_embd_std must be positive, norm_std and output_norm_std >= 0");

  // Rule targets must name tensors this model has.
  std::set<std::string> names, roles(std::begin(kLayerRoles), std::end(kLayerRoles));
  for (const PlannedTensor& t : plan_tensors(p)) names.insert(t.name);
  for (size_t i = 0; i < p.rules.size(); ++i) {
    const TypeRule& r = p.rules[i];
    const std::string field = rule_field(static_cast<int>(i));
    if (!names.count(r.tensor) && !roles.count(r.tensor))
      bad(field + ".tensor", "'", r.tensor, "' names no tensor of this model; expected a tensor name (",
          p.tie_output ? "" : "output.weight, ", "output_norm.weight, token_embd.weight, blk.N.<role>) or a layer role (",
          "attn_q.weight, attn_v.weight, ffn_down.weight, ...)");
    if (r.layers != LayerSelect::All && !roles.count(r.tensor))
      bad(field + ".layers", "layer selection applies to layer roles (e.g. attn_v.weight), not to '", r.tensor, "'");
    for (int64_t l : r.layer_list)
      if (l < 0 || l >= p.n_layer) bad(field + ".layers", "layer ", l, " is outside [0, ", p.n_layer, ")");
  }

  // Every tensor's type must be one we can write, with whole blocks per row.
  for (const PlannedTensor& t : plan_tensors(p)) {
    const int64_t layer = t.name.rfind("blk.", 0) == 0 ? std::stoll(t.name.substr(4)) : -1;
    const int rule = match_rule(p, t.name, layer);
    const std::string field = rule >= 0 ? rule_field(rule) + ".type" : (t.dims.size() == 1 ? "types.norms" : "types.default");
    const quant::TypeTraits& tr = quant::traits(t.type);
    if (!tr.can_quantize)
      bad(field, "tensor '", t.name, "' gets type ", tr.name, ", which the synthesizer cannot write (supported: the ",
          "quantizers in quant/quantize.h)");
    if (t.dims[0] % tr.block_size != 0)
      bad(field, "tensor '", t.name, "' gets type ", tr.name, ", whose blocks of ", tr.block_size,
          " elements do not divide its row length ", t.dims[0], " (k-quants need dims that are multiples of 256)");
  }
}

}  // namespace pfx::synth

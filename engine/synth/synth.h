// Synthetic llama models: a YAML profile (shapes, tensor-type mix, weight-init scales,
// vocabulary) in, a valid llama GGUF with seeded random weights out. Weights are noise, but the
// shapes, types, metadata and therefore the kernels and timings are real. The schema is documented
// in profiles/models/tiny.yaml and profiles/models/llama-7b-q4km.yaml.
//
//   SynthProfile p = load_profile("profiles/models/tiny.yaml");
//   write_synthetic_model(p, "tiny.gguf", /*seed=*/1);
//
// Output is a pure function of (profile, seed): bitwise identical for any thread count.
#pragma once
#include <cstdint>
#include <filesystem>
#include <functional>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "quant/types.h"

namespace pfx::synth {

// Which layers a per-layer type rule applies to.
enum class LayerSelect {
  All,          // every layer
  UseMoreBits,  // llama.cpp's use_more_bits(i, n): i < n/8 || i >= 7n/8 || (i - n/8) % 3 == 2
  List,         // the layers in TypeRule::layer_list
};

// One entry of `types.rules`: tensors named `tensor` get `type`. `tensor` is a whole tensor name
// ("output.weight", "token_embd.weight", "blk.0.attn_q.weight") or a per-layer role
// ("attn_v.weight": every blk.N.attn_v.weight whose N is selected by `layers`).
struct TypeRule {
  std::string tensor;
  LayerSelect layers = LayerSelect::All;
  std::vector<int64_t> layer_list;
  quant::Type type = quant::Type::F32;
};

// Weight init (normal = Irwin-Hall approximation, see random.h): every matrix ~
// normal(0, gain[role] / sqrt(fan_in)) with role the tensor name
// without "blk.N." and ".weight" (attn_q, ..., output); token_embd ~ normal(0, token_embd_std);
// layer norm weights 1 + norm_std * normal(0, 1); output_norm 1 + output_norm_std * normal(0, 1).
struct InitSpec {
  double token_embd_std = 1.0;
  double norm_std = 0.1;
  double output_norm_std = 0.0;
  double bias_std = 0.5;
  std::map<std::string, double> gain;
};

struct VocabSpec {
  int64_t size = 0;                 // n_vocab
  std::filesystem::path copy_from;  // GGUF whose tokenizer.* metadata is copied; empty: synthetic
  bool synthetic_if_missing = false;  // copy_from absent → synthetic vocab instead of an error
  // Copied vocab shorter than size: append "[PAD<id>]" tokens of type unused up to size, as
  // llama.cpp's converter pads Qwen2.5-7B's 151,936 tokenizer entries to its 152,064 rows.
  bool pad_to_size = false;
};

// Llama 3.1's rope_scaling "llama3" (shape.rope_scaling): written as rope_freqs.weight, per rotated
// pair i of frequency f_i = base^(-2i/head_dim), wavelength w = 2π / f_i: factor 1 where
// w < original_context / high_freq_factor, `factor` where w > original_context / low_freq_factor,
// else 1 / ((1 - s) / factor + s) with s = (original_context / w - low) / (high - low).
struct RopeScalingSpec {
  bool llama3 = false;
  double factor = 8.0, low_freq_factor = 1.0, high_freq_factor = 4.0;
  int64_t original_context = 8192;
};

struct SynthProfile {
  std::filesystem::path source;  // the YAML file (named in errors and in the GGUF metadata)
  std::vector<std::string> overrides;  // "shape.n_layer=4" assignments applied on load
  std::string name;              // general.name
  std::string description;
  // shape
  std::string arch = "llama";    // general.architecture: llama | qwen2 (metadata keys "<arch>.*")
  int64_t n_embd = 0, n_layer = 0, n_head = 0, n_head_kv = 0, n_ff = 0, n_ctx = 0;
  double rope_freq_base = 10000.0, rms_eps = 1e-5;
  bool tie_output = false;       // no output.weight: the head reuses token_embd
  bool qkv_bias = false;         // blk.N.attn_{q,k,v}.bias (f32, ~ normal(0, init.bias_std))
  RopeScalingSpec rope_scaling;
  // types
  quant::Type default_type = quant::Type::F32;  // 2-D tensors no rule matches
  quant::Type norm_type = quant::Type::F32;     // 1-D tensors (norm weights)
  uint32_t file_type = 0;                       // general.file_type (llama_ftype)
  std::vector<TypeRule> rules;                  // first match wins
  InitSpec init;
  VocabSpec vocab;
};

// Parses and validates a profile. `overrides` are "dotted.key=value" assignments applied to the
// YAML tree before it is read (value parsed as YAML), e.g. {"shape.n_layer=4", "vocab.size=512"}.
// Throws pfx::Error naming the file, the field (and line) and what was expected.
SynthProfile load_profile(const std::filesystem::path& yaml, const std::vector<std::string>& overrides = {});
// The same from YAML text (e.g. a profile compiled into a binary); `source` names it in errors and
// anchors relative paths.
SynthProfile parse_profile(std::string_view yaml_text, const std::filesystem::path& source,
                           const std::vector<std::string>& overrides = {});
// Checks a (possibly edited) profile: shapes, head divisibility, every tensor's row length a
// multiple of its type's block size, known rule targets. Throws pfx::Error naming file + field.
void validate_profile(const SynthProfile& profile);

// llama.cpp's use_more_bits (src/llama-quant.cpp): the layers Q4_K_M gives q6_K attn_v/ffn_down.
bool use_more_bits(int64_t layer, int64_t n_layer);

// A tensor as it will be written, in file order (llama-quantize's order: non-layer tensors by
// name, then layer by layer, each by name).
struct PlannedTensor {
  std::string name;
  std::vector<int64_t> dims;  // ggml order
  quant::Type type = quant::Type::F32;
  double mean = 0, std = 0;   // init distribution: mean + std * normal(0, 1)
  std::vector<float> values;  // fixed values instead (rope_freqs.weight), written as f32
};
// Llama 3 rope frequency factors (RopeScalingSpec) for head_dim / 2 pairs.
std::vector<float> llama3_rope_factors(const RopeScalingSpec& spec, double base, int64_t head_dim);
std::vector<PlannedTensor> plan_tensors(const SynthProfile& profile);
// The type `name` (in layer `layer`, -1 for non-layer tensors) gets from the profile's rules.
quant::Type tensor_type(const SynthProfile& profile, std::string_view name, int64_t layer, bool is_norm);

struct SynthResult {
  int64_t n_tensors = 0;
  int64_t file_bytes = 0;
  std::string vocab_source;  // also stored as pfx.synth.vocab_source
};

// Writes the model to `out` (atomically: temp file + rename). Tensors are generated, quantized and
// streamed one at a time, rows in parallel (pfx::parallel_for over `threads`, <= 0: default).
// `progress` gets one line per tensor. Throws pfx::Error on a bad profile or I/O failure.
SynthResult write_synthetic_model(const SynthProfile& profile, const std::filesystem::path& out, uint64_t seed,
                                  std::function<void(std::string_view)> progress = {}, int threads = 0);

}  // namespace pfx::synth

// The `<arch>.*` metadata policy (see metadata_policy.h): keys by what they do to the arithmetic.
#include "model/metadata_policy.h"

#include <array>
#include <cmath>
#include <string_view>

#include "util/error.h"

namespace pfx::model {
namespace {

// Read and applied by read_llama_config.
constexpr std::array<std::string_view, 16> kImplemented = {
    "embedding_length",       "block_count",          "attention.head_count",
    "attention.head_count_kv", "feed_forward_length",  "context_length",
    "attention.layer_norm_rms_epsilon", "rope.freq_base", "attention.key_length",
    "attention.value_length", "rope.dimension_count", "rope.scaling.type",
    "rope.scaling.factor",    "attention.sliding_window", "vocab_size",
    "rope.scale_linear",
};

// Parameters only YaRN / LongRoPE scaling reads; read_llama_config refuses those scaling types, so
// here they change nothing.
constexpr std::array<std::string_view, 7> kOnlyForRefusedScaling = {
    "rope.scaling.original_context_length", "rope.scaling.yarn_log_multiplier",
    "rope.scaling.yarn_ext_factor",         "rope.scaling.yarn_attn_factor",
    "rope.scaling.yarn_beta_fast",          "rope.scaling.yarn_beta_slow",
    "rope.scaling.alpha",
};

template <size_t N>
bool listed(const std::array<std::string_view, N>& list, std::string_view k) {
  for (std::string_view x : list)
    if (x == k) return true;
  return false;
}

}  // namespace

std::vector<std::string> check_metadata(const gguf::File& f, const LlamaConfig& c) {
  const std::string file = f.path().string();
  const std::string prefix = c.arch + ".";
  std::vector<std::string> warnings;
  for (const auto& [key, value] : f.kv()) {
    if (key.rfind(prefix, 0) != 0) continue;
    const std::string_view k = std::string_view(key).substr(prefix.size());
    if (listed(kImplemented, k)) continue;
    if (listed(kOnlyForRefusedScaling, k)) {
      warnings.push_back(file + ": metadata key '" + key + "' ignored: only YaRN/LongRoPE scaling reads it, and this "
                         "file does not use either");
      continue;
    }
    if (k == "rope.scaling.finetuned" || k == "tensor_data_layout") continue;  // provenance only
    // Counts that are harmless at their "absent" value.
    if (k == "expert_count" || k == "expert_used_count" || k == "expert_shared_count") {
      if (f.get_uint(key) == 0) continue;
      fail(file, ": metadata key '", key, "' = ", f.get_uint(key), ": mixture-of-experts models are not supported");
    }
    if (k == "rope.scaling.attn_factor") {
      if (f.get_float(key) == 1.0) continue;
      fail(file, ": metadata key '", key, "' = ", f.get_float(key),
           ": RoPE attention-factor scaling is not implemented (only 1 is accepted)");
    }
    if (k == "attention.scale") {
      const double expected = 1.0 / std::sqrt(static_cast<double>(c.head_dim));
      if (std::abs(f.get_float(key) - expected) <= 1e-6 * expected) continue;
      fail(file, ": metadata key '", key, "' = ", f.get_float(key), ": an attention scale other than 1/sqrt(head_dim) = ",
           expected, " is not implemented");
    }
    if (k == "attention.causal") {
      if (f.get_bool_or(key, true)) continue;
      fail(file, ": metadata key '", key, "' = false: non-causal attention is not supported");
    }
    fail(file, ": metadata key '", key, "' is not understood by this engine; it may change the model's arithmetic, so "
         "the file is refused rather than run without it");
  }
  return warnings;
}

}  // namespace pfx::model

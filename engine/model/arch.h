// The architectures this engine runs, and what sets each apart. Both are the llama block (RMSNorm,
// GQA attention with RoPE, SwiGLU FFN); they differ in how RoPE pairs elements and in which
// optional tensors they may carry.
//   llama: Llama 1/2/3.x, Mistral 7B (v0.x), TinyLlama… Adjacent RoPE pairs; optional Q/K/V
//          biases; optional rope_freqs.weight (Llama 3.1+ frequency scaling).
//   qwen2: Qwen2, Qwen2.5. Neox RoPE pairs (HF rotate_half, which the converter does not permute
//          for qwen2); Q/K/V biases; no rope_freqs (llama.cpp's qwen2 graph passes none).
#pragma once
#include <string>
#include <string_view>

#include "model/llama.h"

namespace pfx::model {

struct ArchTraits {
  std::string_view name;  // general.architecture
  RopeStyle rope_style;
  bool rope_freqs;        // rope_freqs.weight may appear
};

// The traits of a general.architecture value, or nullptr when we do not run it.
const ArchTraits* find_arch(std::string_view name);
// "llama, qwen2", for error messages.
std::string supported_arch_names();

}  // namespace pfx::model

// The model's hostile-input checks, in one place so that architecture code (llama.cpp) stays
// about architectures: each count and value read from the file is checked against what the file
// itself holds before anything is sized from it.
//   check_config        — called once by read_llama_config, before any allocation from it
//   check_context_length — called by whoever sizes a KV cache (the CLI's backends, bench)
//   nonfinite_weights   — called when a backend is about to use the weights
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "gguf/gguf.h"
#include "model/llama.h"

namespace pfx::model {

// A float hyper-parameter: the key's value (or `dflt` when absent), which must be finite and
// within float32's range (checked before the conversion, which would otherwise be undefined).
float float_key(const gguf::File& file, const std::string& key, std::optional<double> dflt = std::nullopt);

// Throws pfx::Error naming the file and key when the config cannot describe this file:
// rms epsilon not in (0, 1); rope base not finite or <= 1; a head product (q_dim, kv_dim) that
// overflows; block_count larger than the layers the file has tensors for (so a 1 MB file cannot
// make us allocate 2^40 layers); vocab_size / tokenizer size disagreeing with token_embd.
void check_config(const gguf::File& file, const LlamaConfig& config);

// Throws pfx::Error when `n_positions` (prompt plus generated tokens: the KV cache a backend is
// about to size) exceeds the model's context length (<arch>.context_length) or is not positive.
// `what` says where the count came from ("a prompt of 12 tokens + 100 generated").
void check_context_length(const Model& model, int64_t n_positions, const std::string& what);

// One warning per bound weight tensor that holds NaN or infinity ("model.gguf: tensor
// 'blk.0.attn_q.weight' (f32): 3 of 4096 values are NaN or infinite, the first at element 17").
// Reads every weight once (tensors in parallel over `threads`, <= 0: the default).
std::vector<std::string> nonfinite_weights(const Model& model, int threads = 0);

}  // namespace pfx::model

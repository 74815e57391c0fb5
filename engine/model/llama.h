// Llama-family model binding: hyper-parameters from GGUF metadata and every weight tensor located,
// shape-checked and typed, before any backend touches it. Backends (CPU reference, CUDA) read
// weights only through these structs, so a malformed model fails here with one clear message.
#pragma once
#include <cstdint>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "gguf/gguf.h"
#include "quant/types.h"

namespace pfx::model {

// Read from `<arch>.*` metadata keys. head_dim is `<arch>.attention.key_length`, else
// n_embd / n_head; n_rot is `<arch>.rope.dimension_count`, else head_dim (ggml rotates the first
// n_rot elements of each head and leaves the rest).
struct LlamaConfig {
  std::string arch;           // general.architecture; only "llama" is accepted for now
  int64_t n_vocab = 0;        // rows of token_embd (= tokenizer.ggml.tokens size when present)
  int64_t n_embd = 0;         // .embedding_length
  int64_t n_layer = 0;        // .block_count
  int64_t n_head = 0;         // .attention.head_count
  int64_t n_head_kv = 0;      // .attention.head_count_kv (default n_head)
  int64_t head_dim = 0;       // elements per attention head
  int64_t n_ff = 0;           // .feed_forward_length
  int64_t n_ctx_train = 0;    // .context_length
  float rms_eps = 1e-5f;      // .attention.layer_norm_rms_epsilon
  float rope_freq_base = 10000.0f;  // .rope.freq_base (default 10000)
  int64_t n_rot = 0;          // .rope.dimension_count (default head_dim)

  int64_t q_dim() const { return n_head * head_dim; }      // width of Q and of attn_output's input
  int64_t kv_dim() const { return n_head_kv * head_dim; }  // width of K and V
  int64_t n_gqa() const { return n_head / n_head_kv; }     // query heads per KV head
};

// One weight as a backend sees it: a row-major matrix [rows, cols] (cols = ggml dims[0], the
// contiguous length), stored in `type` at `data` (inside the GGUF mapping; valid while the Model
// lives). A 1-D tensor (norm weight) has rows = 1.
struct TensorRef {
  const gguf::TensorInfo* info = nullptr;
  const uint8_t* data = nullptr;
  quant::Type type = quant::Type::F32;
  int64_t rows = 0;
  int64_t cols = 0;
  std::string name;

  int64_t row_bytes() const { return info ? info->row_bytes() : 0; }
  const uint8_t* row(int64_t r) const { return data + r * row_bytes(); }
};

// Shapes as [rows, cols]: wq [q_dim, n_embd], wk/wv [kv_dim, n_embd], wo [n_embd, q_dim],
// w_gate/w_up [n_ff, n_embd], w_down [n_embd, n_ff], norms [1, n_embd].
struct LayerWeights {
  TensorRef attn_norm, wq, wk, wv, wo, ffn_norm, w_gate, w_up, w_down;
};

// token_embd [n_vocab, n_embd]; output [n_vocab, n_embd] (= token_embd when output.weight is
// absent: output_tied); output_norm [1, n_embd].
struct LlamaWeights {
  TensorRef token_embd, output_norm, output;
  bool output_tied = false;
  std::vector<LayerWeights> layers;
};

// Reads the hyper-parameters of an opened GGUF file; throws pfx::Error naming the file and key.
LlamaConfig read_llama_config(const gguf::File& file);

class Model {
 public:
  // Opens (memory-maps) the file, reads the config and binds + validates every tensor: each
  // expected tensor must exist with the expected dims; errors name the file, the tensor and the
  // expected vs found dims.
  static Model load(const std::filesystem::path& path);

  const gguf::File& file() const { return *file_; }
  const LlamaConfig& config() const { return config_; }
  const LlamaWeights& weights() const { return weights_; }
  const std::filesystem::path& path() const { return file_->path(); }

 private:
  Model() = default;
  // Held by pointer so the TensorRefs' info/data pointers survive moves of the Model.
  std::unique_ptr<gguf::File> file_;
  LlamaConfig config_;
  LlamaWeights weights_;
};

}  // namespace pfx::model

// Llama-family model binding: hyper-parameters from GGUF metadata and every weight tensor located,
// shape-checked and typed, before any backend touches it. Backends (CPU reference, CUDA) read
// weights only through these structs, so a malformed model fails here with one clear message.
// Architectures (model/arch.h): llama (Llama 1-3.x, Mistral) and qwen2 (Qwen2, Qwen2.5). Nothing
// in the file is ignored without a word: a tensor no binding takes, or a metadata key that would
// change the arithmetic and is not implemented, is an error naming it (model/metadata_policy.h).
#pragma once
#include <cstdint>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "gguf/gguf.h"
#include "quant/types.h"

namespace pfx::model {

// How RoPE pairs the elements of a head (ggml's rope modes): Adjacent (mode 0, "NORM": llama,
// Mistral) rotates (x[2i], x[2i+1]); Neox (mode 2: qwen2) rotates (x[i], x[i + n_rot/2]). Either
// way pair i turns by theta = pos · base^(-2i/n_rot) · freq_scale / freq_factor[i].
enum class RopeStyle { Adjacent, Neox };

// Read from `<arch>.*` metadata keys. head_dim is `<arch>.attention.key_length`, else
// n_embd / n_head; n_rot is `<arch>.rope.dimension_count`, else head_dim (ggml rotates the first
// n_rot elements of each head and leaves the rest).
struct LlamaConfig {
  std::string arch;           // general.architecture: "llama" or "qwen2" (model/arch.h)
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
  RopeStyle rope_style = RopeStyle::Adjacent;  // by architecture
  // Linear RoPE scaling (.rope.scaling.type = linear): 1 / .rope.scaling.factor; else 1. Llama 3's
  // frequency scaling comes as per-pair factors in the tensor rope_freqs.weight (LlamaWeights).
  float rope_freq_scale = 1.0f;
  // .attention.sliding_window (0: none). Attention over at most this many past tokens equals full
  // attention as long as the context is no longer, so backends refuse a longer context.
  int64_t sliding_window = 0;

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
// w_gate/w_up [n_ff, n_embd], w_down [n_embd, n_ff], norms [1, n_embd]. The optional Q/K/V biases
// (attn_{q,k,v}.bias: qwen2 has them, llama may) are [1, q_dim] / [1, kv_dim], added to the
// projections before RoPE; absent: info == nullptr (all three or none).
struct LayerWeights {
  TensorRef attn_norm, wq, wk, wv, wo, ffn_norm, w_gate, w_up, w_down;
  TensorRef bq, bk, bv;
  bool has_qkv_bias() const { return bq.info != nullptr; }
};

// token_embd [n_vocab, n_embd]; output [n_vocab, n_embd] (= token_embd when output.weight is
// absent: output_tied); output_norm [1, n_embd]; rope_freqs [1, n_rot/2] f32 when present (llama3
// frequency scaling: pair i's angle is divided by rope_freqs[i]).
struct LlamaWeights {
  TensorRef token_embd, output_norm, output;
  bool output_tied = false;
  TensorRef rope_freqs;
  std::vector<LayerWeights> layers;
};

// Reads the hyper-parameters of an opened GGUF file; throws pfx::Error naming the file and key.
LlamaConfig read_llama_config(const gguf::File& file);

class Model {
 public:
  // Opens (memory-maps) the file, reads the config and binds + validates every tensor: each
  // expected tensor must exist with the expected dims, and every tensor of the file must be bound
  // (an unknown one is an error listing them); errors name the file, the tensor and the expected
  // vs found dims. Metadata warnings (model/metadata_policy.h) go to stderr.
  static Model load(const std::filesystem::path& path);

  const gguf::File& file() const { return *file_; }
  const LlamaConfig& config() const { return config_; }
  const LlamaWeights& weights() const { return weights_; }
  const std::filesystem::path& path() const { return file_->path(); }
  // The RoPE frequency of each rotated pair (n_rot/2 values, see RopeStyle), in double:
  // base^(-2i/n_rot) · rope_freq_scale / rope_freqs[i].
  const std::vector<double>& rope_inv_freq() const { return rope_inv_freq_; }

 private:
  Model() = default;
  // Held by pointer so the TensorRefs' info/data pointers survive moves of the Model.
  std::unique_ptr<gguf::File> file_;
  LlamaConfig config_;
  LlamaWeights weights_;
  std::vector<double> rope_inv_freq_;
};

}  // namespace pfx::model

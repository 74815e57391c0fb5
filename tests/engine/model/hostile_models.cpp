// Hostile model files (see hostile_models.h): TinyLlama with seeded random weights and a small
// vocabulary; raw-byte metadata bombs.
#include "engine/model/hostile_models.h"

#include <fstream>
#include <random>
#include <vector>

#include "engine/gguf/raw_bytes.h"

#include "quant/quantize.h"

namespace pfx::test {

void TinyLlama::write(const std::filesystem::path& out) const {
  gguf::Writer w;
  w.set_string("general.architecture", "llama");
  w.set_string("general.name", "tiny-hostile");
  w.set_u32("llama.context_length", static_cast<uint32_t>(n_ctx));
  w.set_u32("llama.embedding_length", static_cast<uint32_t>(n_embd));
  w.set_u32("llama.block_count", static_cast<uint32_t>(n_layer));
  w.set_u32("llama.feed_forward_length", static_cast<uint32_t>(n_ff));
  w.set_u32("llama.attention.head_count", static_cast<uint32_t>(n_head));
  w.set_u32("llama.attention.head_count_kv", static_cast<uint32_t>(n_head_kv));
  w.set_f32("llama.attention.layer_norm_rms_epsilon", 1e-5f);
  w.set_f32("llama.rope.freq_base", 10000.0f);
  std::vector<std::string> tokens;
  std::vector<float> scores;
  std::vector<int32_t> types;
  for (int64_t t = 0; t < n_vocab; ++t) {
    tokens.push_back(t == 0 ? "<unk>" : t == 1 ? "<s>" : t == 2 ? "</s>" : std::string(1, static_cast<char>('a' + t % 26)) + std::to_string(t));
    scores.push_back(-static_cast<float>(t));
    types.push_back(t < 3 ? 3 : 1);  // control tokens, then normal ones
  }
  w.set_string("tokenizer.ggml.model", "llama");
  w.set_string_array("tokenizer.ggml.tokens", tokens);
  w.set_float_array("tokenizer.ggml.scores", scores);
  w.set_i32_array("tokenizer.ggml.token_type", types);
  w.set_u32("tokenizer.ggml.bos_token_id", 1);
  w.set_u32("tokenizer.ggml.eos_token_id", 2);
  if (edit_kv) edit_kv(w);

  const int64_t head_dim = n_embd / n_head, kv_dim = n_head_kv * head_dim;
  auto add = [&](const std::string& name, std::vector<int64_t> dims, bool norm) {
    const auto override_type = tensor_types.find(name);
    const quant::Type type = override_type != tensor_types.end() ? override_type->second
                             : norm                             ? quant::Type::F32
                                                                : matrix_type;
    const float scale = norm ? 0.0f : 0.5f;
    w.add_tensor(name, dims, type, [=, this](uint8_t* dst) {
      const int64_t cols = dims[0], rows = dims.size() > 1 ? dims[1] : 1;
      std::mt19937 rng(static_cast<uint32_t>(std::hash<std::string>{}(name)));
      std::normal_distribution<float> normal(0.0f, 1.0f);
      std::vector<float> row(static_cast<size_t>(cols));
      const int64_t row_bytes = quant::row_bytes(type, cols);
      for (int64_t r = 0; r < rows; ++r) {
        for (int64_t c = 0; c < cols; ++c) {
          row[static_cast<size_t>(c)] = (norm ? 1.0f : 0.0f) + scale * normal(rng) / static_cast<float>(cols);
          if (name == poison_tensor && r * cols + c == poison_at) row[static_cast<size_t>(c)] = poison;
        }
        quant::quantize_row(type, row.data(), dst + r * row_bytes, cols);
      }
    });
  };
  add("token_embd.weight", {n_embd, n_vocab}, false);
  add("output_norm.weight", {n_embd}, true);
  if (!tie_output) add("output.weight", {n_embd, n_vocab}, false);
  for (int64_t l = 0; l < n_layer; ++l) {
    const std::string p = "blk." + std::to_string(l) + ".";
    add(p + "attn_norm.weight", {n_embd}, true);
    add(p + "attn_q.weight", {n_embd, n_embd}, false);
    add(p + "attn_k.weight", {n_embd, kv_dim}, false);
    add(p + "attn_v.weight", {n_embd, kv_dim}, false);
    add(p + "attn_output.weight", {n_embd, n_embd}, false);
    add(p + "ffn_norm.weight", {n_embd}, true);
    add(p + "ffn_gate.weight", {n_embd, n_ff}, false);
    add(p + "ffn_up.weight", {n_embd, n_ff}, false);
    add(p + "ffn_down.weight", {n_ff, n_embd}, false);
  }
  w.write(out);
}

namespace {

// A GGUF of raw metadata bytes: `n_kv` pairs already encoded in `kvs`, no tensors.
std::filesystem::path raw_gguf(const std::filesystem::path& p, uint64_t n_kv, const std::vector<uint8_t>& kvs) {
  Bytes h;
  h.put<uint32_t>(0x46554747).put<uint32_t>(3).put<uint64_t>(0).put<uint64_t>(n_kv);
  std::ofstream f(p, std::ios::binary);
  f.write(reinterpret_cast<const char*>(h.b.data()), static_cast<std::streamsize>(h.b.size()));
  f.write(reinterpret_cast<const char*>(kvs.data()), static_cast<std::streamsize>(kvs.size()));
  return p;
}

}  // namespace

std::vector<std::pair<std::string, std::filesystem::path>> write_memory_bombs(const std::filesystem::path& dir) {
  std::vector<std::pair<std::string, std::filesystem::path>> files;
  TinyLlama bomb;
  bomb.edit_kv = [](gguf::Writer& w) { w.set_u64("llama.block_count", uint64_t{1} << 40); };
  bomb.write(dir / "block_bomb.gguf");
  files.emplace_back("block_count 2^40", dir / "block_bomb.gguf");
  {  // ~180 bytes of memory per 15 bytes of file
    Bytes kv;
    const uint64_t n = 175'000;
    for (uint64_t k = 0; k < n; ++k) kv.str("k" + std::to_string(k)).put<uint32_t>(kU8).put<uint8_t>(1);
    files.emplace_back("175k key-value pairs", raw_gguf(dir / "kv_bomb.gguf", n, kv.b));
  }
  {  // 32 bytes of memory per 8 of file
    Bytes kv;
    const uint64_t n = 1'040'000;
    kv.str("tokenizer.ggml.tokens").put<uint32_t>(kArray).put<uint32_t>(kString).put<uint64_t>(n);
    kv.b.resize(kv.b.size() + n * 8, 0);
    files.emplace_back("1.04M empty strings", raw_gguf(dir / "string_bomb.gguf", 1, kv.b));
  }
  {  // a Value (136 bytes) per 12 bytes of file
    Bytes kv;
    const uint64_t n = 230'000;
    kv.str("nested").put<uint32_t>(kArray).put<uint32_t>(kArray).put<uint64_t>(n);
    for (uint64_t k = 0; k < n; ++k) kv.put<uint32_t>(kU8).put<uint64_t>(0);
    files.emplace_back("230k nested arrays", raw_gguf(dir / "nested_bomb.gguf", 1, kv.b));
  }
  {  // the tensor table and, since it is a valid llama, the model's bound weights too
    TinyLlama layers;
    layers.n_embd = 2, layers.n_head = 1, layers.n_head_kv = 1, layers.n_ff = 1, layers.n_vocab = 1;
    layers.n_layer = 7'200;  // 64,803 tensors: just under gguf::kMaxTensors
    layers.write(dir / "layer_bomb.gguf");
    files.emplace_back("7200-layer llama (64.8k tensors)", dir / "layer_bomb.gguf");
    // Both at once: the tensor table and bound weights, plus strings up to the budget.
    layers.edit_kv = [](gguf::Writer& w) { w.set_string_array("pfx.filler", std::vector<std::string>(560'000)); };
    layers.write(dir / "combined_bomb.gguf");
    files.emplace_back("7200-layer llama + 560k empty strings", dir / "combined_bomb.gguf");
  }
  return files;
}

}  // namespace pfx::test

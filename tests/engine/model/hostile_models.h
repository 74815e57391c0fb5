// Hostile model files for tests, generated (never committed):
//  - TinyLlama: a tiny llama GGUF written from scratch; every shape, metadata value and weight
//    can be set or broken. Defaults give a valid model the CPU reference runs in microseconds
//    (n_embd 32, 2 layers, 2 heads, 1 KV head, n_ff 64, 32 tokens).
//  - write_memory_bombs: the crafted worst cases for the memory of opening a file.
// Also the generated part of the fuzzer's seed corpus (fuzz/make_seeds.cpp).
//
//   TinyLlama m;
//   m.edit_kv = [](pfx::gguf::Writer& w) { w.set_u64("llama.block_count", uint64_t{1} << 40); };
//   m.write(dir / "bomb.gguf");
#pragma once
#include <cstdint>
#include <filesystem>
#include <functional>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "gguf/writer.h"
#include "quant/types.h"

namespace pfx::test {

struct TinyLlama {
  int64_t n_embd = 32, n_layer = 2, n_head = 2, n_head_kv = 1, n_ff = 64, n_vocab = 32, n_ctx = 64;
  quant::Type matrix_type = quant::Type::F32;  // every 2-D weight; norms are f32
  std::map<std::string, quant::Type> tensor_types;  // per-tensor overrides ("blk.0.ffn_down.weight")
  bool tie_output = false;
  // Applied after the default metadata: change or add keys (block_count = 2^40, eps = inf, ...).
  std::function<void(gguf::Writer&)> edit_kv;
  // This tensor's element `poison_at` (before quantization) becomes `poison`, e.g. NaN.
  std::string poison_tensor;
  int64_t poison_at = 0;
  float poison = 0.0f;

  void write(const std::filesystem::path& out) const;
};

// Files that each maximise one kind of memory the reader and binding allocate per file byte,
// sized to just under the reader's metadata budget (gguf::kMaxMetadataBytes): 175k one-byte
// key-value pairs, 1.04M empty strings, 230k empty nested arrays, a 7200-layer llama of minimal
// layers (64.8k tensors, just under gguf::kMaxTensors, all bound), that llama with strings
// filling the rest of the budget, and the block_count = 2^40 on a tiny llama.
// Returns (description, path) pairs; files go into `dir`.
std::vector<std::pair<std::string, std::filesystem::path>> write_memory_bombs(const std::filesystem::path& dir);

}  // namespace pfx::test

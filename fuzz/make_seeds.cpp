// Writes the generated part of the fuzzer's seed corpus: small valid llama GGUFs (~2 to 40 KB) in
// each stored format the reference reads, tied and untied, with GQA, so mutations start from
// files that reach the model binding and the forward pass. They are the tests' TinyLlama
// (tests/engine/model/hostile_models.h). scripts/fuzz.sh adds the first 16 KiB of each fixture
// (real metadata and vocabularies). Usage: fuzz_make_seeds DIR
#include <filesystem>
#include <iostream>
#include <string>

#include "engine/model/hostile_models.h"
#include "util/error.h"

namespace {

using pfx::quant::Type;
using pfx::test::TinyLlama;

TinyLlama tiny(int64_t n_embd, int64_t n_layer, int64_t n_head, int64_t n_head_kv, int64_t n_ff, Type type, bool tied) {
  TinyLlama m;
  m.n_embd = n_embd, m.n_layer = n_layer, m.n_head = n_head, m.n_head_kv = n_head_kv, m.n_ff = n_ff;
  m.n_vocab = 16, m.n_ctx = 16, m.matrix_type = type, m.tie_output = tied;
  return m;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::cerr << "usage: fuzz_make_seeds DIR\n";
    return 4;
  }
  const std::filesystem::path dir = argv[1];
  try {
    std::vector<std::pair<std::string, TinyLlama>> seeds = {
        {"f32-tied", tiny(16, 1, 2, 1, 32, Type::F32, true)},
        {"f32-gqa", tiny(16, 2, 4, 2, 16, Type::F32, false)},
        {"f16", tiny(16, 1, 1, 1, 16, Type::F16, true)},
        {"bf16", tiny(16, 1, 2, 2, 16, Type::BF16, true)},
        {"q8_0", tiny(32, 1, 2, 1, 32, Type::Q8_0, true)},
    };
    // k-quants need rows of 256: ffn_down's rows are n_ff long.
    TinyLlama k = tiny(32, 2, 2, 1, 256, Type::Q8_0, true);
    k.tensor_types = {{"blk.0.ffn_down.weight", Type::Q4_K}, {"blk.1.ffn_down.weight", Type::Q6_K}};
    seeds.emplace_back("q4k-q6k", k);
    for (const auto& [name, model] : seeds) {
      const auto out = dir / ("tiny-" + name + ".gguf");
      model.write(out);
      std::cout << out.string() << " (" << std::filesystem::file_size(out) << " bytes)\n";
    }
  } catch (const pfx::Error& e) {
    std::cerr << "fuzz_make_seeds: " << e.what() << "\n";
    return 5;
  }
  return 0;
}

// write_synthetic_model: metadata, then each planned tensor generated row by row in parallel,
// quantized and streamed to disk one tensor at a time (see synth.h).
#include <chrono>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "gguf/writer.h"
#include "quant/quantize.h"
#include "synth/random.h"
#include "synth/synth.h"
#include "synth/vocab.h"
#include "util/error.h"
#include "util/parallel.h"

namespace pfx::synth {
namespace {

constexpr uint32_t kQuantizationVersion = 2;  // ggml's GGML_QNT_VERSION (general.quantization_version)

void set_model_metadata(gguf::Writer& w, const SynthProfile& p, uint64_t seed, const VocabMetadata& vocab) {
  const std::string a = p.arch + ".";
  w.set_string("general.architecture", p.arch);
  w.set_string("general.name", p.name);
  if (!p.description.empty()) w.set_string("general.description", p.description);
  w.set_u32("general.file_type", p.file_type);
  w.set_u32("general.quantization_version", kQuantizationVersion);
  w.set_u32(a + "vocab_size", static_cast<uint32_t>(p.vocab.size));
  w.set_u32(a + "context_length", static_cast<uint32_t>(p.n_ctx));
  w.set_u32(a + "embedding_length", static_cast<uint32_t>(p.n_embd));
  w.set_u32(a + "block_count", static_cast<uint32_t>(p.n_layer));
  w.set_u32(a + "feed_forward_length", static_cast<uint32_t>(p.n_ff));
  w.set_u32(a + "rope.dimension_count", static_cast<uint32_t>(p.n_embd / p.n_head));
  w.set_u32(a + "attention.head_count", static_cast<uint32_t>(p.n_head));
  w.set_u32(a + "attention.head_count_kv", static_cast<uint32_t>(p.n_head_kv));
  w.set_f32(a + "attention.layer_norm_rms_epsilon", static_cast<float>(p.rms_eps));
  w.set_f32(a + "rope.freq_base", static_cast<float>(p.rope_freq_base));
  for (const auto& [key, value] : vocab.kv) w.set(key, value);
  // Provenance: what made this file, so a report can say which weights it measured.
  w.set_string("pfx.synth.profile", p.source.filename().string());
  w.set_u64("pfx.synth.seed", seed);
  w.set_string("pfx.synth.vocab_source", vocab.source);
  if (!p.overrides.empty()) w.set_string_array("pfx.synth.overrides", p.overrides);
}

std::string dims_string(const std::vector<int64_t>& d) {
  std::string s = "[";
  for (size_t i = 0; i < d.size(); ++i) s += (i ? ", " : "") + std::to_string(d[i]);
  return s + "]";
}

}  // namespace

SynthResult write_synthetic_model(const SynthProfile& profile, const std::filesystem::path& out, uint64_t seed,
                                  std::function<void(std::string_view)> progress, int threads) {
  validate_profile(profile);
  const VocabMetadata vocab = make_vocab(profile);
  const std::vector<PlannedTensor> plan = plan_tensors(profile);

  gguf::Writer w;
  set_model_metadata(w, profile, seed, vocab);
  const size_t total = plan.size();
  for (size_t i = 0; i < total; ++i) {
    const PlannedTensor& t = plan[i];
    w.add_tensor(t.name, t.dims, t.type, [&t, i, total, seed, threads, &progress](uint8_t* dst) {
      const int64_t cols = t.dims[0];
      const int64_t rows = t.dims.size() > 1 ? t.dims[1] : 1;
      const int64_t row_bytes = quant::row_bytes(t.type, cols);
      const auto start = std::chrono::steady_clock::now();
      const uint64_t tensor_key = name_hash(t.name);
      if (!t.values.empty()) {  // fixed values (rope_freqs.weight): f32, one row
        std::memcpy(dst, t.values.data(), t.values.size() * sizeof(float));
        if (progress) progress("[" + std::to_string(i + 1) + "/" + std::to_string(total) + "] " + t.name + " (fixed values)");
        return;
      }
      parallel_for(
          rows,
          [&](int64_t begin, int64_t end) {
            std::vector<float> row(static_cast<size_t>(cols));
            for (int64_t r = begin; r < end; ++r) {
              RowRng rng(seed, tensor_key, static_cast<uint64_t>(r));
              rng.fill_normal(row.data(), cols, t.mean, t.std);
              quant::quantize_row(t.type, row.data(), dst + r * row_bytes, cols);
            }
          },
          threads);
      if (progress) {
        const double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
        char line[256];
        std::snprintf(line, sizeof line, "[%4zu/%zu] %-28s %-5s %-16s %9.1f MiB %8.1f ms", i + 1, total, t.name.c_str(),
                      std::string(quant::type_name(t.type)).c_str(), dims_string(t.dims).c_str(),
                      static_cast<double>(rows * row_bytes) / (1024.0 * 1024.0), ms);
        progress(line);
      }
    });
  }
  w.write(out);

  SynthResult r;
  r.n_tensors = static_cast<int64_t>(total);
  r.file_bytes = static_cast<int64_t>(std::filesystem::file_size(out));
  r.vocab_source = vocab.source;
  return r;
}

}  // namespace pfx::synth

// Vocabulary metadata for synthetic models (see vocab.h).
#include "synth/vocab.h"

#include <cstdio>
#include <filesystem>

#include "util/error.h"

namespace pfx::synth {
namespace {

// llama.cpp's token types (llama_token_type).
constexpr int32_t kNormal = 1, kUnknown = 2, kControl = 3, kUnused = 5, kByte = 6;

VocabMetadata synthetic_vocab(int64_t size, std::string source) {
  std::vector<std::string> tokens = {"<unk>", "<s>", "</s>"};
  std::vector<float> scores = {0, 0, 0};
  std::vector<int32_t> types = {kUnknown, kControl, kControl};
  for (int b = 0; b < 256; ++b) {
    char piece[8];
    std::snprintf(piece, sizeof piece, "<0x%02X>", b);
    tokens.emplace_back(piece);
    scores.push_back(0);
    types.push_back(kByte);
  }
  // Letters by English frequency, then digits and punctuation; pieces of growing length, each
  // with and without the word-start marker "▁" (U+2581).
  const std::string alphabet = "etaoinshrdlcumwfgypbvkjxqz0123456789.,!?'-";
  const std::string space = "\xE2\x96\x81";
  std::vector<std::string> level = {""};
  auto push = [&](const std::string& piece) {
    if (static_cast<int64_t>(tokens.size()) >= size) return;
    tokens.push_back(piece);
    scores.push_back(-static_cast<float>(tokens.size() - 259));
    types.push_back(kNormal);
  };
  push(space);
  while (static_cast<int64_t>(tokens.size()) < size) {
    std::vector<std::string> next;
    for (const std::string& prefix : level)
      for (char c : alphabet) {
        const std::string s = prefix + c;
        next.push_back(s);
        push(space + s);
        push(s);
      }
    level.swap(next);
  }
  VocabMetadata v;
  v.source = std::move(source);
  v.kv.emplace_back("tokenizer.ggml.model", gguf::Value::of_string("llama"));
  v.kv.emplace_back("tokenizer.ggml.tokens", gguf::Value::of_string_array(std::move(tokens)));
  v.kv.emplace_back("tokenizer.ggml.scores", gguf::Value::of_f32_array(scores));
  v.kv.emplace_back("tokenizer.ggml.token_type", gguf::Value::of_i32_array(types));
  v.kv.emplace_back("tokenizer.ggml.unknown_token_id", gguf::Value::of_u32(0));
  v.kv.emplace_back("tokenizer.ggml.bos_token_id", gguf::Value::of_u32(1));
  v.kv.emplace_back("tokenizer.ggml.eos_token_id", gguf::Value::of_u32(2));
  v.kv.emplace_back("tokenizer.ggml.add_bos_token", gguf::Value::of_bool(true));
  v.kv.emplace_back("tokenizer.ggml.add_eos_token", gguf::Value::of_bool(false));
  return v;
}

}  // namespace

VocabMetadata make_vocab(const SynthProfile& p) {
  const std::string size = std::to_string(p.vocab.size);
  if (p.vocab.copy_from.empty()) return synthetic_vocab(p.vocab.size, "synthetic (" + size + " tokens)");
  if (!std::filesystem::exists(p.vocab.copy_from)) {
    if (p.vocab.synthetic_if_missing)
      return synthetic_vocab(p.vocab.size, "synthetic (" + size + " tokens; " + p.vocab.copy_from.string() +
                                               " not found)");
    fail(p.source.string(), ": field 'vocab.path': ", p.vocab.copy_from.string(),
         " does not exist (set vocab.if_missing: synthetic to fall back to a synthetic vocabulary)");
  }
  const gguf::File src = gguf::File::open(p.vocab.copy_from);
  const std::string model = src.get_string_or("tokenizer.ggml.model", "");
  if (model != "llama" && model != "gpt2")
    fail(p.source.string(), ": field 'vocab.path': ", src.path().string(), " has tokenizer.ggml.model '", model,
         "'; expected 'llama' (SentencePiece) or 'gpt2' (byte-level BPE)");
  const gguf::Value* tokens = src.find("tokenizer.ggml.tokens");
  const int64_t have = tokens ? static_cast<int64_t>(tokens->array_size()) : 0;
  if (have != p.vocab.size && !(p.vocab.pad_to_size && have > 0 && have < p.vocab.size))
    fail(p.source.string(), ": field 'vocab.size': ", p.vocab.size, " differs from the ", have, " tokens of ",
         src.path().string(), p.vocab.pad_to_size ? " (pad_to_size only adds tokens)" : "");
  VocabMetadata v;
  v.source = "copied from " + src.path().filename().string() + " (" + std::to_string(have) + " tokens" +
             (have < p.vocab.size ? ", padded to " + size : "") + ")";
  for (const auto& [key, value] : src.kv()) {
    if (key.rfind("tokenizer.", 0) != 0) continue;
    if (have < p.vocab.size && key == "tokenizer.ggml.tokens") {
      std::vector<std::string> padded = value.strings;
      for (int64_t id = have; id < p.vocab.size; ++id) padded.push_back("[PAD" + std::to_string(id) + "]");
      v.kv.emplace_back(key, gguf::Value::of_string_array(std::move(padded)));
    } else if (have < p.vocab.size && key == "tokenizer.ggml.token_type") {
      std::vector<int32_t> types;
      for (int64_t t : src.get_int_array(key)) types.push_back(static_cast<int32_t>(t));
      types.resize(static_cast<size_t>(p.vocab.size), kUnused);
      v.kv.emplace_back(key, gguf::Value::of_i32_array(types));
    } else if (have < p.vocab.size && key == "tokenizer.ggml.scores") {
      std::vector<float> scores = src.get_float_array(key);
      scores.resize(static_cast<size_t>(p.vocab.size), 0.0f);
      v.kv.emplace_back(key, gguf::Value::of_f32_array(scores));
    } else {
      v.kv.emplace_back(key, value);
    }
  }
  return v;
}

}  // namespace pfx::synth

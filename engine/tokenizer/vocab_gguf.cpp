// vocab_from_gguf: reads tokenizer.ggml.* keys the way llama.cpp's llama_vocab::impl::load does
// for SentencePiece ("llama") and byte-level BPE ("gpt2") vocabularies (see vocab.h for the rules).
#include <array>
#include <initializer_list>

#include "gguf/gguf.h"
#include "tokenizer/pretokenizer.h"
#include "tokenizer/vocab.h"
#include "util/error.h"

namespace pfx::tok {
namespace {

constexpr std::string_view kModelKey = "tokenizer.ggml.model";
constexpr std::string_view kTokensKey = "tokenizer.ggml.tokens";
constexpr std::string_view kScoresKey = "tokenizer.ggml.scores";
constexpr std::string_view kTypesKey = "tokenizer.ggml.token_type";
constexpr std::string_view kBosKey = "tokenizer.ggml.bos_token_id";
constexpr std::string_view kEosKey = "tokenizer.ggml.eos_token_id";
constexpr std::string_view kUnkKey = "tokenizer.ggml.unknown_token_id";
constexpr std::string_view kPadKey = "tokenizer.ggml.padding_token_id";
constexpr std::string_view kAddBosKey = "tokenizer.ggml.add_bos_token";
constexpr std::string_view kAddEosKey = "tokenizer.ggml.add_eos_token";
constexpr std::string_view kAddSpacePrefixKey = "tokenizer.ggml.add_space_prefix";
constexpr std::string_view kEotKey = "tokenizer.ggml.eot_token_id";
constexpr std::string_view kMergesKey = "tokenizer.ggml.merges";
constexpr std::string_view kPreKey = "tokenizer.ggml.pre";

// Texts that mark the end-of-turn token when no eot_token_id key names it, most specific first.
constexpr std::array<std::string_view, 5> kEotTexts = {"<|eot_id|>", "<|im_end|>", "<|end|>", "<end_of_turn>",
                                                      "<|endoftext|>"};

// A GGUF array value of the key, or nullptr when absent; throws when present with the wrong
// element type. `what` lists the accepted element types for the message.
const gguf::Value* find_array(const gguf::File& f, std::string_view key,
                              std::initializer_list<gguf::ValueType> accepted,
                              std::string_view what) {
  const gguf::Value* v = f.find(key);
  if (!v) return nullptr;
  bool ok = v->is_array();
  if (ok) {
    ok = false;
    for (auto t : accepted) ok = ok || v->array_type == t;
  }
  if (!ok) fail(f.path().string(), ": key ", key, ": expected ", what, ", found ", v->type_string());
  return v;
}

// llama.cpp: a present id outside the vocab is ignored with a warning (0xFFFFFFFF is the
// converters' way to say "none"); the default stays.
int32_t special_id(const gguf::File& f, std::string_view key, int32_t dflt, size_t n) {
  if (dflt >= 0 && static_cast<size_t>(dflt) >= n) dflt = -1;
  if (!f.has(key)) return dflt;
  const uint64_t id = f.get_uint(key);
  return id < n ? static_cast<int32_t>(id) : dflt;
}

}  // namespace

Vocab vocab_from_gguf(const gguf::File& f) {
  const std::string file = f.path().string();
  using gguf::ValueType;

  const std::string model = f.get_string(kModelKey);
  Vocab v;
  if (model == "llama") {
    v.kind = VocabKind::Spm;
  } else if (model == "gpt2") {
    v.kind = VocabKind::Bpe;
  } else {
    fail(file, ": key ", kModelKey, ": tokenizer model '", model,
         "' is not supported; expected 'llama' (SentencePiece) or 'gpt2' (byte-level BPE)");
  }
  const bool bpe = v.kind == VocabKind::Bpe;
  bool add_bos_default = true;
  if (bpe) {
    if (!f.has(kPreKey))
      fail(file, ": key ", kPreKey, " is missing; a gpt2 (BPE) vocab needs its pre-tokenizer named (llama.cpp "
           "would fall back to 'default' and warn of degraded output; we refuse)");
    v.pre = f.get_string(kPreKey);
    add_bos_default = bpe_flavor(v.pre, file).add_bos_default;  // refuses an unknown name
    const gguf::Value* merges = find_array(f, kMergesKey, {ValueType::STRING}, "array[string]");
    if (!merges) fail(file, ": key ", kMergesKey, " is missing; a gpt2 (BPE) vocab needs its merges");
    v.merges = merges->strings;
  }

  const gguf::Value* tokens = find_array(f, kTokensKey, {ValueType::STRING}, "array[string]");
  if (!tokens) fail(file, ": key ", kTokensKey, " is missing; expected the vocab's pieces");
  v.pieces = tokens->strings;
  const size_t n = v.pieces.size();
  if (n == 0) fail(file, ": key ", kTokensKey, ": empty array; expected at least one piece");

  // llama.cpp accepts float32 or int32 scores and at least one per token.
  if (find_array(f, kScoresKey, {ValueType::FLOAT32, ValueType::INT32},
                 "array[float32] or array[int32]")) {
    v.scores = f.get_float_array(kScoresKey);
    if (v.scores.size() < n) {
      fail(file, ": key ", kScoresKey, ": ", v.scores.size(), " scores for ", n,
           " tokens; expected one per token");
    }
    v.scores.resize(n);
  }
  if (find_array(f, kTypesKey, {ValueType::INT32}, "array[int32]")) {
    const std::vector<int64_t> types = f.get_int_array(kTypesKey);
    if (types.size() < n) {
      fail(file, ": key ", kTypesKey, ": ", types.size(), " types for ", n,
           " tokens; expected one per token");
    }
    v.types.resize(n);
    for (size_t i = 0; i < n; ++i) {
      const int64_t t = types[i];
      v.types[i] = (t >= kUndefined && t <= kByte) ? static_cast<int32_t>(t) : kUndefined;
    }
  }

  v.bos = special_id(f, kBosKey, bpe ? 11 : 1, n);
  v.eos = special_id(f, kEosKey, bpe ? 11 : 2, n);
  v.unk = special_id(f, kUnkKey, bpe ? -1 : 0, n);
  v.pad = special_id(f, kPadKey, -1, n);
  v.eot = special_id(f, kEotKey, -1, n);
  for (size_t k = 0; v.eot < 0 && k < kEotTexts.size(); ++k) {
    for (size_t i = 0; i < n; ++i) {
      if (v.pieces[i] != kEotTexts[k]) continue;
      v.eot = static_cast<int32_t>(i);
      if (v.types.empty()) v.types.assign(n, kNormal);
      v.types[i] = kControl;  // llama.cpp: a control-looking token is control, whatever its type says
      break;
    }
  }
  v.add_bos = f.get_bool_or(kAddBosKey, add_bos_default);
  v.add_eos = f.get_bool_or(kAddEosKey, false);
  v.add_space_prefix = f.get_bool_or(kAddSpacePrefixKey, !bpe);
  if (v.add_bos && v.bos < 0) {
    fail(file, ": key ", kAddBosKey, " is true but ", kBosKey, " names no token");
  }
  if (v.add_eos && v.eos < 0) {
    fail(file, ": key ", kAddEosKey, " is true but ", kEosKey, " names no token");
  }

  normalize_and_validate(v, file + " (" + std::string(kTokensKey) + ")");
  return v;
}

}  // namespace pfx::tok

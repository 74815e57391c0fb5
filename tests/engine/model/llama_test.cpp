// Model::load on the real fixtures (config values, tensor binding, tied output) and on GGUF files
// rewritten with one defect each: every defect is a pfx::Error naming the file and what is wrong.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <filesystem>
#include <functional>
#include <set>
#include <string>
#include <unistd.h>

#include "gguf/gguf.h"
#include "gguf/writer.h"
#include "model/llama.h"
#include "util/error.h"
#include "util/fixtures.h"

namespace {

namespace fs = std::filesystem;
using pfx::model::Model;

fs::path fixture(const char* name) { return pfx::fixtures_dir() / "models" / name; }

TEST(LlamaModel, Stories260KConfig) {
  const Model m = Model::load(fixture("stories260K.gguf"));
  const pfx::model::LlamaConfig& c = m.config();
  EXPECT_EQ(c.arch, "llama");
  EXPECT_EQ(c.n_vocab, 512);
  EXPECT_EQ(c.n_embd, 64);
  EXPECT_EQ(c.n_layer, 5);
  EXPECT_EQ(c.n_head, 8);
  EXPECT_EQ(c.n_head_kv, 4);
  EXPECT_EQ(c.head_dim, 8);
  EXPECT_EQ(c.n_rot, 8);
  EXPECT_EQ(c.n_ff, 172);
  EXPECT_EQ(c.n_ctx_train, 2048);
  EXPECT_FLOAT_EQ(c.rms_eps, 1e-5f);
  EXPECT_FLOAT_EQ(c.rope_freq_base, 10000.0f);  // absent from the file: the default
  const pfx::model::LlamaWeights& w = m.weights();
  EXPECT_FALSE(w.output_tied);
  ASSERT_EQ(w.layers.size(), 5u);
  EXPECT_EQ(w.layers[4].wk.rows, 32);
  EXPECT_EQ(w.layers[4].wk.cols, 64);
  EXPECT_EQ(w.layers[0].w_down.rows, 64);
  EXPECT_EQ(w.layers[0].w_down.cols, 172);
  EXPECT_EQ(w.layers[2].attn_norm.rows, 1);
  EXPECT_EQ(w.output.name, "output.weight");
  EXPECT_EQ(w.output.data, m.file().tensor_data(*m.file().find_tensor("output.weight")));
}

TEST(LlamaModel, QuantizedTypesAreBound) {
  const Model m = Model::load(fixture("kq256-q4km.gguf"));
  EXPECT_EQ(m.config().n_embd, 256);
  EXPECT_EQ(m.weights().output.type, pfx::quant::Type::Q6_K);
  EXPECT_EQ(m.weights().token_embd.type, pfx::quant::Type::Q4_K);
  EXPECT_EQ(m.weights().layers[3].wv.type, pfx::quant::Type::Q6_K);  // llama.cpp's use_more_bits layer
  EXPECT_EQ(m.weights().layers[0].wv.type, pfx::quant::Type::Q4_K);
  EXPECT_EQ(m.weights().layers[0].wq.row_bytes(), 144);  // one q4_K super-block per 256 elements
}

// Rewrites `src` into a temporary file, letting `edit` change metadata and decide per tensor
// whether to keep it and with which dims; tensor bytes are copied (truncated/padded as needed).
class Rewrite {
 public:
  std::function<void(pfx::gguf::Writer&)> edit_kv = [](pfx::gguf::Writer&) {};
  std::function<bool(const std::string&)> keep = [](const std::string&) { return true; };
  std::function<std::vector<int64_t>(const pfx::gguf::TensorInfo&)> dims = [](const pfx::gguf::TensorInfo& t) {
    return t.dims;
  };
  // The type each tensor is written with (bytes copied, truncated or zero-padded).
  std::function<pfx::quant::Type(const pfx::gguf::TensorInfo&)> type = [](const pfx::gguf::TensorInfo& t) {
    return t.type;
  };
  // Tensors to add (f32, values given).
  struct Extra {
    std::string name;
    std::vector<int64_t> dims;
    std::vector<float> values;
  };
  std::vector<Extra> extra;

  fs::path write(const fs::path& src, const std::string& tag) const {
    const pfx::gguf::File in = pfx::gguf::File::open(src);
    pfx::gguf::Writer w;
    for (const auto& [key, value] : in.kv())
      if (key != "general.alignment") w.set(key, value);
    edit_kv(w);
    for (const pfx::gguf::TensorInfo& t : in.tensors()) {
      if (!keep(t.name)) continue;
      const std::vector<int64_t> d = dims(t);
      const uint8_t* data = in.tensor_data(t);
      const int64_t n = t.n_bytes;
      w.add_tensor(t.name, d, type(t), [data, n, d, type = type(t)](uint8_t* dst) {
        int64_t rows = 1;
        for (size_t i = 1; i < d.size(); ++i) rows *= d[i];
        const int64_t bytes = rows * pfx::quant::row_bytes(type, d[0]);
        std::memcpy(dst, data, static_cast<size_t>(std::min(bytes, n)));
        if (bytes > n) std::memset(dst + n, 0, static_cast<size_t>(bytes - n));
      });
    }
    for (const Extra& e : extra) {
      const std::vector<float>* v = &e.values;
      w.add_tensor(e.name, e.dims, pfx::quant::Type::F32,
                   [v](uint8_t* dst) { std::memcpy(dst, v->data(), v->size() * sizeof(float)); });
    }
    const fs::path out = fs::temp_directory_path() / ("pfx_model_test_" + std::to_string(::getpid()) + "_" + tag + ".gguf");
    w.write(out);
    return out;
  }
};

std::string load_error(const fs::path& p) {
  try {
    Model::load(p);
  } catch (const pfx::Error& e) {
    fs::remove(p);
    return e.what();
  }
  fs::remove(p);
  return "(no error)";
}

TEST(LlamaModel, MissingOutputMeansTiedToTokenEmbd) {
  Rewrite r;
  r.keep = [](const std::string& name) { return name != "output.weight"; };
  const fs::path p = r.write(fixture("stories260K.gguf"), "tied");
  {
    const Model m = Model::load(p);
    EXPECT_TRUE(m.weights().output_tied);
    EXPECT_EQ(m.weights().output.data, m.weights().token_embd.data);
    EXPECT_EQ(m.weights().output.rows, 512);
  }
  fs::remove(p);
}

TEST(LlamaModel, MissingTensorNamesFileTensorAndExpectedDims) {
  Rewrite r;
  r.keep = [](const std::string& name) { return name != "blk.3.ffn_up.weight"; };
  const fs::path p = r.write(fixture("stories260K.gguf"), "missing");
  const std::string e = load_error(p);
  EXPECT_NE(e.find(p.string()), std::string::npos) << e;
  EXPECT_NE(e.find("missing tensor 'blk.3.ffn_up.weight'"), std::string::npos) << e;
  EXPECT_NE(e.find("expected dims [64, 172]"), std::string::npos) << e;
}

TEST(LlamaModel, WrongShapeNamesExpectedAndFound) {
  Rewrite r;
  r.dims = [](const pfx::gguf::TensorInfo& t) {
    return t.name == "blk.1.attn_k.weight" ? std::vector<int64_t>{64, 64} : t.dims;
  };
  const fs::path p = r.write(fixture("stories260K.gguf"), "shape");
  const std::string e = load_error(p);
  EXPECT_NE(e.find("tensor 'blk.1.attn_k.weight'"), std::string::npos) << e;
  EXPECT_NE(e.find("expected dims [64, 32]"), std::string::npos) << e;
  EXPECT_NE(e.find("found [64, 64]"), std::string::npos) << e;
}

TEST(LlamaModel, OtherArchitecturesAreRejectedClearly) {
  Rewrite r;
  r.edit_kv = [](pfx::gguf::Writer& w) { w.set_string("general.architecture", "gemma2"); };
  const fs::path p = r.write(fixture("stories260K.gguf"), "arch");
  const std::string e = load_error(p);
  EXPECT_NE(e.find("general.architecture is 'gemma2'; supported: llama, qwen2"), std::string::npos) << e;
}

// The stories260K file relabelled as qwen2: every llama.* key renamed to qwen2.*.
Rewrite as_qwen2() {
  Rewrite r;
  r.edit_kv = [](pfx::gguf::Writer& w) {
    const pfx::gguf::File in = pfx::gguf::File::open(fixture("stories260K.gguf"));
    w.set_string("general.architecture", "qwen2");
    for (const auto& [key, value] : in.kv())
      if (key.rfind("llama.", 0) == 0) w.set("qwen2." + key.substr(6), value);
  };
  return r;
}

TEST(LlamaModel, Qwen2UsesNeoxRopeAndBindsQkvBiases) {
  Rewrite r = as_qwen2();
  for (int l = 0; l < 5; ++l) {
    const std::string p = "blk." + std::to_string(l) + ".";
    r.extra.push_back({p + "attn_q.bias", {64}, std::vector<float>(64, 0.25f)});
    r.extra.push_back({p + "attn_k.bias", {32}, std::vector<float>(32, -0.5f)});
    r.extra.push_back({p + "attn_v.bias", {32}, std::vector<float>(32, 1.0f)});
  }
  const fs::path p = r.write(fixture("stories260K.gguf"), "qwen2");
  {
    const Model m = Model::load(p);
    EXPECT_EQ(m.config().arch, "qwen2");
    EXPECT_EQ(m.config().rope_style, pfx::model::RopeStyle::Neox);
    ASSERT_TRUE(m.weights().layers[4].has_qkv_bias());
    EXPECT_EQ(m.weights().layers[4].bk.cols, 32);
    EXPECT_EQ(m.weights().layers[0].bq.name, "blk.0.attn_q.bias");
  }
  fs::remove(p);
}

TEST(LlamaModel, BiasesComeInThrees) {
  Rewrite r;
  r.extra.push_back({"blk.0.attn_q.bias", {64}, std::vector<float>(64, 0.0f)});
  const std::string e = load_error(r.write(fixture("stories260K.gguf"), "bias1"));
  EXPECT_NE(e.find("missing tensor 'blk.0.attn_k.bias'"), std::string::npos) << e;
}

TEST(LlamaModel, UnboundTensorsAreListedAndRefused) {
  Rewrite r;
  r.extra.push_back({"blk.0.attn_output.bias", {64}, std::vector<float>(64, 0.0f)});
  r.extra.push_back({"blk.1.attn_q_norm.weight", {8}, std::vector<float>(8, 1.0f)});
  const std::string e = load_error(r.write(fixture("stories260K.gguf"), "unbound"));
  EXPECT_NE(e.find("2 tensors the llama architecture does not use: 'blk.0.attn_output.bias', "
                   "'blk.1.attn_q_norm.weight'"), std::string::npos) << e;
  // qwen2 has no rope_freqs (llama.cpp's qwen2 graph passes none): refused there too.
  Rewrite q = as_qwen2();
  q.extra.push_back({"rope_freqs.weight", {4}, std::vector<float>(4, 1.0f)});
  const std::string eq = load_error(q.write(fixture("stories260K.gguf"), "q_freqs"));
  EXPECT_NE(eq.find("'rope_freqs.weight'"), std::string::npos) << eq;
}

TEST(LlamaModel, RopeFrequenciesFromBaseScaleAndFactors) {
  Rewrite r;
  r.extra.push_back({"rope_freqs.weight", {4}, {1.0f, 2.0f, 4.0f, 8.0f}});
  r.edit_kv = [](pfx::gguf::Writer& w) { w.set_f32("llama.rope.freq_base", 500000.0f); };
  const fs::path p = r.write(fixture("stories260K.gguf"), "freqs");
  {
    const Model m = Model::load(p);
    ASSERT_EQ(m.rope_inv_freq().size(), 4u);  // n_rot 8
    for (int i = 0; i < 4; ++i)
      EXPECT_DOUBLE_EQ(m.rope_inv_freq()[i], std::pow(500000.0, -2.0 * i / 8.0) / (1 << i)) << i;
  }
  fs::remove(p);
  Rewrite lin;
  lin.edit_kv = [](pfx::gguf::Writer& w) {
    w.set_string("llama.rope.scaling.type", "linear");
    w.set_f32("llama.rope.scaling.factor", 4.0f);
  };
  const fs::path pl = lin.write(fixture("stories260K.gguf"), "linear");
  {
    const Model m = Model::load(pl);
    EXPECT_FLOAT_EQ(m.config().rope_freq_scale, 0.25f);
    EXPECT_DOUBLE_EQ(m.rope_inv_freq()[1], std::pow(10000.0, -2.0 / 8.0) * 0.25);
  }
  fs::remove(pl);
  Rewrite bad;
  bad.extra.push_back({"rope_freqs.weight", {4}, {1.0f, 0.0f, 1.0f, 1.0f}});
  EXPECT_NE(load_error(bad.write(fixture("stories260K.gguf"), "badfreq")).find("rope_freqs.weight'[1] is 0"),
            std::string::npos);
}

TEST(LlamaModel, MathChangingMetadataIsRefusedByName) {
  auto error_with = [](const std::string& tag, std::function<void(pfx::gguf::Writer&)> edit) {
    Rewrite r;
    r.edit_kv = std::move(edit);
    return load_error(r.write(fixture("stories260K.gguf"), tag));
  };
  std::string e = error_with("yarn", [](pfx::gguf::Writer& w) {
    w.set_string("llama.rope.scaling.type", "yarn");
    w.set_f32("llama.rope.scaling.factor", 4.0f);
  });
  EXPECT_NE(e.find("llama.rope.scaling.type is 'yarn'"), std::string::npos) << e;
  e = error_with("softcap", [](pfx::gguf::Writer& w) { w.set_f32("llama.attn_logit_softcapping", 50.0f); });
  EXPECT_NE(e.find("metadata key 'llama.attn_logit_softcapping' is not understood"), std::string::npos) << e;
  e = error_with("experts", [](pfx::gguf::Writer& w) { w.set_u32("llama.expert_count", 8); });
  EXPECT_NE(e.find("'llama.expert_count' = 8"), std::string::npos) << e;
  e = error_with("scale", [](pfx::gguf::Writer& w) { w.set_f32("llama.attention.scale", 0.5f); });
  EXPECT_NE(e.find("'llama.attention.scale'"), std::string::npos) << e;
  e = error_with("vocab", [](pfx::gguf::Writer& w) { w.set_u32("llama.vocab_size", 100); });
  EXPECT_NE(e.find("'llama.vocab_size' is 100"), std::string::npos) << e;
  // Harmless: zero experts, YaRN parameters without YaRN (a warning), provenance keys.
  Rewrite ok;
  ok.edit_kv = [](pfx::gguf::Writer& w) {
    w.set_u32("llama.expert_count", 0);
    w.set_u32("llama.rope.scaling.original_context_length", 8192);
    w.set_bool("llama.rope.scaling.finetuned", true);
  };
  const fs::path p = ok.write(fixture("stories260K.gguf"), "harmless");
  EXPECT_NO_THROW(Model::load(p));
  fs::remove(p);
}

// IQ*, q2_K, q3_K: named with the tensor at load time, before any backend allocates anything.
TEST(LlamaModel, UndecodableTensorTypesAreRefusedByTensorAndType) {
  for (const auto type : {pfx::quant::Type::Q2_K, pfx::quant::Type::Q3_K, pfx::quant::Type::IQ4_XS}) {
    Rewrite r;
    r.type = [type](const pfx::gguf::TensorInfo& t) { return t.name == "blk.1.attn_q.weight" ? type : t.type; };
    const std::string tag = "type" + std::to_string(static_cast<int>(type));
    const std::string e = load_error(r.write(fixture("kq256-q4km.gguf"), tag));
    EXPECT_NE(e.find("tensor 'blk.1.attn_q.weight' has type " + std::string(pfx::quant::type_name(type)) +
                     ", which this engine cannot decode"),
              std::string::npos)
        << e;
  }
}

TEST(LlamaModel, SlidingWindowIsReadForTheBackendsToCheck) {
  Rewrite r;
  r.edit_kv = [](pfx::gguf::Writer& w) { w.set_u32("llama.attention.sliding_window", 4096); };
  const fs::path p = r.write(fixture("stories260K.gguf"), "swa");
  {
    const Model m = Model::load(p);
    EXPECT_EQ(m.config().sliding_window, 4096);
  }
  fs::remove(p);
}

TEST(LlamaModel, MissingOrBadHyperParametersNameTheKey) {
  Rewrite missing;
  missing.edit_kv = [](pfx::gguf::Writer& w) { w.set_string("llama.block_count", "five"); };
  std::string e = load_error(missing.write(fixture("stories260K.gguf"), "kv"));
  EXPECT_NE(e.find("llama.block_count"), std::string::npos) << e;

  Rewrite gqa;
  gqa.edit_kv = [](pfx::gguf::Writer& w) { w.set_u32("llama.attention.head_count_kv", 3); };
  e = load_error(gqa.write(fixture("stories260K.gguf"), "gqa"));
  EXPECT_NE(e.find("must be a multiple of llama.attention.head_count_kv (3)"), std::string::npos) << e;

  Rewrite zero;
  zero.edit_kv = [](pfx::gguf::Writer& w) { w.set_u32("llama.embedding_length", 0); };
  e = load_error(zero.write(fixture("stories260K.gguf"), "zero"));
  EXPECT_NE(e.find("llama.embedding_length"), std::string::npos) << e;
}

TEST(LlamaModel, FewerLayersThanBlockCountIsAnError) {
  Rewrite r;
  r.keep = [](const std::string& name) { return name.rfind("blk.4.", 0) != 0; };
  const std::string e = load_error(r.write(fixture("stories260K.gguf"), "layers"));
  EXPECT_NE(e.find("'llama.block_count' is 5 but the file has tensors for 4 of those layers: layer 4 has none"), std::string::npos) << e;
}

TEST(LlamaModel, VocabSizeMismatchIsAnError) {
  Rewrite r;
  r.edit_kv = [](pfx::gguf::Writer& w) { w.set_string_array("tokenizer.ggml.tokens", {"a", "b"}); };
  const std::string e = load_error(r.write(fixture("stories260K.gguf"), "vocab"));
  EXPECT_NE(e.find("tokenizer.ggml.tokens has 2 entries but token_embd.weight has 512 rows"), std::string::npos) << e;
}

}  // namespace

// Model::load on the real fixtures (config values, tensor binding, tied output) and on GGUF files
// rewritten with one defect each: every defect is a pfx::Error naming the file and what is wrong.
#include <gtest/gtest.h>

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
      w.add_tensor(t.name, d, t.type, [data, n, d, type = t.type](uint8_t* dst) {
        int64_t rows = 1;
        for (size_t i = 1; i < d.size(); ++i) rows *= d[i];
        const int64_t bytes = rows * pfx::quant::row_bytes(type, d[0]);
        std::memcpy(dst, data, static_cast<size_t>(std::min(bytes, n)));
        if (bytes > n) std::memset(dst + n, 0, static_cast<size_t>(bytes - n));
      });
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
  r.edit_kv = [](pfx::gguf::Writer& w) { w.set_string("general.architecture", "qwen2"); };
  const fs::path p = r.write(fixture("stories260K.gguf"), "arch");
  const std::string e = load_error(p);
  EXPECT_NE(e.find("general.architecture is 'qwen2'; only 'llama' is supported"), std::string::npos) << e;
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

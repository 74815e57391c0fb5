// Synthetic models end to end: the shipped profiles write GGUFs that our reader loads and the CPU
// reference runs deterministically, that llama.cpp's own Python reader (`gguf` from PyPI) reads
// with every tensor dequantizing to exactly our values, and whose type mix is llama.cpp's Q4_K_M.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <unistd.h>
#include <vector>

#include "cpu/cpu_backend.h"
#include "gguf/gguf.h"
#include "model/greedy.h"
#include "model/llama.h"
#include "quant/dequant.h"
#include "synth/synth.h"
#include "tokenizer/spm.h"
#include "tokenizer/tokenizer.h"
#include "tokenizer/vocab.h"
#include "util/fixtures.h"
#include "util/npy.h"

namespace {

namespace fs = std::filesystem;
using pfx::quant::Type;
using pfx::synth::SynthProfile;

fs::path profile_path(const char* name) { return fs::path(PFX_SOURCE_DIR) / "profiles" / "models" / name; }

// A scratch directory removed at scope exit.
struct TempDir {
  fs::path path;
  explicit TempDir(const std::string& tag)
      : path(fs::temp_directory_path() / ("pfx_synth_test_" + std::to_string(::getpid()) + "_" + tag)) {
    fs::remove_all(path);
    fs::create_directories(path);
  }
  ~TempDir() { fs::remove_all(path); }
};

std::string read_bytes(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

std::map<Type, int> type_histogram(const std::vector<pfx::synth::PlannedTensor>& plan) {
  std::map<Type, int> h;
  for (const auto& t : plan) ++h[t.type];
  return h;
}

// The 7B profile with its shapes shrunk (same rules, so the same Q4_K_M pattern over 8 layers).
SynthProfile reduced_7b() {
  return pfx::synth::load_profile(profile_path("llama-7b-q4km.yaml"),
                                  {"shape.n_embd=256", "shape.n_ff=768", "shape.n_layer=8", "shape.n_head=4",
                                   "shape.n_head_kv=4", "shape.n_ctx=512"});
}

TEST(SynthProfiles, TinyLoads) {
  const SynthProfile p = pfx::synth::load_profile(profile_path("tiny.yaml"));
  EXPECT_EQ(p.name, "pfx-tiny");
  EXPECT_EQ(p.n_embd, 256);
  EXPECT_EQ(p.n_layer, 2);
  EXPECT_EQ(p.n_head_kv, 2);
  EXPECT_EQ(p.default_type, Type::Q4_K);
  EXPECT_EQ(p.vocab.size, 1024);
  const auto h = type_histogram(pfx::synth::plan_tensors(p));
  EXPECT_GT(h.at(Type::Q4_K), 0);
  EXPECT_GT(h.at(Type::Q6_K), 0);
  EXPECT_GT(h.at(Type::Q8_0), 0);
  EXPECT_EQ(h.at(Type::F32), 5);  // 2 norms x 2 layers + output_norm
}

TEST(SynthProfiles, Llama7bIsLlamaCppQ4KM) {
  const SynthProfile p = pfx::synth::load_profile(profile_path("llama-7b-q4km.yaml"));
  const auto plan = pfx::synth::plan_tensors(p);
  EXPECT_EQ(plan.size(), 291u);
  const auto h = type_histogram(plan);
  // llama.cpp's own load log for llama-2-7b.Q4_K_M.gguf: f32 65, q4_K 193, q6_K 33.
  EXPECT_EQ(h.at(Type::F32), 65);
  EXPECT_EQ(h.at(Type::Q4_K), 193);
  EXPECT_EQ(h.at(Type::Q6_K), 33);
  const std::vector<int64_t> more_bits = {0, 1, 2, 3, 6, 9, 12, 15, 18, 21, 24, 27, 28, 29, 30, 31};
  for (int64_t l = 0; l < 32; ++l) {
    const bool expect_q6 = std::find(more_bits.begin(), more_bits.end(), l) != more_bits.end();
    EXPECT_EQ(pfx::synth::use_more_bits(l, 32), expect_q6) << "layer " << l;
    const std::string blk = "blk." + std::to_string(l) + ".";
    EXPECT_EQ(pfx::synth::tensor_type(p, blk + "attn_v.weight", l, false), expect_q6 ? Type::Q6_K : Type::Q4_K);
    EXPECT_EQ(pfx::synth::tensor_type(p, blk + "ffn_down.weight", l, false), expect_q6 ? Type::Q6_K : Type::Q4_K);
    EXPECT_EQ(pfx::synth::tensor_type(p, blk + "attn_k.weight", l, false), Type::Q4_K);
  }
  EXPECT_EQ(pfx::synth::tensor_type(p, "output.weight", -1, false), Type::Q6_K);
  EXPECT_EQ(pfx::synth::tensor_type(p, "token_embd.weight", -1, false), Type::Q4_K);
  EXPECT_EQ(p.file_type, 15u);
}

// llama.cpp's load logs for the real files: Llama-3.1-8B Q4_K_M f32 66 (incl. rope_freqs), q4_K
// 193, q6_K 33; Qwen2.5-7B Q4_K_M f32 141 (norms + Q/K/V biases), q4_K 169, q6_K 29.
TEST(SynthProfiles, Llama3AndQwen25AndMistralAreLlamaCppQ4KM) {
  const SynthProfile l3 = pfx::synth::load_profile(profile_path("llama-3-8b-q4km.yaml"));
  auto h = type_histogram(pfx::synth::plan_tensors(l3));
  EXPECT_EQ(h.at(Type::F32), 66);
  EXPECT_EQ(h.at(Type::Q4_K), 193);
  EXPECT_EQ(h.at(Type::Q6_K), 33);
  const SynthProfile q = pfx::synth::load_profile(profile_path("qwen2.5-7b-q4km.yaml"));
  h = type_histogram(pfx::synth::plan_tensors(q));
  EXPECT_EQ(h.at(Type::F32), 141);
  EXPECT_EQ(h.at(Type::Q4_K), 169);
  EXPECT_EQ(h.at(Type::Q6_K), 29);
  const SynthProfile m = pfx::synth::load_profile(profile_path("mistral-7b-q4km.yaml"));
  h = type_histogram(pfx::synth::plan_tensors(m));
  EXPECT_EQ(h.at(Type::F32), 65);
  EXPECT_EQ(h.at(Type::Q4_K), 193);
  EXPECT_EQ(h.at(Type::Q6_K), 33);
}

// The rope_freqs.weight the synthesizer computes equals the converter-style one (Python, float32)
// in the llama3 fixture that llama.cpp ran: factor 8, low 1, high 4, original context 64.
TEST(SynthProfiles, Llama3RopeFactorsMatchTheFixture) {
  pfx::synth::RopeScalingSpec spec;
  spec.llama3 = true;
  spec.original_context = 64;
  const std::vector<float> ours = pfx::synth::llama3_rope_factors(spec, 500000.0, 64);
  const pfx::model::Model m = pfx::model::Model::load(pfx::project_fixtures_dir() / "models" / "llama3-q4km.gguf");
  const auto& t = m.weights().rope_freqs;
  ASSERT_NE(t.info, nullptr);
  ASSERT_EQ(t.cols, 32);
  std::vector<float> theirs(32);
  pfx::quant::dequantize_row(t.type, t.data, theirs.data(), 32);
  for (size_t i = 0; i < 32; ++i) EXPECT_NEAR(ours[i], theirs[i], 1e-6f * theirs[i]) << i;
}

TEST(SynthProfiles, UseMoreBitsMatchesTheFixturesQuantizedByLlamaCpp) {
  // kq256-q4km.gguf (4 layers) was quantized by llama.cpp: its q6_K layers are llama.cpp's choice.
  const pfx::model::Model m = pfx::model::Model::load(pfx::fixtures_dir() / "models" / "kq256-q4km.gguf");
  for (int64_t l = 0; l < 4; ++l) {
    const Type expect = pfx::synth::use_more_bits(l, 4) ? Type::Q6_K : Type::Q4_K;
    EXPECT_EQ(m.weights().layers[static_cast<size_t>(l)].wv.type, expect) << "layer " << l;
    EXPECT_EQ(m.weights().layers[static_cast<size_t>(l)].w_down.type, expect) << "layer " << l;
  }
}

TEST(SynthModel, TinyWritesLoadsAndRunsDeterministically) {
  TempDir dir("tiny");
  const SynthProfile p = pfx::synth::load_profile(profile_path("tiny.yaml"));
  std::vector<std::string> lines;
  const pfx::synth::SynthResult r =
      pfx::synth::write_synthetic_model(p, dir.path / "tiny.gguf", 7, [&](std::string_view l) { lines.emplace_back(l); });
  EXPECT_EQ(r.n_tensors, 21);
  EXPECT_EQ(lines.size(), 21u);
  EXPECT_EQ(r.vocab_source, "synthetic (1024 tokens)");

  const pfx::model::Model m = pfx::model::Model::load(dir.path / "tiny.gguf");
  EXPECT_EQ(m.config().n_vocab, 1024);
  EXPECT_EQ(m.config().n_head_kv, 2);
  EXPECT_EQ(m.weights().layers[0].wq.type, Type::Q8_0);
  EXPECT_EQ(m.weights().layers[1].wv.type, Type::Q6_K);
  EXPECT_EQ(m.weights().layers[0].wv.type, Type::Q4_K);
  EXPECT_EQ(m.file().get_uint("pfx.synth.seed"), 7u);
  EXPECT_EQ(m.file().get_string("pfx.synth.vocab_source"), "synthetic (1024 tokens)");

  const std::vector<int32_t> prompt = {1, 300, 301, 302, 400, 500, 600, 700};
  pfx::cpu::CpuBackend a(m, 64), b(m, 64, 1);
  const std::vector<float> la = a.forward(prompt, true), lb = b.forward(prompt, true);
  EXPECT_EQ(la, lb);
  // Sane activations and peaked logits like the fixtures' (their logit std is ~3).
  double sum = 0, sum_sq = 0;
  for (float v : la) {
    ASSERT_TRUE(std::isfinite(v));
    sum += v;
    sum_sq += static_cast<double>(v) * v;
  }
  const double mean = sum / static_cast<double>(la.size());
  const double std = std::sqrt(sum_sq / static_cast<double>(la.size()) - mean * mean);
  std::printf("[synth] tiny logits std %.3f\n", std);
  EXPECT_GT(std, 1.0);
  EXPECT_LT(std, 10.0);
  const pfx::GreedyResult g1 = pfx::greedy(a, prompt, 16), g2 = pfx::greedy(b, prompt, 16);
  EXPECT_EQ(g1.generated, g2.generated);
}

TEST(SynthModel, SameSeedSameBytesForAnyThreadCount) {
  TempDir dir("seed");
  const SynthProfile p = pfx::synth::load_profile(profile_path("tiny.yaml"), {"shape.n_layer=1"});
  pfx::synth::write_synthetic_model(p, dir.path / "a.gguf", 42, {}, 1);
  pfx::synth::write_synthetic_model(p, dir.path / "b.gguf", 42, {}, 3);
  pfx::synth::write_synthetic_model(p, dir.path / "c.gguf", 43, {}, 2);
  const std::string a = read_bytes(dir.path / "a.gguf");
  EXPECT_GT(a.size(), 100000u);
  EXPECT_TRUE(a == read_bytes(dir.path / "b.gguf"));
  EXPECT_FALSE(a == read_bytes(dir.path / "c.gguf"));
}

TEST(SynthModel, SyntheticVocabularyWorksWithTheTokenizer) {
  TempDir dir("vocab");
  const SynthProfile p = pfx::synth::load_profile(profile_path("tiny.yaml"), {"shape.n_layer=1"});
  pfx::synth::write_synthetic_model(p, dir.path / "v.gguf", 1);
  const pfx::gguf::File f = pfx::gguf::File::open(dir.path / "v.gguf");
  const pfx::tok::SpmTokenizer tok(pfx::tok::vocab_from_gguf(f));
  EXPECT_EQ(tok.size(), 1024u);
  const std::vector<int32_t> ids = tok.encode("the tea is hot, 42!", true);
  ASSERT_GE(ids.size(), 2u);
  EXPECT_EQ(ids[0], 1);  // BOS
  for (int32_t id : ids) EXPECT_TRUE(id >= 0 && id < 1024);
  EXPECT_EQ(tok.decode(std::span<const int32_t>(ids).subspan(1)), "the tea is hot, 42!");
  // Characters outside the pieces fall back to byte tokens <0xHH> (ids 3..258), after the word
  // start "▁" (id 259, the first normal piece).
  const std::vector<int32_t> bytes = tok.encode("\xC3\xA9", false);
  EXPECT_EQ(bytes, (std::vector<int32_t>{259, 3 + 0xC3, 3 + 0xA9}));
}

// Runs gguf_py_dump.py on `model` and checks: the metadata llama.cpp needs, the tensor table, and
// every tensor's dequantized values against our reader + dequantizer, bit for bit.
void expect_gguf_py_agrees(const fs::path& model, const fs::path& dump) {
  const char* env = std::getenv("PFX_PYTHON");
  const std::string python = env && *env ? env : "python3";
  const fs::path script = fs::path(PFX_SOURCE_DIR) / "tests" / "engine" / "gguf" / "gguf_py_dump.py";
  const std::string cmd = python + " '" + script.string() + "' '" + model.string() + "' '" + dump.string() + "'";
  ASSERT_EQ(std::system(cmd.c_str()), 0)
      << "the Python gguf package (pip install gguf; llama.cpp's reader) could not read " << model << ": " << cmd;
  std::ifstream in(dump / "meta.json");
  ASSERT_TRUE(in) << "gguf_py_dump.py wrote no meta.json";
  const nlohmann::json meta = nlohmann::json::parse(in);

  const pfx::gguf::File f = pfx::gguf::File::open(model);
  const nlohmann::json& kv = meta.at("kv");
  const std::string arch = f.get_string("general.architecture");
  EXPECT_EQ(kv.at("general.architecture"), arch);
  EXPECT_EQ(kv.at("tokenizer.ggml.model"), f.get_string("tokenizer.ggml.model"));
  for (const std::string& key : {arch + ".embedding_length", arch + ".block_count", arch + ".feed_forward_length",
                                arch + ".attention.head_count", arch + ".attention.head_count_kv",
                                arch + ".context_length", arch + ".rope.dimension_count", std::string("general.file_type"),
                                std::string("tokenizer.ggml.bos_token_id"), std::string("tokenizer.ggml.eos_token_id")})
    EXPECT_EQ(kv.at(key).get<uint64_t>(), f.get_uint(key)) << key;
  EXPECT_FLOAT_EQ(kv.at(arch + ".attention.layer_norm_rms_epsilon").get<float>(),
                  static_cast<float>(f.get_float(arch + ".attention.layer_norm_rms_epsilon")));
  for (const char* key : {"tokenizer.ggml.tokens", "tokenizer.ggml.scores", "tokenizer.ggml.token_type",
                          "tokenizer.ggml.merges"})
    if (f.has(key)) {
      EXPECT_EQ(meta.at("arrays").at(key).get<uint64_t>(), f.find(key)->array_size()) << key;
    }

  const nlohmann::json& tensors = meta.at("tensors");
  ASSERT_EQ(tensors.size(), f.tensors().size());
  for (size_t i = 0; i < tensors.size(); ++i) {
    const pfx::gguf::TensorInfo& t = f.tensors()[i];
    SCOPED_TRACE(t.name);
    EXPECT_EQ(tensors[i].at("name"), t.name);
    EXPECT_EQ(tensors[i].at("dims").get<std::vector<int64_t>>(), t.dims);
    std::string type_name(pfx::quant::type_name(t.type));
    for (char& c : type_name) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
    EXPECT_EQ(tensors[i].at("type"), type_name);
    EXPECT_EQ(tensors[i].at("n_bytes").get<int64_t>(), t.n_bytes);

    const pfx::NpyArray theirs = pfx::read_npy(dump / (std::to_string(i) + ".npy"));
    ASSERT_EQ(theirs.rows(), t.rows());
    ASSERT_EQ(theirs.cols(), t.cols());
    std::vector<float> ours(static_cast<size_t>(t.cols()));
    int64_t mismatches = 0;
    for (int64_t r = 0; r < t.rows(); ++r) {
      pfx::quant::dequantize_row(t.type, f.tensor_data(t) + r * t.row_bytes(), ours.data(), t.cols());
      for (int64_t c = 0; c < t.cols(); ++c) mismatches += ours[static_cast<size_t>(c)] != theirs.data[static_cast<size_t>(r * t.cols() + c)];
    }
    EXPECT_EQ(mismatches, 0) << "elements where gguf-py's dequantization differs from ours";
  }
}

// The new architectures' features end to end at reduced width: written, bound by Model::load (every
// tensor bound, no metadata refused), tokenized and run by the CPU reference. (gguf-py's reading of
// the writer is checked on the 7B-shaped model; dumping 70M vocabulary weights here would take
// minutes.)
TEST(SynthModel, ReducedLlama3AndQwen25LoadAndRun) {
  TempDir dir("l3q2");
  const std::vector<std::string> small = {"shape.n_embd=256", "shape.n_ff=512", "shape.n_layer=2", "shape.n_head=4",
                                          "shape.n_head_kv=1", "shape.n_ctx=256"};
  const SynthProfile l3 = pfx::synth::load_profile(profile_path("llama-3-8b-q4km.yaml"), small);
  const auto r3 = pfx::synth::write_synthetic_model(l3, dir.path / "l3.gguf", 2);
  EXPECT_EQ(r3.vocab_source, "copied from ggml-vocab-llama-bpe.gguf (128256 tokens)");
  {
    const pfx::model::Model m = pfx::model::Model::load(dir.path / "l3.gguf");
    EXPECT_EQ(m.config().n_vocab, 128256);
    EXPECT_EQ(m.config().n_gqa(), 4);
    ASSERT_NE(m.weights().rope_freqs.info, nullptr);
    EXPECT_FALSE(m.weights().layers[0].has_qkv_bias());
    const auto tok = pfx::tok::make_tokenizer(m.file());
    const auto ids = tok->encode("Hello world", true);
    EXPECT_EQ(ids.front(), 128000);
    pfx::cpu::CpuBackend cpu(m, 16);
    const auto logits = cpu.forward(ids, false);
    EXPECT_EQ(logits.size(), 128256u);
    for (float v : logits) ASSERT_TRUE(std::isfinite(v));
  }

  std::vector<std::string> small_q = small;
  small_q.back() = "shape.n_ctx=256";
  small_q[4] = "shape.n_head_kv=2";
  const SynthProfile q = pfx::synth::load_profile(profile_path("qwen2.5-7b-q4km.yaml"), small_q);
  const auto rq = pfx::synth::write_synthetic_model(q, dir.path / "q.gguf", 2);
  EXPECT_EQ(rq.vocab_source, "copied from ggml-vocab-qwen2.gguf (151936 tokens, padded to 152064)");
  {
    const pfx::model::Model m = pfx::model::Model::load(dir.path / "q.gguf");
    EXPECT_EQ(m.config().arch, "qwen2");
    EXPECT_EQ(m.config().n_vocab, 152064);
    EXPECT_TRUE(m.weights().layers[1].has_qkv_bias());
    const auto tok = pfx::tok::make_tokenizer(m.file());
    EXPECT_EQ(tok->vocab().pieces[152063], "[PAD152063]");
    const auto ids = tok->encode("Hello world", true);
    pfx::cpu::CpuBackend cpu(m, 16);
    const auto logits = cpu.forward(ids, false);
    EXPECT_EQ(logits.size(), 152064u);
    for (float v : logits) ASSERT_TRUE(std::isfinite(v));
  }
}

TEST(SynthModel, TinyIsReadByLlamaCppsPythonReader) {
  TempDir dir("tinypy");
  const SynthProfile p = pfx::synth::load_profile(profile_path("tiny.yaml"));
  pfx::synth::write_synthetic_model(p, dir.path / "tiny.gguf", 3);
  expect_gguf_py_agrees(dir.path / "tiny.gguf", dir.path / "dump");
}

TEST(SynthModel, Reduced7bIsReadByLlamaCppsPythonReader) {
  TempDir dir("7bpy");
  const SynthProfile p = reduced_7b();
  const pfx::synth::SynthResult r = pfx::synth::write_synthetic_model(p, dir.path / "r7b.gguf", 11);
  // The fixtures' Llama-2 vocabulary is copied (fixtures are required for the test suite).
  EXPECT_EQ(r.vocab_source, "copied from ggml-vocab-llama-spm.gguf (32000 tokens)");
  const pfx::model::Model m = pfx::model::Model::load(dir.path / "r7b.gguf");
  EXPECT_EQ(m.config().n_vocab, 32000);
  EXPECT_EQ(m.config().n_layer, 8);
  // use_more_bits over 8 layers: 0, 3, 6, 7.
  for (int64_t l = 0; l < 8; ++l) {
    const bool q6 = l == 0 || l == 3 || l == 6 || l == 7;
    EXPECT_EQ(m.weights().layers[static_cast<size_t>(l)].wv.type, q6 ? Type::Q6_K : Type::Q4_K) << l;
  }
  EXPECT_EQ(m.file().get_string_array("pfx.synth.overrides").size(), 6u);
  const pfx::gguf::File vocab = pfx::gguf::File::open(pfx::fixtures_dir() / "vocab" / "ggml-vocab-llama-spm.gguf");
  EXPECT_EQ(m.file().get_string_array("tokenizer.ggml.tokens"), vocab.get_string_array("tokenizer.ggml.tokens"));
  expect_gguf_py_agrees(dir.path / "r7b.gguf", dir.path / "dump");
}

}  // namespace

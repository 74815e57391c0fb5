// Hostile model files (issue 12): counts the file cannot back, non-finite or out-of-range config
// values, NaN weights and context overruns are pfx::Errors or warnings naming the file and key or
// tensor — never an allocation sized from an unchecked count. Files are written by TinyLlama.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cmath>
#include <filesystem>
#include <limits>

#include "engine/model/hostile_models.h"
#include "model/checks.h"
#include "model/llama.h"
#include "util/error.h"

namespace fs = std::filesystem;
using pfx::model::Model;
using pfx::test::TinyLlama;

namespace {

class ModelChecks : public ::testing::Test {
 protected:
  fs::path dir_ = fs::temp_directory_path() / ("pfx_model_checks_" + std::to_string(::getpid()));
  void SetUp() override { fs::create_directories(dir_); }
  void TearDown() override { fs::remove_all(dir_); }

  fs::path write(const TinyLlama& m, const std::string& name) {
    const fs::path p = dir_ / (name + ".gguf");
    m.write(p);
    return p;
  }
  std::string load_error(const TinyLlama& m, const std::string& name) {
    const fs::path p = write(m, name);
    try {
      (void)Model::load(p);
    } catch (const pfx::Error& e) {
      const std::string msg = e.what();
      EXPECT_NE(msg.find(p.string()), std::string::npos) << "the message must name the file: " << msg;
      return msg;
    }
    return "(no error)";
  }
  template <class Edit>
  std::string error_with(Edit edit, const std::string& name) {
    TinyLlama m;
    m.edit_kv = edit;
    return load_error(m, name);
  }
};

}  // namespace

TEST_F(ModelChecks, TheDefaultTinyModelIsValid) {
  const Model m = Model::load(write(TinyLlama{}, "valid"));
  EXPECT_EQ(m.config().n_layer, 2);
  EXPECT_TRUE(pfx::model::nonfinite_weights(m).empty());
}

// The memory blow-up: block_count 2^23 took 5.3 GB from a 1 MB file, 2^40 ended in
// std::bad_alloc. Now the count is checked against the layers the file has tensors for first.
TEST_F(ModelChecks, BlockCountBeyondTheTensorsIsRefusedBeforeAllocating) {
  for (const uint64_t n : {uint64_t{3}, uint64_t{1} << 23, uint64_t{1} << 40}) {
    const std::string e = error_with([n](pfx::gguf::Writer& w) { w.set_u64("llama.block_count", n); },
                                     "layers_" + std::to_string(n));
    EXPECT_NE(e.find("'llama.block_count' is " + std::to_string(n) + " but the file has tensors for 2 of those layers: "
                     "layer 2 has none"),
              std::string::npos)
        << e;
  }
}

TEST_F(ModelChecks, HeadProductsThatOverflowAreRefused) {
  const std::string e = error_with(
      [](pfx::gguf::Writer& w) {
        w.set_u64("llama.attention.head_count", uint64_t{1} << 40);
        w.set_u64("llama.attention.head_count_kv", uint64_t{1} << 40);
        w.set_u64("llama.attention.key_length", uint64_t{1} << 40);
        w.set_u64("llama.attention.value_length", uint64_t{1} << 40);
        w.set_u64("llama.rope.dimension_count", 64);
      },
      "heads");
  EXPECT_NE(e.find("head_count x head dim (q_dim): 1099511627776 x 1099511627776 overflows"), std::string::npos) << e;
  const std::string kv = error_with([](pfx::gguf::Writer& w) { w.set_u32("llama.attention.head_count_kv", 4); }, "kv");
  EXPECT_NE(kv.find("head_count (2) must be a multiple of"), std::string::npos) << kv;
}

TEST_F(ModelChecks, RmsEpsilonMustBeFiniteInZeroOne) {
  const double nan = std::numeric_limits<double>::quiet_NaN(), inf = std::numeric_limits<double>::infinity();
  for (const double eps : {inf, -inf, nan, 0.0, -1e-5, 1.0, 2.5}) {
    const std::string e = error_with(
        [eps](pfx::gguf::Writer& w) { w.set_f32("llama.attention.layer_norm_rms_epsilon", static_cast<float>(eps)); },
        "eps");
    EXPECT_NE(e.find("'llama.attention.layer_norm_rms_epsilon' is "), std::string::npos) << eps << ": " << e;
  }
  // A float64 value past float32's range is refused before the (undefined) conversion.
  const std::string big = error_with(
      [](pfx::gguf::Writer& w) { w.set_f64("llama.attention.layer_norm_rms_epsilon", 1e300); }, "eps_f64");
  EXPECT_NE(big.find("expected a finite float32 value"), std::string::npos) << big;
  TinyLlama tiny;
  tiny.edit_kv = [](pfx::gguf::Writer& w) { w.set_f32("llama.attention.layer_norm_rms_epsilon", 1e-30f); };
  EXPECT_FLOAT_EQ(Model::load(write(tiny, "eps_tiny")).config().rms_eps, 1e-30f);  // small is fine
}

TEST_F(ModelChecks, RopeBaseMustBeFiniteAboveOne) {
  const float inf = std::numeric_limits<float>::infinity(), nan = std::numeric_limits<float>::quiet_NaN();
  for (const float base : {inf, nan, 1e-30f, 0.5f, 1.0f, -10000.0f}) {
    const std::string e =
        error_with([base](pfx::gguf::Writer& w) { w.set_f32("llama.rope.freq_base", base); }, "rope");
    EXPECT_NE(e.find("'llama.rope.freq_base' is "), std::string::npos) << base << ": " << e;
    EXPECT_NE(e.find("expected a finite"), std::string::npos) << base << ": " << e;
  }
}

TEST_F(ModelChecks, VocabSizeMustMatchTheEmbedding) {
  const std::string e = error_with([](pfx::gguf::Writer& w) { w.set_u32("llama.vocab_size", 1 << 30); }, "vocab");
  EXPECT_NE(e.find("'llama.vocab_size' is 1073741824 but token_embd.weight has 32 rows"), std::string::npos) << e;
}

TEST_F(ModelChecks, ContextLengthIsEnforced) {
  TinyLlama tiny;
  tiny.n_ctx = 8;
  const Model m = Model::load(write(tiny, "ctx"));
  EXPECT_NO_THROW(pfx::model::check_context_length(m, 8, "a prompt"));
  try {
    pfx::model::check_context_length(m, 9, "a prompt of 9 tokens");
    FAIL() << "expected an error";
  } catch (const pfx::Error& e) {
    EXPECT_NE(std::string(e.what()).find("a prompt of 9 tokens needs 9 positions, more than the model's context length 8 "
                                         "(metadata key 'llama.context_length')"),
              std::string::npos)
        << e.what();
  }
}

// NaN or infinity in a weight is found on load of the tensors used, named, for every stored
// format the reference reads (f32/f16 by value, q8_0/q4_K by their block scales).
TEST_F(ModelChecks, NonFiniteWeightsAreNamed) {
  using pfx::quant::Type;
  struct Case {
    Type type;
    int64_t n_embd;
    float poison;
  };
  for (const Case c : {Case{Type::F32, 32, NAN}, Case{Type::F16, 32, INFINITY}, Case{Type::BF16, 32, NAN},
                       Case{Type::Q8_0, 32, INFINITY}, Case{Type::Q4_K, 256, INFINITY}}) {
    TinyLlama tiny;
    tiny.matrix_type = c.type;
    tiny.n_embd = c.n_embd;
    tiny.n_ff = c.n_embd;
    tiny.poison_tensor = "blk.1.attn_v.weight";
    tiny.poison_at = 40;
    tiny.poison = c.poison;
    const std::string type(pfx::quant::type_name(c.type));
    const Model m = Model::load(write(tiny, "poison_" + type));
    const auto warnings = pfx::model::nonfinite_weights(m);
    ASSERT_EQ(warnings.size(), 1u) << type;
    EXPECT_NE(warnings[0].find("tensor 'blk.1.attn_v.weight' (" + type + "): "), std::string::npos) << warnings[0];
    EXPECT_NE(warnings[0].find("values are NaN or infinite"), std::string::npos) << warnings[0];
  }
}

// Bad synthetic-model profiles: each is a pfx::Error naming the file, the field and what was
// expected; overrides edit a profile the same way a CLI --set would.
#include <gtest/gtest.h>

#include <string>

#include "synth/synth.h"
#include "error_of.h"
#include "util/error.h"

namespace {

using pfx::synth::parse_profile;

// A valid profile; tests break one thing at a time.
const char* const kGood = R"(
name: t
shape: {n_embd: 256, n_layer: 2, n_head: 4, n_head_kv: 2, n_ff: 512}
types:
  default: q4_K
  file_type: 15
  rules:
    - {tensor: output.weight, type: q6_K}
    - {tensor: attn_v.weight, layers: use_more_bits, type: q6_K}
vocab: {size: 300}
)";

std::string error_of(const std::string& yaml, const std::vector<std::string>& overrides = {}) {
  return pfx::test::error_of([&] { parse_profile(yaml, "profiles/models/bad.yaml", overrides); });
}

#define EXPECT_ERROR(yaml_or_call, ...)                                                           \
  do {                                                                                            \
    const std::string err = yaml_or_call;                                                         \
    for (const char* part : {__VA_ARGS__}) EXPECT_NE(err.find(part), std::string::npos) << err; \
  } while (0)

TEST(SynthProfileErrors, GoodProfileParses) {
  const pfx::synth::SynthProfile p = parse_profile(kGood, "good.yaml");
  EXPECT_EQ(p.n_head_kv, 2);
  EXPECT_EQ(p.n_ctx, 2048);  // default
  EXPECT_EQ(p.rules.size(), 2u);
  EXPECT_EQ(p.rules[1].layers, pfx::synth::LayerSelect::UseMoreBits);
}

TEST(SynthProfileErrors, MissingRequiredField) {
  EXPECT_ERROR(error_of("name: t\nshape: {n_layer: 2, n_head: 4, n_ff: 512}\ntypes: {default: q4_K, file_type: 15}\nvocab: {size: 300}\n"),
               "profiles/models/bad.yaml", "field 'shape.n_embd'", "an integer (required)");
}

TEST(SynthProfileErrors, NotAnInteger) {
  EXPECT_ERROR(error_of(kGood, {"shape.n_layer=two"}), "field 'shape.n_layer'", "expected an integer", "found 'two'");
}

TEST(SynthProfileErrors, UnknownFieldIsATypo) {
  EXPECT_ERROR(error_of(kGood, {"shape.n_emdb=256"}), "unknown field 'shape.n_emdb'", "expected one of:", "n_embd");
}

TEST(SynthProfileErrors, UnknownTypeName) {
  EXPECT_ERROR(error_of(kGood, {"types.default=q4_X"}), "field 'types.default'", "a ggml type name", "found 'q4_X'");
}

TEST(SynthProfileErrors, KQuantNeedsRowsOfWholeBlocks) {
  EXPECT_ERROR(error_of(kGood, {"shape.n_embd=128"}), "field 'types.rules[0].type'", "tensor 'output.weight'",
               "blocks of 256 elements do not divide its row length 128");
  EXPECT_ERROR(error_of(kGood, {"shape.n_ff=300"}), "field 'types.default'", "tensor 'blk.0.ffn_down.weight'",
               "row length 300");
}

TEST(SynthProfileErrors, HeadsMustDivide) {
  EXPECT_ERROR(error_of(kGood, {"shape.n_head_kv=3"}), "field 'shape.n_head_kv'", "multiple of n_head_kv (3)");
  EXPECT_ERROR(error_of(kGood, {"shape.n_head=3"}), "field 'shape.n_head'", "multiple of n_head (3)");
}

TEST(SynthProfileErrors, RuleTargetsMustExist) {
  EXPECT_ERROR(error_of(kGood, {"types.rules=[{tensor: attn_x.weight, type: q8_0}]"}), "field 'types.rules[0].tensor'",
               "'attn_x.weight' names no tensor");
  EXPECT_ERROR(error_of(kGood, {"types.rules=[{tensor: attn_v.weight, layers: [0, 5], type: q8_0}]"}),
               "field 'types.rules[0].layers'", "layer 5 is outside [0, 2)");
  EXPECT_ERROR(error_of(kGood, {"types.rules=[{tensor: attn_v.weight, layers: some, type: q8_0}]"}),
               "field 'types.rules[0].layers'", "'all', 'use_more_bits' or a list");
}

TEST(SynthProfileErrors, VocabularyProblems) {
  EXPECT_ERROR(error_of(kGood, {"vocab.size=100"}), "field 'vocab.size'", "at least 259 tokens");
  EXPECT_ERROR(error_of(kGood, {"vocab.source=copy", "vocab.path=/nonexistent/v.gguf"}), "(no error)");
  EXPECT_ERROR(error_of(kGood, {"vocab.source=magic"}), "field 'vocab.source'", "'synthetic' or 'copy'");
}

TEST(SynthProfileErrors, MissingCopySourceFailsAtWriteUnlessFallback) {
  pfx::synth::SynthProfile p = parse_profile(kGood, "profiles/models/bad.yaml", {"vocab.source=copy", "vocab.path=/nonexistent/v.gguf"});
  EXPECT_ERROR(pfx::test::error_of([&] { pfx::synth::write_synthetic_model(p, "/nonexistent-dir/out.gguf", 1); }), "field 'vocab.path': /nonexistent/v.gguf does not exist");
}

TEST(SynthProfileErrors, BadYamlAndBadOverrides) {
  EXPECT_ERROR(error_of("name: [unclosed\n"), "profiles/models/bad.yaml: line ", "invalid YAML");
  EXPECT_ERROR(error_of(kGood, {"shape.n_layer"}), "override 'shape.n_layer'", "expected dotted.key=value");
  EXPECT_ERROR(error_of(kGood, {"name.x=1"}), "override 'name.x=1'", "not a map");
  EXPECT_ERROR(error_of("- a\n- b\n"), "expected a YAML map");
}

TEST(SynthProfileErrors, MissingFileIsNamed) {
  EXPECT_ERROR(pfx::test::error_of([&] { pfx::synth::load_profile("/nonexistent/profile.yaml"); }), "/nonexistent/profile.yaml: cannot open the profile");
}

TEST(SynthProfileErrors, EditedProfilesAreRevalidatedBeforeWriting) {
  pfx::synth::SynthProfile p = parse_profile(kGood, "good.yaml");
  p.n_ff = 100;
  EXPECT_ERROR(pfx::test::error_of([&] { pfx::synth::write_synthetic_model(p, "/tmp/never-written.gguf", 1); }), "row length 100");
}

}  // namespace

// Issue 12: a profile missing shape, types or vocab used to say "internal error: invalid node".
TEST(SynthProfileErrors, MissingSectionsAreNamedWithFileAndLine) {
  EXPECT_ERROR(error_of("name: t\ntypes: {default: f32, file_type: 0}\nvocab: {size: 300}\n"), "profiles/models/bad.yaml: line 1: ",
               "required key 'shape' is missing");
  EXPECT_ERROR(error_of("name: t\nshape: {n_embd: 32, n_layer: 1, n_head: 1, n_ff: 32}\nvocab: {size: 300}\n"),
               "required key 'types' is missing");
  EXPECT_ERROR(error_of("name: t\nshape: {n_embd: 32, n_layer: 1, n_head: 1, n_ff: 32}\ntypes: {default: f32, file_type: 0}\n"),
               "required key 'vocab' is missing");
  // A required field inside a section names the section's line.
  EXPECT_ERROR(error_of("name: t\ntypes: {default: f32, file_type: 0}\nvocab: {size: 300}\nshape:\n  n_layer: 1\n"),
               "field 'shape.n_embd' (line 5): expected an integer (required), found nothing");
}

TEST(SynthProfileErrors, DuplicateKeysAreRefused) {
  EXPECT_ERROR(error_of(std::string(kGood) + "name: again\n"), "profiles/models/bad.yaml: line 11: duplicate key 'name' (first on line 2)");
}

// A "billion laughs": nine levels of ten aliases each expand to 10^9 nodes from 1 KB.
TEST(SynthProfileErrors, AliasBombsAreRefused) {
  std::string yaml = "a0: &a0 [x, x, x, x, x, x, x, x, x, x]\n";
  for (int i = 1; i < 9; ++i) {
    yaml += "a" + std::to_string(i) + ": &a" + std::to_string(i) + " [";
    for (int k = 0; k < 10; ++k) yaml += std::string(k ? ", " : "") + "*a" + std::to_string(i - 1);
    yaml += "]\n";
  }
  EXPECT_ERROR(error_of(yaml), "profiles/models/bad.yaml", "expands to more than 100000 nodes");
  EXPECT_ERROR(error_of("name: &n [1, *n]\n"), "nesting deeper than 64 levels");
}

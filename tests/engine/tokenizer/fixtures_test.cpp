// The tokenizer against llama.cpp's outputs in fixtures/llama.cpp/*.json: text prompts encode
// to llama.cpp's prompt ids, and the greedy ids render to llama.cpp's greedy bytes. Every json
// there must be listed below (so none is skipped silently); ids-only prompts (prompt: null)
// are simply not in the text list.
#include <gtest/gtest.h>

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "gguf/gguf.h"
#include "tokenizer/spm.h"
#include "util/error.h"
#include "util/fixtures.h"

namespace {

namespace fs = std::filesystem;
using pfx::tok::SpmTokenizer;

// Cases whose prompt is text, and all cases (the rest give prompt ids only).
const std::vector<std::string> kTextPromptCases = {
    "stories260K.once", "stories260K.lily", "tiny-random.hello", "kq256spm-q4km.fox",
    "kq256-q4km.lily",  "kq256-q6k.lily",   "kq256-q80.lily",
};
const std::vector<std::string> kIdsPromptCases = {
    "kq256-q4km.ids64", "kq256-q6k.ids64", "kq256-q80.ids64"};

fs::path case_dir() { return pfx::fixtures_dir() / "llama.cpp"; }

nlohmann::json read_case(const std::string& name) {
  const fs::path p = case_dir() / (name + ".json");
  std::ifstream in(p);
  if (!in) pfx::fail(p.string(), ": cannot open fixture");
  return nlohmann::json::parse(in);
}

const SpmTokenizer& tokenizer_for(const std::string& model) {
  static std::map<std::string, std::unique_ptr<SpmTokenizer>> cache;
  auto& slot = cache[model];
  if (!slot) {
    const auto file = pfx::gguf::File::open(pfx::fixtures_dir() / "models" / model);
    slot = std::make_unique<SpmTokenizer>(pfx::tok::vocab_from_gguf(file));
  }
  return *slot;
}

std::string from_hex(const std::string& hex) {
  if (hex.size() % 2 != 0) pfx::fail("greedy_bytes_hex: odd length ", hex.size());
  std::string out;
  for (size_t i = 0; i < hex.size(); i += 2) {
    out += static_cast<char>(std::stoi(hex.substr(i, 2), nullptr, 16));
  }
  return out;
}

TEST(TokenizerFixtures, EveryCaseIsListed) {
  std::vector<std::string> found;
  for (const auto& e : fs::directory_iterator(case_dir())) {
    if (e.path().extension() == ".json") found.push_back(e.path().stem().string());
  }
  std::vector<std::string> listed = kTextPromptCases;
  listed.insert(listed.end(), kIdsPromptCases.begin(), kIdsPromptCases.end());
  std::sort(found.begin(), found.end());
  std::sort(listed.begin(), listed.end());
  EXPECT_EQ(found, listed);
  for (const auto& name : kIdsPromptCases) EXPECT_TRUE(read_case(name)["prompt"].is_null()) << name;
  for (const auto& name : kTextPromptCases) EXPECT_TRUE(read_case(name)["prompt"].is_string()) << name;
}

class TextPrompt : public ::testing::TestWithParam<std::string> {};

TEST_P(TextPrompt, EncodesToLlamaCppPromptIds) {
  const auto j = read_case(GetParam());
  const SpmTokenizer& t = tokenizer_for(j.at("model").get<std::string>());
  const auto prompt = j.at("prompt").get<std::string>();
  const auto expected = j.at("prompt_tokens").get<std::vector<int32_t>>();
  EXPECT_EQ(t.encode(prompt, j.at("add_bos").get<bool>()), expected) << "prompt '" << prompt << "'";
  EXPECT_EQ(t.decode(t.encode(prompt, false)), prompt);
}

// "kq256-q4km.lily" -> "kq256_q4km_lily" (gtest names are alphanumeric and '_').
std::string case_name(const ::testing::TestParamInfo<std::string>& p) {
  std::string n = p.param;
  std::replace_if(n.begin(), n.end(), [](char c) { return !std::isalnum(static_cast<unsigned char>(c)); }, '_');
  return n;
}

INSTANTIATE_TEST_SUITE_P(Case, TextPrompt, ::testing::ValuesIn(kTextPromptCases), case_name);

class Greedy : public ::testing::TestWithParam<std::string> {};

// greedy_bytes_hex holds the bytes llama.cpp printed for the generated tokens, piece by piece.
TEST_P(Greedy, GeneratedIdsRenderToLlamaCppBytes) {
  const auto j = read_case(GetParam());
  const SpmTokenizer& t = tokenizer_for(j.at("model").get<std::string>());
  const auto prompt = j.at("prompt_tokens").get<std::vector<int32_t>>();
  const auto greedy = j.at("greedy_tokens").get<std::vector<int32_t>>();
  const std::string bytes = from_hex(j.at("greedy_bytes_hex").get<std::string>());
  ASSERT_FALSE(greedy.empty());
  std::string pieces;
  for (int32_t id : greedy) pieces += t.token_to_piece(id);
  EXPECT_EQ(pieces, bytes);
  EXPECT_EQ(t.decode_continuation(greedy), bytes);
  std::vector<int32_t> all = prompt;
  all.insert(all.end(), greedy.begin(), greedy.end());
  EXPECT_EQ(t.decode(all), t.decode(prompt) + bytes);
}

std::vector<std::string> all_cases() {
  auto v = kTextPromptCases;
  v.insert(v.end(), kIdsPromptCases.begin(), kIdsPromptCases.end());
  return v;
}

INSTANTIATE_TEST_SUITE_P(Case, Greedy, ::testing::ValuesIn(all_cases()), case_name);

TEST(TokenizerFixtures, Stories260KVocabLoadsWithOutOfRangePaddingId) {
  // stories260K.gguf says padding_token_id = 0xFFFFFFFF ("none"); llama.cpp keeps the default.
  const SpmTokenizer& t = tokenizer_for("stories260K.gguf");
  EXPECT_EQ(t.size(), 512u);
  EXPECT_EQ(t.vocab().pad, -1);
  EXPECT_EQ(t.vocab().bos, 1);
}

}  // namespace

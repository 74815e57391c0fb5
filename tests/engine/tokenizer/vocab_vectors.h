// llama.cpp's tokenizer test vectors (fixtures/vocab/<vocab>.gguf.inp / .out), parsed exactly as
// llama.cpp's tests/test-tokenizer-0.cpp does: .inp cases are separated by
// "\n__ggml_vocab_test__\n" (text after the last separator, if any, is a case), one .out line per
// case holding its expected ids (without BOS), space separated. Shared by the SPM and BPE tests.
#pragma once
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <sstream>
#include <string>
#include <vector>

#include "tokenizer/unicode.h"
#include "util/error.h"

namespace pfx::test {

struct VocabCase {
  std::string text;
  std::vector<int32_t> ids;
};

inline std::string read_fixture_file(const std::filesystem::path& p) {
  std::ifstream in(p, std::ios::binary);
  if (!in) pfx::fail(p.string(), ": cannot open fixture");
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

inline std::vector<VocabCase> read_vocab_cases(const std::filesystem::path& vocab) {
  const std::filesystem::path inp = vocab.string() + ".inp";
  const std::filesystem::path out = vocab.string() + ".out";
  const std::string raw = read_fixture_file(inp);
  const std::string sep = "\n__ggml_vocab_test__\n";
  std::vector<std::string> texts;
  for (size_t pos = 0; pos < raw.size();) {
    const size_t next = raw.find(sep, pos);
    if (next == std::string::npos) {
      texts.push_back(raw.substr(pos));
      break;
    }
    texts.push_back(raw.substr(pos, next - pos));
    pos = next + sep.size();
  }
  std::vector<std::string> lines;
  std::istringstream out_text(read_fixture_file(out));
  for (std::string line; std::getline(out_text, line);) lines.push_back(line);
  if (texts.size() != lines.size()) {
    pfx::fail(inp.string(), ": ", texts.size(), " cases but ", out.string(), " has ", lines.size(),
              " lines; expected one line per case");
  }
  std::vector<VocabCase> cases;
  for (size_t i = 0; i < texts.size(); ++i) {
    VocabCase c{texts[i], {}};
    std::istringstream ids(lines[i]);
    for (long long id; ids >> id;) c.ids.push_back(static_cast<int32_t>(id));
    if (!ids.eof()) pfx::fail(out.string(), ": line ", i + 1, ": expected space-separated ids");
    cases.push_back(std::move(c));
  }
  return cases;
}

inline std::string show_ids(const std::vector<int32_t>& ids) {
  std::string s;
  for (int32_t id : ids) s += (s.empty() ? "" : " ") + std::to_string(id);
  return "[" + s + "]";
}

// UTF-8 of a code point (the round-trip tests walk every code point).
inline std::string utf8_of(uint32_t cp) {
  std::string s;
  pfx::tok::append_utf8(s, static_cast<char32_t>(cp));
  return s;
}

}  // namespace pfx::test

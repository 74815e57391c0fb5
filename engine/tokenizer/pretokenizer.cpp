// The llama3 / qwen2 split patterns as a hand-written matcher over code points (see
// pretokenizer.h for the patterns). Each alternative is a function that returns the length of its
// match at a position (0: no match); the first non-zero one is taken.
#include "tokenizer/pretokenizer.h"

#include <algorithm>
#include <array>

#include "tokenizer/unicode.h"
#include "util/error.h"

namespace pfx::tok {
namespace {

struct NamedFlavor {
  std::string_view pre;
  BpeFlavor flavor;
};

// llama.cpp sets ignore_merges and add_bos for the llama3 family; clean_spaces stays on for it
// (the BPE default) and is turned off for qwen2.
const std::array<NamedFlavor, 5>& flavors() {
  static const std::array<NamedFlavor, 5> table = {{
      {"llama-bpe", {"llama3", SplitPattern::Llama3, true, true, true}},
      {"llama3", {"llama3", SplitPattern::Llama3, true, true, true}},
      {"llama-v3", {"llama3", SplitPattern::Llama3, true, true, true}},
      {"qwen2", {"qwen2", SplitPattern::Qwen2, false, false, false}},
      {"deepseek-r1-qwen", {"qwen2", SplitPattern::Qwen2, false, false, false}},
  }};
  return table;
}

// The text as code points with their classes; positions past the end read as "nothing".
class Cursor {
 public:
  explicit Cursor(std::vector<char32_t> cps) : cps_(std::move(cps)) {
    classes_.reserve(cps_.size());
    for (char32_t c : cps_) classes_.push_back(classify(c));
  }
  size_t size() const { return cps_.size(); }
  bool in(size_t i) const { return i < cps_.size(); }
  char32_t at(size_t i) const { return in(i) ? cps_[i] : 0; }
  bool letter(size_t i) const { return in(i) && classes_[i].letter; }
  bool number(size_t i) const { return in(i) && classes_[i].number; }
  bool space(size_t i) const { return in(i) && classes_[i].whitespace; }
  bool newline(size_t i) const { return in(i) && (cps_[i] == '\r' || cps_[i] == '\n'); }
  // [^\s\p{L}\p{N}]
  bool other(size_t i) const { return in(i) && !classes_[i].whitespace && !classes_[i].letter && !classes_[i].number; }
  const std::vector<char32_t>& code_points() const { return cps_; }

 private:
  std::vector<char32_t> cps_;
  std::vector<CharClass> classes_;
};

// (?i:'s|'t|'re|'ve|'m|'ll|'d)
size_t contraction(const Cursor& c, size_t p) {
  if (c.at(p) != '\'') return 0;
  const char32_t a = to_lower(c.at(p + 1));
  if (!c.in(p + 1)) return 0;
  if (a == 's' || a == 't' || a == 'm' || a == 'd') return 2;
  if (!c.in(p + 2)) return 0;
  const char32_t b = to_lower(c.at(p + 2));
  if ((a == 'r' && b == 'e') || (a == 'v' && b == 'e') || (a == 'l' && b == 'l')) return 3;
  return 0;
}

// [^\r\n\p{L}\p{N}]?\p{L}+
size_t letters(const Cursor& c, size_t p) {
  size_t q = p;
  if (c.in(q) && !c.newline(q) && !c.letter(q) && !c.number(q) && c.letter(q + 1)) ++q;
  if (!c.letter(q)) return 0;
  while (c.letter(q)) ++q;
  return q - p;
}

// \p{N}{1,max}
size_t digits(const Cursor& c, size_t p, size_t max) {
  size_t q = p;
  while (q - p < max && c.number(q)) ++q;
  return q - p;
}

//  ?[^\s\p{L}\p{N}]+[\r\n]*
size_t symbols(const Cursor& c, size_t p) {
  size_t q = p;
  if (c.at(q) == ' ' && c.other(q + 1)) ++q;
  if (!c.other(q)) return 0;
  while (c.other(q)) ++q;
  while (c.newline(q)) ++q;
  return q - p;
}

// \s*[\r\n]+ | \s+(?!\S) | \s+ — all three start in the same run of whitespace.
size_t whitespace(const Cursor& c, size_t p) {
  size_t run = 0, after_last_newline = 0;
  while (c.space(p + run)) {
    if (c.newline(p + run)) after_last_newline = run + 1;
    ++run;
  }
  if (after_last_newline > 0) return after_last_newline;  // \s* backs off to the last [\r\n]
  if (run > 1 && c.in(p + run)) return run - 1;           // leave one space for the next word
  return run;                                             // \s+ (or the run ends the text)
}

}  // namespace

BpeFlavor bpe_flavor(std::string_view pre, std::string_view origin) {
  for (const NamedFlavor& f : flavors())
    if (f.pre == pre) return f.flavor;
  std::string known;
  for (const NamedFlavor& f : flavors()) known += (known.empty() ? "" : ", ") + std::string(f.pre);
  fail(origin, ": key tokenizer.ggml.pre: BPE pre-tokenizer '", pre, "' is not supported; supported: ", known);
}

std::vector<std::string> split_words(SplitPattern pattern, std::string_view text) {
  const Cursor c(decode_utf8(text));
  const size_t max_digits = pattern == SplitPattern::Llama3 ? 3 : 1;
  std::vector<std::string> words;
  for (size_t p = 0; p < c.size();) {
    size_t n = contraction(c, p);
    if (n == 0) n = letters(c, p);
    if (n == 0) n = digits(c, p, max_digits);
    if (n == 0) n = symbols(c, p);
    if (n == 0) n = whitespace(c, p);
    if (n == 0) n = 1;  // unreachable: every code point is whitespace, a letter, a number or other
    std::string w;
    for (size_t i = p; i < p + n; ++i) append_utf8(w, c.code_points()[i]);
    words.push_back(std::move(w));
    p += n;
  }
  return words;
}

}  // namespace pfx::tok

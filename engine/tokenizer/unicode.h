// Code points for the BPE pre-tokenizers: UTF-8 decoding with llama.cpp's error rule, and the
// Unicode classes the split patterns ask for (\p{L}, \p{N}, \s), taken from ICU's character
// database (libicu), not from tables of our own.
#pragma once
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "util/utf8.h"

namespace pfx::tok {

constexpr char32_t kReplacementChar = 0xFFFD;

// Decodes UTF-8 to code points. A byte that does not start a well-formed sequence (a stray
// continuation byte, a lead byte without its continuation bytes, 0xF8..0xFF) becomes U+FFFD and
// decoding resumes at the next byte, as llama.cpp's unicode_cpts_from_utf8 does. Where llama.cpp
// keeps what it decodes from an overlong form, a surrogate or a value above U+10FFFF (the latter
// makes it throw later), we replace that lead byte by U+FFFD too: every code point returned is a
// Unicode scalar value.
std::vector<char32_t> decode_utf8(std::string_view text);

// Appends the UTF-8 encoding of a scalar value (base/util/utf8.h).
using pfx::append_utf8;

// UTF-8 bytes of the sequence a lead byte starts (1 for ASCII, continuation and invalid bytes, as
// llama.cpp's unicode_len_utf8, which both tokenizers use to split a word into characters).
size_t utf8_sequence_length(unsigned char lead);

// The classes of a code point the pre-tokenizer patterns test.
struct CharClass {
  bool letter = false;      // \p{L}: general category Lu, Ll, Lt, Lm or Lo
  bool number = false;      // \p{N}: Nd, Nl or No
  bool whitespace = false;  // \s: the Unicode White_Space property (what Python's and Rust's regex use)
};
CharClass classify(char32_t cp);

// Simple (one-to-one) lowercase mapping, e.g. for the case-insensitive contractions ('S, 'LL).
char32_t to_lower(char32_t cp);

// ICU's Unicode version ("15.0"), for test and error messages.
std::string unicode_version();

}  // namespace pfx::tok

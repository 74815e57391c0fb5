// GPT-2's byte-level alphabet: every byte of the text is spelled as one printable code point, so
// a byte-level BPE vocabulary (tokenizer.ggml.model = gpt2) holds no raw bytes or spaces. The
// bytes '!'..'~', U+00A1..U+00AC and U+00AE..U+00FF stand for themselves; the other 68 bytes
// (controls, space, DEL, NBSP, soft hyphen), in increasing order, become U+0100, U+0101, ...
// (space 0x20 → U+0120 "Ġ", newline 0x0A → U+010A "Ċ").
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace pfx::tok {

// The code point that spells byte b.
char32_t byte_to_code_point(uint8_t b);
// The byte a code point spells, or nullopt when it is not in the alphabet.
std::optional<uint8_t> code_point_to_byte(char32_t cp);

// Every byte of `bytes` spelled in the alphabet, as UTF-8.
std::string byte_encode(std::string_view bytes);

}  // namespace pfx::tok

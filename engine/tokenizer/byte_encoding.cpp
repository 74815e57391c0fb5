// GPT-2's byte-level alphabet (see byte_encoding.h).
#include "tokenizer/byte_encoding.h"

#include <array>

#include "tokenizer/unicode.h"

namespace pfx::tok {
namespace {

bool stands_for_itself(int b) { return (b >= '!' && b <= '~') || (b >= 0xA1 && b <= 0xAC) || (b >= 0xAE && b <= 0xFF); }

constexpr char32_t kSpelledEnd = 0x100 + 68;  // one past the last remapped byte's code point

struct Alphabet {
  std::array<char32_t, 256> spelling{};
  std::array<std::string, 256> utf8;
  std::array<int, kSpelledEnd> byte_of{};  // -1: the code point spells no byte
  Alphabet() {
    byte_of.fill(-1);
    char32_t next = 0x100;
    for (int b = 0; b < 256; ++b) {
      const char32_t cp = stands_for_itself(b) ? static_cast<char32_t>(b) : next++;
      spelling[static_cast<size_t>(b)] = cp;
      byte_of[cp] = b;
      append_utf8(utf8[static_cast<size_t>(b)], cp);
    }
  }
};

const Alphabet& alphabet() {
  static const Alphabet a;
  return a;
}

}  // namespace

char32_t byte_to_code_point(uint8_t b) { return alphabet().spelling[b]; }

std::optional<uint8_t> code_point_to_byte(char32_t cp) {
  if (cp >= kSpelledEnd || alphabet().byte_of[cp] < 0) return std::nullopt;
  return static_cast<uint8_t>(alphabet().byte_of[cp]);
}

std::string byte_encode(std::string_view bytes) {
  std::string out;
  out.reserve(bytes.size() * 2);
  for (char ch : bytes) out += alphabet().utf8[static_cast<unsigned char>(ch)];
  return out;
}

}  // namespace pfx::tok

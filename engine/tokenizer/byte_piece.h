// Byte-fallback pieces: SentencePiece spells the token for raw byte 0xHH as "<0xHH>".
#pragma once
#include <cstdint>
#include <string>
#include <string_view>

namespace pfx::tok {

// "<0x0A>" for 10: upper-case hex, the spelling llama.cpp looks up when it falls back to bytes.
inline std::string byte_piece(uint8_t b) {
  static constexpr char kHex[] = "0123456789ABCDEF";
  return std::string{'<', '0', 'x', kHex[b >> 4], kHex[b & 15], '>'};
}

// The byte a "<0xHH>" piece stands for (either hex case, as llama.cpp's strtol reads it);
// -1 when the piece is not spelled that way.
inline int parse_byte_piece(std::string_view p) {
  if (p.size() != 6 || p.substr(0, 3) != "<0x" || p[5] != '>') return -1;
  auto digit = [](char c) -> int {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    return -1;
  };
  const int hi = digit(p[3]), lo = digit(p[4]);
  return (hi < 0 || lo < 0) ? -1 : hi * 16 + lo;
}

}  // namespace pfx::tok

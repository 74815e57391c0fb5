// UTF-8 decoding and ICU-backed character classes (see unicode.h).
#include "tokenizer/unicode.h"

#include <unicode/uchar.h>
#include <unicode/uversion.h>

namespace pfx::tok {

size_t utf8_sequence_length(unsigned char lead) {
  if (lead < 0xC0) return 1;  // ASCII, or a continuation byte standing alone
  if (lead < 0xE0) return 2;
  if (lead < 0xF0) return 3;
  return 4;
}

std::vector<char32_t> decode_utf8(std::string_view s) {
  std::vector<char32_t> out;
  out.reserve(s.size());
  size_t i = 0;
  while (i < s.size()) {
    const auto lead = static_cast<unsigned char>(s[i]);
    if (lead < 0x80) {
      out.push_back(lead);
      ++i;
      continue;
    }
    // Lead byte → sequence length and the smallest value it may encode (shorter forms are overlong).
    size_t len = 0;
    char32_t cp = 0, min = 0;
    if (lead >= 0xC0 && lead < 0xE0) {
      len = 2, cp = lead & 0x1F, min = 0x80;
    } else if (lead >= 0xE0 && lead < 0xF0) {
      len = 3, cp = lead & 0x0F, min = 0x800;
    } else if (lead >= 0xF0 && lead < 0xF8) {
      len = 4, cp = lead & 0x07, min = 0x10000;
    }
    bool ok = len != 0 && i + len <= s.size();
    for (size_t k = 1; ok && k < len; ++k) {
      const auto c = static_cast<unsigned char>(s[i + k]);
      ok = (c & 0xC0) == 0x80;
      cp = (cp << 6) | (c & 0x3F);
    }
    ok = ok && cp >= min && cp <= 0x10FFFF && !(cp >= 0xD800 && cp <= 0xDFFF);
    if (ok) {
      out.push_back(cp);
      i += len;
    } else {
      out.push_back(kReplacementChar);
      ++i;
    }
  }
  return out;
}

CharClass classify(char32_t cp) {
  const auto c = static_cast<UChar32>(cp);
  const uint32_t mask = U_GET_GC_MASK(c);
  CharClass k;
  k.letter = (mask & U_GC_L_MASK) != 0;
  k.number = (mask & U_GC_N_MASK) != 0;
  k.whitespace = u_isUWhiteSpace(c) != 0;
  return k;
}

char32_t to_lower(char32_t cp) { return static_cast<char32_t>(u_tolower(static_cast<UChar32>(cp))); }

std::string unicode_version() { return U_UNICODE_VERSION; }

}  // namespace pfx::tok

// Escaping of untrusted bytes for messages and reports (see escape.h).
#include "util/escape.h"

#include <cstdint>
#include <cstdio>

namespace pfx {
namespace {

// Length of the valid UTF-8 sequence starting at s[i] and its code point; 0 if invalid
// (overlong forms, surrogates and values past U+10FFFF are invalid, as in RFC 3629).
size_t utf8_sequence(std::string_view s, size_t i, uint32_t* cp) {
  const auto b = [&](size_t k) { return static_cast<unsigned char>(s[i + k]); };
  const unsigned char c = b(0);
  size_t len = 0;
  uint32_t v = 0, min = 0;
  if (c < 0x80) {
    *cp = c;
    return 1;
  } else if ((c & 0xE0) == 0xC0) {
    len = 2, v = c & 0x1F, min = 0x80;
  } else if ((c & 0xF0) == 0xE0) {
    len = 3, v = c & 0x0F, min = 0x800;
  } else if ((c & 0xF8) == 0xF0) {
    len = 4, v = c & 0x07, min = 0x10000;
  } else {
    return 0;
  }
  if (i + len > s.size()) return 0;
  for (size_t k = 1; k < len; ++k) {
    if ((b(k) & 0xC0) != 0x80) return 0;
    v = (v << 6) | (b(k) & 0x3F);
  }
  if (v < min || v > 0x10FFFF || (v >= 0xD800 && v <= 0xDFFF)) return 0;
  *cp = v;
  return len;
}

// Code points a terminal acts on or that reorder what the reader sees: C0, DEL, C1, and the
// bidirectional embedding/override/isolate controls (the "Trojan Source" set) plus LRM/RLM/ALM.
bool is_control(uint32_t cp) {
  return cp < 0x20 || (cp >= 0x7F && cp <= 0x9F) || cp == 0x061C || cp == 0x200E || cp == 0x200F ||
         (cp >= 0x202A && cp <= 0x202E) || (cp >= 0x2066 && cp <= 0x2069);
}

void append_byte_escape(std::string& out, unsigned char c) {
  char buf[5];
  std::snprintf(buf, sizeof buf, "\\x%02x", c);
  out += buf;
}

std::string escape(std::string_view s, bool one_line) {
  std::string out;
  out.reserve(s.size());
  for (size_t i = 0; i < s.size();) {
    uint32_t cp = 0;
    const size_t len = utf8_sequence(s, i, &cp);
    if (len == 0) {
      append_byte_escape(out, static_cast<unsigned char>(s[i]));
      ++i;
      continue;
    }
    if (one_line && (cp == '\\' || cp == '\'')) {
      out += '\\';
      out += static_cast<char>(cp);
    } else if (!one_line && (cp == '\n' || cp == '\t')) {
      out += static_cast<char>(cp);
    } else if (is_control(cp)) {
      if (cp < 0x80) {
        append_byte_escape(out, static_cast<unsigned char>(cp));
      } else {
        char buf[12];
        std::snprintf(buf, sizeof buf, "\\u{%04x}", static_cast<unsigned>(cp));
        out += buf;
      }
    } else {
      out.append(s.data() + i, len);
    }
    i += len;
  }
  return out;
}

}  // namespace

std::string escape_control(std::string_view text) { return escape(text, false); }

std::string quote_untrusted(std::string_view text) { return "'" + escape(text, true) + "'"; }

std::string markdown_cell(std::string_view text) {
  std::string out;
  for (const char c : escape(text, false)) {
    if (c == '|') out += "\\|";
    else if (c == '\n') out += "<br>";
    else if (c == '\t') out += ' ';
    else out += c;
  }
  return out;
}

bool is_safe_to_print(std::string_view text) { return escape_control(text) == text; }

}  // namespace pfx

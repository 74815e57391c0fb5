// UTF-8 encoding of one code point, for the tokenizer's byte-level vocabularies and the tracer's
// wide NVTX strings (wchar_t is UTF-32 on Linux).
#pragma once
#include <string>

namespace pfx {

// Appends `cp` as 1 to 4 bytes; a value above U+10FFFF (no code point) is written as '?'.
void append_utf8(std::string& out, char32_t cp);

}  // namespace pfx

// Untrusted bytes made safe to print: names, keys and strings from model files and profiles, and
// the output of other processes, shown in terminal messages and reports. Nothing that reaches a
// terminal can move the cursor, retitle the window, ring the bell or reorder text: C0/C1 control
// characters, DEL, invalid UTF-8 and bidirectional-override code points are written as escapes;
// printable ASCII and other valid UTF-8 pass unchanged.
//
//   fail(path, ": tensor ", quote_untrusted(name), " not found");   // 'blk.0\x1b[2J'
//   std::cerr << escape_control(error.what());                       // keeps line breaks
#pragma once
#include <string>
#include <string_view>

namespace pfx {

// Escapes every control character except '\n' and '\t' (\xNN for bytes, \u{NNNN} for code
// points), invalid UTF-8 byte by byte as \xNN, and bidi overrides; for whole messages.
std::string escape_control(std::string_view text);

// The same, but also '\n', '\t', '\\' and '\'' are escaped, and the result is wrapped in single
// quotes: one field on one line whose end the reader can see.
std::string quote_untrusted(std::string_view text);

// For one Markdown table cell or inline span (reports, index.md): escape_control(), then '|'
// backslash-escaped, line breaks as "<br>" and tabs as spaces, so a field can neither end its
// cell nor start a new line.
std::string markdown_cell(std::string_view text);

// True when escape_control(text) == text.
bool is_safe_to_print(std::string_view text);

}  // namespace pfx

// Escaping of untrusted bytes (util/escape.h): terminal controls, invalid UTF-8 and bidi
// overrides never pass through; printable ASCII and valid UTF-8 do.
#include <gtest/gtest.h>

#include "util/escape.h"

using pfx::escape_control;
using pfx::markdown_cell;
using pfx::quote_untrusted;

TEST(Escape, PrintableTextPassesUnchanged) {
  EXPECT_EQ(escape_control("blk.0.attn_q.weight: expected [64, 64]"), "blk.0.attn_q.weight: expected [64, 64]");
  EXPECT_EQ(escape_control("\xe2\x96\x81hello \xe4\xb8\xad"), "\xe2\x96\x81hello \xe4\xb8\xad");  // ▁hello 中
  EXPECT_EQ(escape_control("two\nlines\tand a tab"), "two\nlines\tand a tab");
  EXPECT_TRUE(pfx::is_safe_to_print("plain"));
}

TEST(Escape, TerminalControlsAreEscaped) {
  EXPECT_EQ(escape_control("a\x1b[2Jb"), "a\\x1b[2Jb");         // clear screen
  EXPECT_EQ(escape_control("\x1b]0;owned\x07"), "\\x1b]0;owned\\x07");  // window title + BEL
  EXPECT_EQ(escape_control("cr\rover"), "cr\\x0dover");
  EXPECT_EQ(escape_control(std::string("nul\0x", 5)), "nul\\x00x");
  EXPECT_EQ(escape_control("del\x7f"), "del\\x7f");
  EXPECT_EQ(escape_control("c1\xc2\x9b" "31m"), "c1\\u{009b}31m");  // C1 CSI as UTF-8
  EXPECT_FALSE(pfx::is_safe_to_print("\x1b[31m"));
}

TEST(Escape, InvalidUtf8IsEscapedBytewise) {
  EXPECT_EQ(escape_control("\xff\xfe"), "\\xff\\xfe");
  EXPECT_EQ(escape_control("\xc0\xaf"), "\\xc0\\xaf");          // overlong '/'
  EXPECT_EQ(escape_control("\xed\xa0\x80"), "\\xed\\xa0\\x80");  // a surrogate
  EXPECT_EQ(escape_control("cut\xe2\x96"), "cut\\xe2\\x96");     // truncated sequence
}

TEST(Escape, BidiOverridesAreEscaped) {
  EXPECT_EQ(escape_control("a\xe2\x80\xae" "b"), "a\\u{202e}b");  // RIGHT-TO-LEFT OVERRIDE
  EXPECT_EQ(escape_control("\xe2\x81\xa6x"), "\\u{2066}x");        // LEFT-TO-RIGHT ISOLATE
}

TEST(Escape, QuotedFieldsStayOnOneLine) {
  EXPECT_EQ(quote_untrusted("blk.0.attn_q.weight"), "'blk.0.attn_q.weight'");
  EXPECT_EQ(quote_untrusted("a\nprefill: error: forged"), "'a\\x0aprefill: error: forged'");
  EXPECT_EQ(quote_untrusted("it's \\ here"), "'it\\'s \\\\ here'");
  EXPECT_EQ(quote_untrusted("tab\t"), "'tab\\x09'");
}

TEST(Escape, MarkdownCellsKeepTheirTableAndLine) {
  EXPECT_EQ(markdown_cell("HEAD~1"), "HEAD~1");
  EXPECT_EQ(markdown_cell("a|b\nc\td"), "a\\|b<br>c d");
  EXPECT_EQ(markdown_cell("rev\x1b]0;title\x07"), "rev\\x1b]0;title\\x07");
  EXPECT_EQ(markdown_cell("h\xc2\x9b" "6n"), "h\\u{009b}6n");  // C1 CSI
}

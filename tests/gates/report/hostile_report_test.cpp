// Reports under hostile input and a full disk (issue 12, items 5 and 6): fields a candidate's run
// controls (its rev, the host name, gate reasons) reach landing.md, landing.html, junit.xml,
// index.md and the checklist with no terminal control bytes and without breaking the Markdown
// structure; every report write is crash-safe: with the file size limited (RLIMIT_FSIZE, as a
// full disk: writes fail with EFBIG) `landing report` exits non-zero and the old files are intact.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "util/process.h"
#include "report/checklist.h"
#include "report/html.h"
#include "report/junit_out.h"
#include "report/ledger.h"
#include "report/markdown.h"
#include "sample_record.h"
#include "temp_dir.h"

using namespace pfx;
using namespace pfx::gates;
namespace fs = std::filesystem;

namespace {

std::string slurp(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// Bytes a terminal acts on: C0 except \n and \t, DEL, the C1 range as UTF-8 (C2 80..9F), and the
// bidi overrides U+202A..202E as UTF-8 (E2 80 AA..AE).
std::string first_control(const std::string& text) {
  for (size_t i = 0; i < text.size(); ++i) {
    const auto c = static_cast<unsigned char>(text[i]);
    const auto next = i + 1 < text.size() ? static_cast<unsigned char>(text[i + 1]) : 0;
    const auto third = i + 2 < text.size() ? static_cast<unsigned char>(text[i + 2]) : 0;
    if ((c < 0x20 && c != '\n' && c != '\t') || c == 0x7f || (c == 0xc2 && next >= 0x80 && next <= 0x9f) ||
        (c == 0xe2 && next == 0x80 && third >= 0xaa && third <= 0xae))
      return "byte " + std::to_string(i) + ": ..." + text.substr(i > 20 ? i - 20 : 0, 40) + "...";
  }
  return "";
}

// The sample record with every field a candidate controls poisoned.
LandingRecord hostile_record() {
  LandingRecord r = sample_record();
  r.candidate["rev"] = "main\x1b[2J\x1b]0;owned\x07 | evil\nline";
  r.candidate["sha"] = "f2b9e54a\x1b[31maaaabbbbcccc";
  r.environment["host"] = "ci-1\x1b[H\xc2\x9b" "6n\u202e";
  r.environment["os"] = "Linux\r\x1b[K";
  for (auto& g : r.gates) {
    g.reason = "bad \x1b[1;31mred\x1b[0m reason\x7f";
    for (auto& c : g.checks) c.reason += "\x1b[2K";
  }
  return r;
}

}  // namespace

TEST(HostileReport, NoControlBytesInAnyRendering) {
  const LandingRecord r = hostile_record();
  const std::string md = render_markdown(r), html = render_html(r), junit = render_junit(r), list = render_checklist(r);
  EXPECT_EQ(first_control(md), "") << "landing.md";
  EXPECT_EQ(first_control(html), "") << "landing.html";
  EXPECT_EQ(first_control(junit), "") << "junit.xml";
  EXPECT_EQ(first_control(list), "") << "checklist";
  // The escapes are visible, so a reviewer sees that something odd was there.
  EXPECT_NE(md.find("main\\x1b[2J"), std::string::npos) << md;
  // The rev's '|' and line break cannot end the cell or start a Markdown line of their own.
  EXPECT_NE(md.find("\\| evil<br>line"), std::string::npos) << md;
  EXPECT_EQ(md.find("\nline"), std::string::npos);

  const pfx::test::TempDir tmp("hostile_index");
  const fs::path& dir = tmp.path();
  append_to_ledger(dir, r);
  const std::string index = slurp(dir / "index.md");
  EXPECT_EQ(first_control(index), "") << index;
  EXPECT_NE(index.find("(main\\x1b[2J\\x1b]0;owned\\x07 \\| evil<br>line)"), std::string::npos) << index;
}

// A full disk while `landing report` re-renders: the exit code says so, and landing.json,
// landing.md and the index are byte for byte what they were.
TEST(HostileReport, FullDiskKeepsTheOldReport) {
  const pfx::test::TempDir tmp("full_disk");
  const fs::path& dir = tmp.path();
  append_to_ledger(dir, sample_record());
  const std::vector<fs::path> files = {dir / "abcdef0" / "landing.json", dir / "abcdef0" / "landing.md", dir / "abcdef0" / "landing.html",
                                       dir / "index.json", dir / "index.md"};
  std::vector<std::string> before;
  for (const auto& f : files) before.push_back(slurp(f));
  ASSERT_GT(before[2].size(), 4096u);  // the HTML is larger than the limit below

  // bash: SIGXFSZ ignored (so writes fail with EFBIG instead of killing landing), 4 KiB files.
  ProcessSpec spec;
  spec.argv = {"bash", "-c", "trap '' XFSZ; ulimit -f 4; exec \"$0\" \"$@\"", PFX_LANDING_EXE, "report", "abcdef0", "--out", dir.string()};
  spec.timeout_s = 60;
  const ProcessResult full = run_process(spec);
  EXPECT_NE(full.exit_code, 0) << full.out << full.err;
  EXPECT_NE(full.err.find("the target is unchanged"), std::string::npos) << full.err;
  for (size_t i = 0; i < files.size(); ++i) EXPECT_EQ(slurp(files[i]), before[i]) << files[i];
  size_t leftovers = 0;  // no temporary file stays behind
  for (const auto& e : fs::recursive_directory_iterator(dir))
    if (e.path().filename().string().find(".tmp.") != std::string::npos) ++leftovers;
  EXPECT_EQ(leftovers, 0u);

  // With room, the same command succeeds.
  spec.argv = {PFX_LANDING_EXE, "report", "abcdef0", "--out", dir.string()};
  const ProcessResult ok = run_process(spec);
  EXPECT_EQ(ok.exit_code, 0) << ok.err;
}

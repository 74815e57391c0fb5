// Crash-safe writes (util/atomic_file.h): the target appears whole or not at all. A full disk is
// simulated with RLIMIT_FSIZE in a child process (writes past the limit fail with EFBIG), so the
// test needs no special file system and works as root.
#include <gtest/gtest.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <csignal>
#include <functional>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "file_text.h"
#include "util/atomic_file.h"
#include "util/error.h"
#include "util/npy.h"
#include "temp_dir.h"

namespace fs = std::filesystem;

namespace {

class AtomicFileTest : public pfx::test::TempDirTest {
 protected:

  // Files in the folder other than `keep` (a leftover temporary file would show here).
  size_t entries() const { return static_cast<size_t>(std::distance(fs::directory_iterator(root_), {})); }

  // Runs fn in a child whose file size limit is `limit` bytes; returns the child's exit code
  // (0: fn returned, 1: fn threw pfx::Error, 2: another exception).
  static int with_file_size_limit(rlim_t limit, const std::function<void()>& fn) {
    const pid_t pid = ::fork();
    if (pid == 0) {
      std::signal(SIGXFSZ, SIG_IGN);  // the write then fails with EFBIG instead of killing us
      const rlimit rl{limit, limit};
      ::setrlimit(RLIMIT_FSIZE, &rl);
      int code = 0;
      try {
        fn();
      } catch (const pfx::Error&) {
        code = 1;
      } catch (...) {
        code = 2;
      }
      ::_exit(code);
    }
    int status = 0;
    ::waitpid(pid, &status, 0);
    return WIFEXITED(status) ? WEXITSTATUS(status) : 100 + WTERMSIG(status);
  }
};

}  // namespace

TEST_F(AtomicFileTest, WritesAndReplaces) {
  const fs::path p = root_ / "out.json";
  pfx::write_file_atomic(p, "first");
  EXPECT_EQ(pfx::test::file_text(p), "first");
  pfx::write_file_atomic(p, "second, longer");
  EXPECT_EQ(pfx::test::file_text(p), "second, longer");
  EXPECT_EQ(entries(), 1u);  // no temporary file left behind
}

TEST_F(AtomicFileTest, LargeAndSmallWritesKeepTheirOrder) {
  const fs::path p = root_ / "big.bin";
  std::string big(3 << 20, 'x');
  pfx::AtomicFile out(p);
  out.write("head");
  out.write(big);
  out.write("tail");
  out.commit();
  EXPECT_EQ(pfx::test::file_text(p), "head" + big + "tail");
}

TEST_F(AtomicFileTest, WithoutCommitNothingChanges) {
  const fs::path p = root_ / "keep.txt";
  pfx::write_file_atomic(p, "original");
  {
    pfx::AtomicFile out(p);
    out.write("half-written replacement");
    EXPECT_TRUE(fs::exists(out.temp_path()));
    EXPECT_EQ(out.temp_path().parent_path(), p.parent_path());  // same folder: rename is atomic
  }  // destroyed uncommitted: as if the process had died here
  EXPECT_EQ(pfx::test::file_text(p), "original");
  EXPECT_EQ(entries(), 1u);
}

TEST_F(AtomicFileTest, TemporaryNamesAreUnique) {
  const fs::path p = root_ / "same.txt";
  pfx::AtomicFile a(p), b(p);
  EXPECT_NE(a.temp_path(), b.temp_path());
}

TEST_F(AtomicFileTest, FullDiskLeavesTheOldFileIntactAndSaysSo) {
  const fs::path p = root_ / "landing.json";
  pfx::write_file_atomic(p, "the previous report");
  const int code = with_file_size_limit(4096, [&] { pfx::write_file_atomic(p, std::string(1 << 20, 'y')); });
  EXPECT_EQ(code, 1) << "the write past the limit must throw pfx::Error";
  EXPECT_EQ(pfx::test::file_text(p), "the previous report");
  EXPECT_EQ(entries(), 1u);
  // The same through write_npy, which --out of `prefill logits` uses.
  const fs::path npy = root_ / "logits.npy";
  const std::vector<float> small(4, 1.0f), large(1 << 18, 2.0f);
  pfx::write_npy(npy, small.data(), {1, 4});
  const std::string before = pfx::test::file_text(npy);
  EXPECT_EQ(with_file_size_limit(4096, [&] { pfx::write_npy(npy, large.data(), {1, 1 << 18}); }), 1);
  EXPECT_EQ(pfx::test::file_text(npy), before);
}

TEST_F(AtomicFileTest, RefuseDoesNotOverwrite) {
  const fs::path p = root_ / "mine.txt";
  pfx::write_file_atomic(p, "user data");
  EXPECT_THROW(pfx::write_file_atomic(p, "x", pfx::Replace::Refuse), pfx::Error);
  // A file that appears between the check and the commit is not overwritten either.
  const fs::path q = root_ / "race.txt";
  pfx::AtomicFile out(q, pfx::Replace::Refuse);
  out.write("late");
  pfx::write_file_atomic(q, "arrived first");
  EXPECT_THROW(out.commit(), pfx::Error);
  EXPECT_EQ(pfx::test::file_text(q), "arrived first");
}

TEST_F(AtomicFileTest, FailuresNameTheFile) {
  try {
    pfx::write_file_atomic(root_ / "no-such-folder" / "x.json", "x");
    FAIL() << "expected an error";
  } catch (const pfx::Error& e) {
    EXPECT_NE(std::string(e.what()).find("no-such-folder/x.json"), std::string::npos) << e.what();
  }
  // Renaming over a non-empty folder fails: the folder and its content stay.
  const fs::path d = root_ / "a-folder";
  fs::create_directories(d / "inside");
  EXPECT_THROW(pfx::write_file_atomic(d, "x"), pfx::Error);
  EXPECT_TRUE(fs::is_directory(d / "inside"));
}

TEST_F(AtomicFileTest, KeepsPermissionBits) {
  const fs::path p = root_ / "script.sh";
  pfx::write_file_atomic(p, "#!/bin/sh\n");
  fs::permissions(p, fs::perms::owner_all, fs::perm_options::replace);
  pfx::write_file_atomic(p, "#!/bin/sh\necho hi\n");
  EXPECT_EQ(fs::status(p).permissions() & fs::perms::all, fs::perms::owner_all);
}

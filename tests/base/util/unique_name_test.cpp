// Per-run scratch (util/unique_name.h) and the build lock (util/file_lock.h), issue 12 item 5:
// two runs in the same second get different folders; a lock held by one process makes another
// wait, and a dead holder releases it.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <csignal>
#include <filesystem>
#include <memory>
#include <set>
#include <thread>

#include "util/file_lock.h"
#include "util/unique_name.h"

namespace fs = std::filesystem;

namespace {
fs::path scratch(const std::string& what) {
  const fs::path d = fs::temp_directory_path() / ("pfx_unique_" + what + "_" + std::to_string(::getpid()));
  fs::remove_all(d);
  return d;
}
}  // namespace

TEST(UniqueName, SameStemSameSecondDifferentFolders) {
  const fs::path root = scratch("dirs");
  std::set<fs::path> made;
  for (int i = 0; i < 64; ++i) {
    const fs::path d = pfx::create_unique_directory(root / "work", "abc123-1700000000");
    EXPECT_TRUE(fs::is_directory(d));
    EXPECT_EQ(d.filename().string().rfind("abc123-1700000000-" + std::to_string(::getpid()) + "-", 0), 0u) << d;
    made.insert(d);
  }
  EXPECT_EQ(made.size(), 64u);
  // Another process (same second, same stem) never gets one of ours either.
  const pid_t pid = ::fork();
  if (pid == 0) {
    const fs::path d = pfx::create_unique_directory(root / "work", "abc123-1700000000");
    ::_exit(made.count(d) ? 1 : 0);
  }
  int status = 0;
  ::waitpid(pid, &status, 0);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  fs::remove_all(root);
}

TEST(FileLock, SecondHolderWaitsUntilTheFirstIsGone) {
  const fs::path root = scratch("lock");
  fs::create_directories(root);
  const fs::path lock = root / "build-abc.lock";
  std::atomic<bool> waited{false}, acquired{false};
  auto first = std::make_unique<pfx::FileLock>(lock);
  EXPECT_TRUE(pfx::FileLock::held_elsewhere(lock));
  std::thread second([&] {
    const pfx::FileLock again(lock, [&] { waited = true; });  // a separate open: a separate lock
    acquired = true;
  });
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
  EXPECT_FALSE(acquired.load()) << "the second holder did not wait";
  first.reset();  // lets `second` in
  second.join();
  EXPECT_TRUE(waited.load());
  EXPECT_TRUE(acquired.load());

  // A holder that dies (crashes, is killed) releases the lock with its descriptors.
  const pid_t pid = ::fork();
  if (pid == 0) {
    const pfx::FileLock held(lock);
    ::pause();
    ::_exit(0);
  }
  for (int i = 0; i < 100 && !pfx::FileLock::held_elsewhere(lock); ++i) std::this_thread::sleep_for(std::chrono::milliseconds(10));
  EXPECT_TRUE(pfx::FileLock::held_elsewhere(lock));
  ::kill(pid, SIGKILL);
  ::waitpid(pid, nullptr, 0);
  EXPECT_FALSE(pfx::FileLock::held_elsewhere(lock));
  fs::remove_all(root);
}

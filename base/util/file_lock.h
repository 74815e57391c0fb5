// An exclusive advisory lock (flock(2)) on a lock file, held for the owner's lifetime: one
// landing run at a time builds into .landing/build/<id>, appends to a reports ledger, and so on.
// The kernel releases the lock when the process dies, so a crashed run never leaves it held.
//
//   pfx::FileLock lock(dir.string() + ".lock", [&] { say("waiting for another run's build"); });
#pragma once
#include <filesystem>
#include <functional>

namespace pfx {

class FileLock {
 public:
  // Creates `path` if needed and locks it, blocking until the lock is free; `on_wait` (if set)
  // is called once first when another holder makes us wait. Throws pfx::Error naming the file.
  explicit FileLock(const std::filesystem::path& path, const std::function<void()>& on_wait = {});
  FileLock(const FileLock&) = delete;  // owns the descriptor whose close releases the lock
  FileLock& operator=(const FileLock&) = delete;
  ~FileLock();

  // Without blocking: true when another open file description holds `path` locked now.
  static bool held_elsewhere(const std::filesystem::path& path);

 private:
  int fd_ = -1;
};

}  // namespace pfx

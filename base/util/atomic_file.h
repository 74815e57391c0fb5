// Crash-safe file writes: the one way the engine and the gates write a user's file or the ledger.
// Bytes go to a temporary file with a unique name in the target's own folder
// (".<name>.tmp.<pid>-<random>", util/unique_name.h); every write and the close are checked, the file is fsync'ed,
// renamed over the target, and the folder is fsync'ed. On any failure (full disk, I/O error, a
// crash before commit) the target is exactly as it was, the temporary file is removed and a
// pfx::Error names the file and the step that failed.
//
//   pfx::AtomicFile out("logits.npy");
//   out.write(header); out.write(data, n_bytes);
//   out.commit();                     // without commit(), the destructor discards everything
//   pfx::write_file_atomic("landing.json", text);
#pragma once
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <string_view>
#include <vector>

namespace pfx {

// Whether commit() may replace an existing target. Refuse is race-free (rename without replace):
// a file that appears after the check is still not overwritten.
enum class Replace { Allow, Refuse };

class AtomicFile {
 public:
  // Creates the temporary file; throws pfx::Error when it cannot (folder missing, not writable).
  // With Replace::Refuse an existing target is refused here already.
  explicit AtomicFile(std::filesystem::path target, Replace replace = Replace::Allow);
  AtomicFile(const AtomicFile&) = delete;             // owns a descriptor and a temporary file
  AtomicFile& operator=(const AtomicFile&) = delete;
  ~AtomicFile();                                      // not committed: close and remove the temp

  void write(const void* data, size_t n);
  void write(std::string_view text) { write(text.data(), text.size()); }
  uint64_t bytes_written() const { return written_; }

  // Flush, fsync, close, rename over the target (keeping an existing target's permission bits),
  // fsync the folder. Throws pfx::Error naming the failed step; before the rename, the target is
  // untouched.
  void commit();

  const std::filesystem::path& target() const { return target_; }
  const std::filesystem::path& temp_path() const { return temp_; }

 private:
  void flush_buffer();
  void write_all(const void* data, size_t n);
  [[noreturn]] void fail_step(const char* step, int err) const;

  std::filesystem::path target_, temp_;
  Replace replace_;
  int fd_ = -1;
  bool committed_ = false;
  uint64_t written_ = 0;
  std::vector<char> buffer_;  // small writes gather here; flushed at capacity and on commit
};

// The whole file at once: AtomicFile + write + commit.
void write_file_atomic(const std::filesystem::path& target, std::string_view contents,
                       Replace replace = Replace::Allow);

}  // namespace pfx

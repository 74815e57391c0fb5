// Crash-safe writes (see atomic_file.h): temp file beside the target, checked writes, fsync,
// rename, fsync of the folder.
#include "util/atomic_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <string>

#include "util/error.h"
#include "util/unique_name.h"

namespace pfx {
namespace {

constexpr size_t kBufferBytes = size_t{1} << 20;  // writes smaller than this are gathered

std::filesystem::path folder_of(const std::filesystem::path& p) {
  return p.has_parent_path() ? p.parent_path() : std::filesystem::path(".");
}

void sync_folder(const std::filesystem::path& target) {
  const std::filesystem::path dir = folder_of(target);
  const int dfd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dfd < 0) {
    fail(target.string(), ": written and renamed, but opening its folder ", dir.string(),
         " to sync it failed: ", std::strerror(errno));
  }
  const int rc = ::fsync(dfd);
  const int err = errno;
  ::close(dfd);
  // EINVAL: the file system cannot sync directories (some FUSE mounts); nothing more to do there.
  if (rc != 0 && err != EINVAL) {
    fail(target.string(), ": written and renamed, but syncing its folder ", dir.string(),
         " failed: ", std::strerror(err));
  }
}

}  // namespace

AtomicFile::AtomicFile(std::filesystem::path target, Replace replace)
    : target_(std::move(target)), replace_(replace) {
  if (target_.filename().empty()) fail(target_.string(), ": not a file name");
  if (replace_ == Replace::Refuse && std::filesystem::exists(target_)) {
    fail(target_.string(), ": exists; refusing to overwrite it");
  }
  temp_ = folder_of(target_) / ("." + target_.filename().string() + ".tmp." + unique_suffix());
  fd_ = ::open(temp_.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
  if (fd_ < 0) {
    fail(target_.string(), ": cannot create the temporary file ", temp_.string(), ": ", std::strerror(errno));
  }
  buffer_.reserve(kBufferBytes);
}

AtomicFile::~AtomicFile() {
  if (fd_ >= 0) ::close(fd_);
  if (!committed_) ::unlink(temp_.c_str());
}

void AtomicFile::fail_step(const char* step, int err) const {
  fail(target_.string(), ": ", step, " the temporary file ", temp_.string(), " failed after ", written_,
       " bytes: ", std::strerror(err), " (the target is unchanged)");
}

void AtomicFile::write_all(const void* data, size_t n) {
  const char* p = static_cast<const char*>(data);
  while (n > 0) {
    const ssize_t k = ::write(fd_, p, n);
    if (k < 0) {
      if (errno == EINTR) continue;
      fail_step("writing", errno);
    }
    if (k == 0) fail_step("writing", EIO);
    p += k;
    n -= static_cast<size_t>(k);
  }
}

void AtomicFile::flush_buffer() {
  if (buffer_.empty()) return;
  write_all(buffer_.data(), buffer_.size());
  buffer_.clear();
}

void AtomicFile::write(const void* data, size_t n) {
  if (fd_ < 0) fail(target_.string(), ": write after commit");
  if (n == 0) return;
  if (buffer_.size() + n > kBufferBytes) flush_buffer();
  if (n >= kBufferBytes) {
    write_all(data, n);
  } else {
    const char* p = static_cast<const char*>(data);
    buffer_.insert(buffer_.end(), p, p + n);
  }
  written_ += n;
}

void AtomicFile::commit() {
  if (fd_ < 0) fail(target_.string(), ": committed twice");
  flush_buffer();
  // Keep an existing target's permission bits (an executable script stays executable).
  struct stat st {};
  if (::stat(target_.c_str(), &st) == 0 && S_ISREG(st.st_mode)) ::fchmod(fd_, st.st_mode & 07777);
  if (::fsync(fd_) != 0) fail_step("syncing", errno);
  const int rc = ::close(fd_);
  fd_ = -1;
  if (rc != 0) fail_step("closing", errno);
  if (replace_ == Replace::Refuse) {
    // renameat2(RENAME_NOREPLACE) is atomic; where the file system lacks it, link() refuses an
    // existing name just as well.
    if (::renameat2(AT_FDCWD, temp_.c_str(), AT_FDCWD, target_.c_str(), RENAME_NOREPLACE) != 0) {
      int err = errno;
      if (err == EINVAL || err == ENOSYS) {
        err = ::link(temp_.c_str(), target_.c_str()) == 0 ? 0 : errno;
        if (err == 0) ::unlink(temp_.c_str());
      }
      if (err == EEXIST) fail(target_.string(), ": exists; refusing to overwrite it");
      if (err != 0) fail_step("renaming into place", err);
    }
  } else if (::rename(temp_.c_str(), target_.c_str()) != 0) {
    fail_step("renaming into place", errno);
  }
  committed_ = true;
  sync_folder(target_);
}

void write_file_atomic(const std::filesystem::path& target, std::string_view contents, Replace replace) {
  AtomicFile out(target, replace);
  out.write(contents);
  out.commit();
}

}  // namespace pfx

// Unique names for temporary files and scratch folders (see unique_name.h).
#include "util/unique_name.h"

#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <ctime>

#include "util/error.h"

namespace pfx {

std::string unique_suffix() {
  uint64_t r = 0;
  if (::getrandom(&r, sizeof r, 0) != static_cast<ssize_t>(sizeof r)) {
    // getrandom cannot fail for 8 bytes once the pool is ready; mix the clock in anyway.
    timespec ts{};
    ::clock_gettime(CLOCK_MONOTONIC, &ts);
    r = static_cast<uint64_t>(ts.tv_nsec) ^ (static_cast<uint64_t>(ts.tv_sec) << 32) ^ reinterpret_cast<uintptr_t>(&r);
  }
  char buf[40];
  std::snprintf(buf, sizeof buf, "%ld-%016llx", static_cast<long>(::getpid()), static_cast<unsigned long long>(r));
  return buf;
}

std::filesystem::path create_unique_directory(const std::filesystem::path& parent, const std::string& stem) {
  std::error_code ec;
  std::filesystem::create_directories(parent, ec);
  if (ec) fail(parent.string(), ": cannot create the folder: ", ec.message());
  for (int attempt = 0; attempt < 16; ++attempt) {
    const std::filesystem::path dir = parent / (stem + "-" + unique_suffix());
    if (::mkdir(dir.c_str(), 0777) == 0) return dir;
    if (errno != EEXIST) fail(dir.string(), ": cannot create the scratch folder: ", std::strerror(errno));
  }
  fail(parent.string(), ": no fresh scratch folder name after 16 attempts (is getrandom broken?)");
}

}  // namespace pfx

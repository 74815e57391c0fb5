// A fresh empty directory under the system temp dir, removed when it goes: the one scratch folder
// every test and fixture uses (TempDirTest: one per test of a fixture).
//
//   pfx::test::TempDir dir("gguf_writer");   // <tmp>/pfx_gguf_writer_<pid>_<n>
//   write(dir / "all.gguf");
#pragma once
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <string>
#include <system_error>

namespace pfx::test {

class TempDir {
 public:
  // `tag` names what the folder is for; the pid and a counter keep parallel test processes and
  // several folders of one test apart.
  explicit TempDir(const std::string& tag) {
    path_ = std::filesystem::temp_directory_path() /
            ("pfx_" + tag + "_" + std::to_string(::getpid()) + "_" + std::to_string(counter()++));
    std::filesystem::remove_all(path_);
    std::filesystem::create_directories(path_);
  }
  ~TempDir() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  TempDir(const TempDir&) = delete;  // owns the directory
  TempDir& operator=(const TempDir&) = delete;
  const std::filesystem::path& path() const { return path_; }
  std::filesystem::path operator/(const std::string& name) const { return path_ / name; }

 private:
  static int& counter() {
    static int c = 0;
    return c;
  }
  std::filesystem::path path_;
};

// A fixture whose every test starts in a fresh empty folder, root_.
class TempDirTest : public ::testing::Test {
 protected:
  const TempDir tmp_{"test"};
  const std::filesystem::path root_ = tmp_.path();
};

}  // namespace pfx::test

// Helpers for the tracer's tests: a scratch directory per test, file writing, data paths.
#pragma once
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "temp_dir.h"
#include "trace/trace_model.h"

namespace pfx::trace::testing {

// A fresh directory under the system temp dir, removed when the test ends.
struct ScratchDir : pfx::test::TempDir {
  ScratchDir() : TempDir("kerneltrace") {}
};

// The first of a trace's kernels or ranges named `name`; a test failure (and an empty record)
// where there is none, `what` naming what was looked for ("kernel").
template <class Record>
const Record& first_named(const std::vector<Record>& records, const std::string& name, const char* what) {
  for (const auto& r : records)
    if (r.name == name) return r;
  ADD_FAILURE() << "no " << what << " " << name;
  static Record none;
  return none;
}

inline void write_file(const std::filesystem::path& path, const std::string& text) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << text;
}

inline std::string read_file(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

// A file of tests/gates/trace/data: from $PFX_TRACE_TEST_DATA, the configure-time source path, or
// ./tests/gates/trace/data (a build carried to another machine runs from the repository root).
#ifdef PFX_TRACE_TEST_DATA
inline std::filesystem::path data_file(const std::string& name) {
  if (const char* env = std::getenv("PFX_TRACE_TEST_DATA"); env != nullptr && *env != '\0') {
    return std::filesystem::path(env) / name;
  }
  std::filesystem::path configured = std::filesystem::path(PFX_TRACE_TEST_DATA) / name;
  std::error_code ec;
  if (std::filesystem::exists(configured, ec)) return configured;
  return std::filesystem::path("tests/gates/trace/data") / name;
}
#endif

// A program of this build: found through the running test binary (BUILD/tests/gates/trace/test_x
// -> BUILD/<relative>) so a build directory carried to another path still works; else the path
// CMake configured.
inline std::string build_artifact(const std::string& relative_to_build, const char* configured) {
  std::error_code ec;
  std::filesystem::path self = std::filesystem::read_symlink("/proc/self/exe", ec);
  if (!ec) {
    std::filesystem::path build = self.parent_path().parent_path().parent_path().parent_path();
    std::filesystem::path candidate = build / relative_to_build;
    if (std::filesystem::exists(candidate, ec)) return candidate.string();
  }
  return configured;
}

}  // namespace pfx::trace::testing

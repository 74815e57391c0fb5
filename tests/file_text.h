// The whole content of a file as a string, for tests that compare what was written.
#pragma once
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

namespace pfx::test {

inline std::string file_text(const std::filesystem::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

}  // namespace pfx::test

// Test helper: runs python3 (or $PFX_PYTHON) scripts from tests/ and reports whether the PyPI
// `gguf` package (llama.cpp's own GGUF reader) is importable. Tests that need it FAIL with the
// reason when it is missing; they never skip.
#pragma once
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <vector>

#include "temp_dir.h"  // TempDir, for the tests that include this

namespace pfx::test {

inline std::string python_exe() {
  const char* env = std::getenv("PFX_PYTHON");
  return env && *env ? env : "python3";
}

inline std::string shell_quote(const std::string& s) {
  std::string q = "'";
  for (char c : s) q += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return q + "'";
}

struct ProcessResult {
  int exit_code = -1;
  std::string output;  // stdout and stderr together
};

inline ProcessResult run_command(const std::string& cmd) {
  ProcessResult r;
  FILE* p = ::popen((cmd + " 2>&1").c_str(), "r");
  if (!p) return r;
  std::array<char, 4096> buf;
  size_t n;
  while ((n = std::fread(buf.data(), 1, buf.size(), p)) > 0) r.output.append(buf.data(), n);
  const int status = ::pclose(p);
  r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return r;
}

// Runs `python3 tests/<script> args...`.
inline ProcessResult run_python(const std::string& script_under_tests, const std::vector<std::string>& args) {
  std::string cmd = shell_quote(python_exe()) + " " +
                    shell_quote((std::filesystem::path(PFX_TESTS_DIR) / script_under_tests).string());
  for (const auto& a : args) cmd += " " + shell_quote(a);
  return run_command(cmd);
}

// Empty when python3 with numpy and gguf works; else what is wrong and how to fix it.
inline std::string python_gguf_problem() {
  const ProcessResult r = run_command(shell_quote(python_exe()) + " -c 'import numpy, gguf'");
  if (r.exit_code == 0) return {};
  return "these tests need " + python_exe() + " with the PyPI packages numpy and gguf (llama.cpp's reader): `" +
         python_exe() + " -c \"import numpy, gguf\"` failed (exit " + std::to_string(r.exit_code) +
         "): " + r.output + "  Install with: pip install numpy gguf (or set PFX_PYTHON)";
}

}  // namespace pfx::test

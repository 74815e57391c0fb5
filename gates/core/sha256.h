// sha256 of files and strings (OpenSSL's libcrypto), as 64 lowercase hex digits: what binds a gate
// result to the binaries it ran and the gate profile it was judged by.
#pragma once
#include <filesystem>
#include <string>

namespace pfx::gates {

std::string sha256_hex(const std::string& bytes);
// Throws pfx::Error naming the file when it cannot be read.
std::string sha256_file(const std::filesystem::path& path);

}  // namespace pfx::gates

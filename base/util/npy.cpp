// .npy read/write (see npy.h): the header parsed with every count bounded by the file, writes
// crash-safe through AtomicFile.
#include "util/npy.h"

#include <cstring>
#include <fstream>
#include <optional>
#include <regex>
#include <string>

#include "util/atomic_file.h"
#include "util/checked.h"
#include "util/error.h"
#include "util/escape.h"

namespace pfx {

NpyArray read_npy(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) fail(path.string(), ": cannot open .npy file");
  char magic[8];
  if (!in.read(magic, 8) || std::memcmp(magic, "\x93NUMPY", 6) != 0)
    fail(path.string(), ": offset 0: not a .npy file (expected magic \\x93NUMPY)");
  const int major = static_cast<unsigned char>(magic[6]);
  uint32_t header_len = 0;
  if (major == 1) {
    uint8_t b[2];
    if (!in.read(reinterpret_cast<char*>(b), 2)) fail(path.string(), ": offset 8: truncated header length");
    header_len = b[0] | (b[1] << 8);
  } else if (major == 2 || major == 3) {
    uint8_t b[4];
    if (!in.read(reinterpret_cast<char*>(b), 4)) fail(path.string(), ": offset 8: truncated header length");
    header_len = b[0] | (b[1] << 8) | (b[2] << 16) | (uint32_t(b[3]) << 24);
  } else {
    fail(path.string(), ": offset 6: unsupported .npy version ", major, " (expected 1, 2 or 3)");
  }
  // numpy itself refuses headers past 10000 bytes (max_header_size); so do we, which also keeps
  // the recursive std::regex matching below far from the stack's limit.
  constexpr uint32_t kMaxHeaderBytes = 10000;
  if (header_len > kMaxHeaderBytes)
    fail(path.string(), ": offset 8: header length ", header_len, " exceeds ", kMaxHeaderBytes, " bytes (numpy's limit)");
  std::string header(header_len, '\0');
  if (!in.read(header.data(), header_len)) fail(path.string(), ": truncated header");

  std::smatch m;
  if (!std::regex_search(header, m, std::regex("'descr'\\s*:\\s*'([^']*)'")))
    fail(path.string(), ": header has no 'descr'");
  const std::string descr = m[1];
  if (descr != "<f4" && descr != "<f8")
    fail(path.string(), ": dtype ", quote_untrusted(descr), " unsupported (expected '<f4' or '<f8')");
  if (std::regex_search(header, m, std::regex("'fortran_order'\\s*:\\s*True")))
    fail(path.string(), ": fortran_order arrays are unsupported (expected C order)");
  if (!std::regex_search(header, m, std::regex("'shape'\\s*:\\s*\\(([^)]*)\\)")))
    fail(path.string(), ": header has no 'shape'");

  NpyArray arr;
  const std::string dims = m[1];
  std::regex num("[0-9]+");
  for (auto it = std::sregex_iterator(dims.begin(), dims.end(), num); it != std::sregex_iterator(); ++it) {
    std::optional<int64_t> d = 0;
    for (const char c : it->str()) {
      if (d) d = checked_mul<int64_t>(*d, 10);
      if (d) d = checked_add<int64_t>(*d, c - '0');
    }
    if (!d) fail(path.string(), ": header: shape dimension ", it->str(), " does not fit a 64-bit count");
    arr.shape.push_back(*d);
  }
  // The data must be in the file: bound the element count by the bytes left before allocating.
  const int64_t elem_bytes = descr == "<f4" ? 4 : 8;
  const int64_t header_end = static_cast<int64_t>(in.tellg());
  const int64_t data_bytes = static_cast<int64_t>(std::filesystem::file_size(path)) - header_end;
  int64_t count = 1;
  for (int64_t d : arr.shape) {
    const auto next = checked_mul<int64_t>(count, d);
    if (!next || *next > data_bytes / elem_bytes)
      fail(path.string(), ": shape ", quote_untrusted("(" + dims + ")"), " needs more data than the ", data_bytes,
           " bytes after the header (expected ", elem_bytes, " bytes per element)");
    count = *next;
  }
  arr.data.resize(static_cast<size_t>(count));
  if (descr == "<f4") {
    if (!in.read(reinterpret_cast<char*>(arr.data.data()), count * 4))
      fail(path.string(), ": data truncated (expected ", count * 4, " bytes of float32)");
  } else {
    std::vector<double> tmp(static_cast<size_t>(count));
    if (!in.read(reinterpret_cast<char*>(tmp.data()), count * 8))
      fail(path.string(), ": data truncated (expected ", count * 8, " bytes of float64)");
    for (int64_t i = 0; i < count; ++i) arr.data[i] = static_cast<float>(tmp[i]);
  }
  return arr;
}

void write_npy(const std::filesystem::path& path, const float* data, const std::vector<int64_t>& shape,
               bool overwrite) {
  std::string dims;
  for (size_t i = 0; i < shape.size(); ++i) dims += std::to_string(shape[i]) + (shape.size() == 1 || i + 1 < shape.size() ? "," : "");
  if (!shape.empty() && shape.size() > 1 && dims.back() == ',') dims.pop_back();
  std::string header = "{'descr': '<f4', 'fortran_order': False, 'shape': (" + dims + "), }";
  const size_t total = 10 + header.size() + 1;
  header.append((64 - total % 64) % 64, ' ');
  header.push_back('\n');
  int64_t count = 1;
  for (int64_t d : shape) {
    if (d < 0) fail(path.string(), ": cannot write a negative dimension ", d);
    count = mul_or_fail<int64_t>(count, d, path.string(), ": element count");
  }
  AtomicFile out(path, overwrite ? Replace::Allow : Replace::Refuse);
  out.write("\x93NUMPY\x01\x00", 8);
  const uint16_t hl = static_cast<uint16_t>(header.size());
  const char hb[2] = {static_cast<char>(hl & 0xff), static_cast<char>(hl >> 8)};
  out.write(hb, 2);
  out.write(header);
  out.write(data, static_cast<size_t>(mul_or_fail<int64_t>(count, 4, path.string(), ": byte count")));
  out.commit();
}

}  // namespace pfx

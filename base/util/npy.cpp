#include "util/npy.h"

#include <cstring>
#include <fstream>
#include <numeric>
#include <regex>
#include <string>

#include "util/error.h"

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
  if (header_len > (1u << 20)) fail(path.string(), ": header length ", header_len, " is implausible");
  std::string header(header_len, '\0');
  if (!in.read(header.data(), header_len)) fail(path.string(), ": truncated header");

  std::smatch m;
  if (!std::regex_search(header, m, std::regex("'descr'\\s*:\\s*'([^']*)'")))
    fail(path.string(), ": header has no 'descr'");
  const std::string descr = m[1];
  if (descr != "<f4" && descr != "<f8")
    fail(path.string(), ": dtype '", descr, "' unsupported (expected '<f4' or '<f8')");
  if (std::regex_search(header, m, std::regex("'fortran_order'\\s*:\\s*True")))
    fail(path.string(), ": fortran_order arrays are unsupported (expected C order)");
  if (!std::regex_search(header, m, std::regex("'shape'\\s*:\\s*\\(([^)]*)\\)")))
    fail(path.string(), ": header has no 'shape'");

  NpyArray arr;
  const std::string dims = m[1];
  std::regex num("[0-9]+");
  for (auto it = std::sregex_iterator(dims.begin(), dims.end(), num); it != std::sregex_iterator(); ++it)
    arr.shape.push_back(std::stoll(it->str()));
  int64_t count = 1;
  for (int64_t d : arr.shape) {
    if (d < 0 || (d > 0 && count > (int64_t(1) << 40) / d)) fail(path.string(), ": shape too large");
    count *= d;
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
  if (!overwrite && std::filesystem::exists(path)) fail(path.string(), ": exists; refusing to overwrite");
  std::string dims;
  for (size_t i = 0; i < shape.size(); ++i) dims += std::to_string(shape[i]) + (shape.size() == 1 || i + 1 < shape.size() ? "," : "");
  if (!shape.empty() && shape.size() > 1 && dims.back() == ',') dims.pop_back();
  std::string header = "{'descr': '<f4', 'fortran_order': False, 'shape': (" + dims + "), }";
  const size_t total = 10 + header.size() + 1;
  header.append((64 - total % 64) % 64, ' ');
  header.push_back('\n');
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  if (!out) fail(path.string(), ": cannot open for writing");
  out.write("\x93NUMPY\x01\x00", 8);
  const uint16_t hl = static_cast<uint16_t>(header.size());
  const char hb[2] = {static_cast<char>(hl & 0xff), static_cast<char>(hl >> 8)};
  out.write(hb, 2);
  out.write(header.data(), static_cast<std::streamsize>(header.size()));
  const int64_t count = std::accumulate(shape.begin(), shape.end(), int64_t(1), std::multiplies<>());
  out.write(reinterpret_cast<const char*>(data), count * 4);
  if (!out) fail(path.string(), ": write failed");
}

}  // namespace pfx

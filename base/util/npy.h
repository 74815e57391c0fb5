// NumPy .npy files (format 1.0/2.0/3.0 read, 1.0 written): float32 C-order arrays, the
// format logits travel in between the engine, the gates and the fixtures.
#pragma once
#include <cstdint>
#include <filesystem>
#include <vector>

namespace pfx {

struct NpyArray {
  std::vector<int64_t> shape;
  std::vector<float> data;  // row-major
  int64_t rows() const { return shape.empty() ? 0 : shape[0]; }
  int64_t cols() const { return shape.size() < 2 ? 1 : shape[1]; }
};

// Reads a little-endian float32 ('<f4') or float64 ('<f8', converted) C-order array.
NpyArray read_npy(const std::filesystem::path& path);
// Writes float32 C-order; refuses to overwrite unless `overwrite`.
void write_npy(const std::filesystem::path& path, const float* data, const std::vector<int64_t>& shape,
               bool overwrite = true);

}  // namespace pfx

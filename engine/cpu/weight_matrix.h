// A weight tensor as the CPU reference reads it: f32 rows of a [rows, cols] matrix. Rows are
// either resident in f32 (F32 tensors point into the GGUF mapping; other types are dequantized
// once, up front) or dequantized on every use into caller scratch (streamed), which keeps models
// far larger than their f32 size workable, slowly.
#pragma once
#include <cstdint>
#include <vector>

#include "model/llama.h"

namespace pfx::cpu {

class WeightMatrix {
 public:
  WeightMatrix() = default;
  // resident: keep f32 rows in memory (dequantized here, in parallel); else stream.
  WeightMatrix(const model::TensorRef& t, bool resident, int threads);

  int64_t rows() const { return rows_; }
  int64_t cols() const { return cols_; }
  // Row r as f32: a pointer into resident memory, or `scratch` (cols() floats) filled by
  // dequantizing row r.
  const float* row(int64_t r, float* scratch) const;
  // f32 bytes this matrix holds resident (0 for mapped F32 and for streamed matrices).
  int64_t resident_bytes() const { return static_cast<int64_t>(owned_.size() * sizeof(float)); }

 private:
  model::TensorRef ref_;  // a copy: the Model's own structs may move
  int64_t rows_ = 0, cols_ = 0;
  const float* f32_ = nullptr;  // resident rows: the mapping (F32) or owned_
  std::vector<float> owned_;
};

}  // namespace pfx::cpu

// f32 row access to GGUF weights (see weight_matrix.h).
#include "cpu/weight_matrix.h"

#include <cstdint>

#include "quant/dequant.h"
#include "util/error.h"
#include "util/parallel.h"

namespace pfx::cpu {

WeightMatrix::WeightMatrix(const model::TensorRef& t, bool resident, int threads)
    : ref_(t), rows_(t.rows), cols_(t.cols) {
  if (!quant::traits(t.type).can_dequantize)
    fail("CPU backend: tensor '", t.name, "' has type ", quant::type_name(t.type),
         ", which the reference cannot dequantize");
  if (t.type == quant::Type::F32 && reinterpret_cast<uintptr_t>(t.data) % alignof(float) == 0) {
    // The reader guarantees this (tensor data at a multiple of the file's alignment >= 8 in a
    // page-aligned mapping): use the mapping in place. Anything else is copied, never read as a
    // misaligned float*.
    f32_ = reinterpret_cast<const float*>(t.data);
    return;
  }
  if (!resident) return;
  owned_.resize(static_cast<size_t>(rows_ * cols_));
  parallel_for(
      rows_,
      [&](int64_t b, int64_t e) {
        for (int64_t r = b; r < e; ++r) quant::dequantize_row(t.type, t.row(r), owned_.data() + r * cols_, cols_);
      },
      threads);
  f32_ = owned_.data();
}

const float* WeightMatrix::row(int64_t r, float* scratch) const {
  if (f32_) return f32_ + r * cols_;
  quant::dequantize_row(ref_.type, ref_.row(r), scratch, cols_);
  return scratch;
}

}  // namespace pfx::cpu

// Finds NaN and infinity in stored weights without dequantizing them: f32/f16/bf16 elements by
// their exponent bits, the block formats by their scales (every value of a q4_K, q6_K, q8_0 ...
// block is a small integer times its fp16/f32 scale, minus a small integer times its min scale,
// so the block is finite exactly when its scales are). Reads the source with memcpy: any
// alignment is fine.
#pragma once
#include <cstdint>
#include <optional>

#include "quant/types.h"

namespace pfx::quant {

struct NonFiniteCount {
  int64_t values = 0;        // non-finite values (for block formats: the elements of bad blocks)
  int64_t first = -1;        // element index of the first one; -1 if none
  bool any() const { return values > 0; }
};

// n elements (a multiple of the block size) of `type` at src. nullopt for the types the reference
// cannot dequantize (traits().can_dequantize is false): they are refused elsewhere.
std::optional<NonFiniteCount> count_nonfinite(Type type, const void* src, int64_t n);

}  // namespace pfx::quant

// What quantize_row and dequantize_row check before they touch a row (quant/quantize.h,
// quant/dequant.h): its length, and whether it can be accessed through typed pointers. Block
// structs and f16/f32 elements are read and written through typed pointers; a row at an address
// not aligned for them (a caller's byte buffer at an odd offset) goes through an aligned buffer
// instead, so no load or store is ever misaligned (undefined behaviour, a fault on some CPUs).
#pragma once
#include <cstdint>
#include <vector>

#include "quant/types.h"
#include "util/error.h"

namespace pfx::quant {

// The traits of `type` for an `op` ("quantize") on a row of `n` elements; throws unless the type
// can be `supported` (&TypeTraits::can_quantize; else the message names the `missing` code) and
// the row fills whole blocks.
inline const TypeTraits& row_traits(Type type, int64_t n, const char* op, bool TypeTraits::*supported, const char* missing) {
  const TypeTraits& tr = traits(type);
  if (!(tr.*supported)) fail(op, ": tensor type ", tr.name, " is not supported (no ", missing, ")");
  if (n < 0 || n % tr.block_size != 0) fail(op, ": ", n, " elements is not a multiple of the ", tr.name, " block size ", tr.block_size);
  return tr;
}

inline bool is_misaligned(Type type, const void* row) {
  return reinterpret_cast<uintptr_t>(row) % static_cast<uintptr_t>(element_alignment(type)) != 0;
}

// Room for one row of `n` elements of `type` (row_bytes(type, n) bytes), aligned for any type.
inline std::vector<uint64_t> aligned_row_buffer(Type type, int64_t n) {
  return std::vector<uint64_t>((static_cast<size_t>(row_bytes(type, n)) + 7) / 8);
}

}  // namespace pfx::quant

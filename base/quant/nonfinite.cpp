// Non-finite weight detection by exponent bits and block scales (see nonfinite.h).
#include "quant/nonfinite.h"

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstring>
#include <vector>

#include "quant/blocks.h"
#include "quant/dequant.h"
#include "util/error.h"

namespace pfx::quant {
namespace {

bool f32_bits_nonfinite(uint32_t b) { return (b & 0x7F800000u) == 0x7F800000u; }
bool f16_bits_nonfinite(uint16_t b) { return (b & 0x7C00u) == 0x7C00u; }
bool bf16_bits_nonfinite(uint16_t b) { return (b & 0x7F80u) == 0x7F80u; }

template <class T>
T load(const uint8_t* p) {
  T v;
  std::memcpy(&v, p, sizeof v);
  return v;
}

// Element formats: test every element.
template <class Bits, bool (*Bad)(Bits)>
NonFiniteCount scan_elements(const uint8_t* p, int64_t n) {
  NonFiniteCount c;
  for (int64_t i = 0; i < n; ++i) {
    if (Bad(load<Bits>(p + i * static_cast<int64_t>(sizeof(Bits))))) {
      if (c.first < 0) c.first = i;
      ++c.values;
    }
  }
  return c;
}

// Block formats: test each block's fp16 scales at the given byte offsets (d, and dmin where the
// format has one; -1 = none).
template <class Block>
NonFiniteCount scan_blocks(const uint8_t* p, int64_t n, int64_t block_size, ptrdiff_t d_at, ptrdiff_t dmin_at) {
  NonFiniteCount c;
  for (int64_t b = 0; b < n / block_size; ++b) {
    const uint8_t* blk = p + b * static_cast<int64_t>(sizeof(Block));
    const bool bad = f16_bits_nonfinite(load<uint16_t>(blk + d_at)) ||
                     (dmin_at >= 0 && f16_bits_nonfinite(load<uint16_t>(blk + dmin_at)));
    if (bad) {
      if (c.first < 0) c.first = b * block_size;
      c.values += block_size;
    }
  }
  return c;
}

}  // namespace

std::optional<NonFiniteCount> count_nonfinite(Type type, const void* src, int64_t n) {
  const TypeTraits& tr = traits(type);
  if (!tr.can_dequantize) return std::nullopt;
  if (n < 0 || n % tr.block_size != 0) {
    fail("count_nonfinite: ", n, " elements is not a multiple of the ", tr.name, " block size ", tr.block_size);
  }
  const auto* p = static_cast<const uint8_t*>(src);
  switch (type) {
    case Type::F32: return scan_elements<uint32_t, f32_bits_nonfinite>(p, n);
    case Type::F16: return scan_elements<uint16_t, f16_bits_nonfinite>(p, n);
    case Type::BF16: return scan_elements<uint16_t, bf16_bits_nonfinite>(p, n);
    case Type::Q4_0: return scan_blocks<BlockQ4_0>(p, n, QK4_0, offsetof(BlockQ4_0, d), -1);
    case Type::Q8_0: return scan_blocks<BlockQ8_0>(p, n, QK8_0, offsetof(BlockQ8_0, d), -1);
    case Type::Q4_K: return scan_blocks<BlockQ4_K>(p, n, QK_K, offsetof(BlockQ4_K, d), offsetof(BlockQ4_K, dmin));
    case Type::Q5_K: return scan_blocks<BlockQ5_K>(p, n, QK_K, offsetof(BlockQ5_K, d), offsetof(BlockQ5_K, dmin));
    case Type::Q6_K: return scan_blocks<BlockQ6_K>(p, n, QK_K, offsetof(BlockQ6_K, d), -1);
    case Type::Q8_K: {  // float scale
      NonFiniteCount c;
      for (int64_t b = 0; b < n / QK_K; ++b) {
        if (f32_bits_nonfinite(load<uint32_t>(p + b * static_cast<int64_t>(sizeof(BlockQ8_K)) + offsetof(BlockQ8_K, d)))) {
          if (c.first < 0) c.first = b * QK_K;
          c.values += QK_K;
        }
      }
      return c;
    }
    default: break;
  }
  // A type with a dequantizer but no scan above: decode it in chunks and test the values.
  NonFiniteCount c;
  const int64_t chunk = std::max<int64_t>(tr.block_size, 4096 / tr.block_size * tr.block_size);
  std::vector<float> values(static_cast<size_t>(chunk));
  for (int64_t at = 0; at < n; at += chunk) {
    const int64_t len = std::min(chunk, n - at);
    dequantize_row(type, p + at / tr.block_size * tr.type_size, values.data(), len);
    for (int64_t i = 0; i < len; ++i) {
      if (!std::isfinite(values[static_cast<size_t>(i)])) {
        if (c.first < 0) c.first = at + i;
        ++c.values;
      }
    }
  }
  return c;
}

}  // namespace pfx::quant

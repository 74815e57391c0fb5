// Checked integer arithmetic for counts and sizes that come from files and profiles: every
// product or sum that forms a size goes through here, so a hostile value is an error, never a
// wrapped size. Thin wrappers over the compiler's __builtin_*_overflow.
//
//   int64_t bytes = pfx::mul_or_fail(rows, row_bytes, path, ": tensor 'x': byte size");
//   if (auto n = pfx::checked_mul<uint64_t>(a, b)) use(*n);
#pragma once
#include <concepts>
#include <optional>

#include "util/error.h"

namespace pfx {

// a * b, or nullopt when the exact product does not fit T.
template <std::integral T>
[[nodiscard]] constexpr std::optional<T> checked_mul(T a, T b) {
  T r{};
  if (__builtin_mul_overflow(a, b, &r)) return std::nullopt;
  return r;
}

// a + b, or nullopt when the exact sum does not fit T.
template <std::integral T>
[[nodiscard]] constexpr std::optional<T> checked_add(T a, T b) {
  T r{};
  if (__builtin_add_overflow(a, b, &r)) return std::nullopt;
  return r;
}

// a * b; throws pfx::Error "<context>: a x b overflows a N-bit integer" when it does not fit T.
template <std::integral T, class... Context>
T mul_or_fail(T a, T b, const Context&... context) {
  if (const auto r = checked_mul(a, b)) return *r;
  fail(context..., ": ", a, " x ", b, " overflows a ", sizeof(T) * 8, "-bit integer");
}

// a + b; throws pfx::Error like mul_or_fail.
template <std::integral T, class... Context>
T add_or_fail(T a, T b, const Context&... context) {
  if (const auto r = checked_add(a, b)) return *r;
  fail(context..., ": ", a, " + ", b, " overflows a ", sizeof(T) * 8, "-bit integer");
}

// The smallest multiple of `align` (> 0) that is >= x, or nullopt when it does not fit.
template <std::unsigned_integral T>
[[nodiscard]] constexpr std::optional<T> checked_align_up(T x, T align) {
  const auto sum = checked_add<T>(x, static_cast<T>(align - 1));
  if (!sum) return std::nullopt;
  return *sum / align * align;
}

}  // namespace pfx

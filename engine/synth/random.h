// Counter-based randomness for synthetic weights: row r of tensor T under seed S is drawn from a
// stream that depends on (S, T's name, r) only, so any thread may generate any row and the file
// is identical for every thread count and tensor order.
#pragma once
#include <cmath>
#include <cstdint>
#include <string_view>

namespace pfx::synth {

// SplitMix64's output function: a bijective 64-bit mixer.
inline uint64_t mix64(uint64_t x) {
  x += 0x9E3779B97F4A7C15ull;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
  return x ^ (x >> 31);
}

// FNV-1a of a tensor name: the tensor's identity in the stream key.
inline uint64_t name_hash(std::string_view s) {
  uint64_t h = 0xCBF29CE484222325ull;
  for (unsigned char c : s) h = (h ^ c) * 0x100000001B3ull;
  return h;
}

// The SplitMix64 sequence from a (seed, tensor, row) key; normal deviates by Box-Muller.
class RowRng {
 public:
  RowRng(uint64_t seed, uint64_t tensor, uint64_t row) : state_(mix64(mix64(seed ^ mix64(tensor)) ^ row)) {}

  uint64_t next() {
    state_ += 0x9E3779B97F4A7C15ull;
    uint64_t z = state_;
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
  }

  // dst[i] = mean + std * N(0, 1) for i < n.
  void fill_normal(float* dst, int64_t n, double mean, double std) {
    constexpr double kTwoPi = 6.283185307179586476925286766559;
    constexpr double kInv53 = 1.0 / 9007199254740992.0;  // 2^-53
    for (int64_t i = 0; i < n; i += 2) {
      const double u1 = static_cast<double>((next() >> 11) + 1) * kInv53;  // (0, 1]: log is finite
      const double u2 = static_cast<double>(next() >> 11) * kInv53;        // [0, 1)
      const double r = std::sqrt(-2.0 * std::log(u1)), a = kTwoPi * u2;
      dst[i] = static_cast<float>(mean + std * r * std::cos(a));
      if (i + 1 < n) dst[i + 1] = static_cast<float>(mean + std * r * std::sin(a));
    }
  }

 private:
  uint64_t state_;
};

}  // namespace pfx::synth

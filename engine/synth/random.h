// Counter-based randomness for synthetic weights: row r of tensor T under seed S is drawn from a
// stream that depends on (S, T's name, r) only, so any thread may generate any row and the file
// is identical for every thread count and tensor order.
#pragma once
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

// The SplitMix64 sequence from a (seed, tensor, row) key, and near-normal deviates from it.
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

  // dst[i] = mean + std * z for i < n, z ~ approximately N(0, 1): the Irwin-Hall sum of 12
  // uniforms minus 6 (mean 0, variance 1 - 2^-32, tails cut at +-6). Integer arithmetic and one
  // exactly rounded multiply-add, so the bytes never depend on the platform's libm, and ~10x
  // cheaper than Box-Muller (the 7B profile draws 6.7e9 of them).
  void fill_normal(float* dst, int64_t n, double mean, double std) {
    constexpr double kScale = 1.0 / 65536.0;
    for (int64_t i = 0; i < n; ++i) {
      uint64_t sum = 0;
      for (int w = 0; w < 3; ++w) {  // 3 words x 4 16-bit uniforms k in [0, 65535]
        const uint64_t x = next();
        sum += (x & 0xFFFF) + ((x >> 16) & 0xFFFF) + ((x >> 32) & 0xFFFF) + (x >> 48);
      }
      // u = (k + 0.5) / 65536 has mean 1/2: z = sum(u) - 6 = (sum(k) + 6 - 6 * 65536) / 65536.
      const double z = (static_cast<double>(sum) + 6.0 - 6.0 * 65536.0) * kScale;
      dst[i] = static_cast<float>(mean + std * z);
    }
  }

 private:
  uint64_t state_;
};

}  // namespace pfx::synth

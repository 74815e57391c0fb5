// Little-endian byte assembly for hand-made (and deliberately broken) GGUF files in tests: every
// field can be written wrong, which our Writer would refuse to do.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

namespace pfx::test {

class Bytes {
 public:
  template <class T>
  Bytes& put(T v) {
    const auto* p = reinterpret_cast<const uint8_t*>(&v);
    b.insert(b.end(), p, p + sizeof v);
    return *this;
  }
  Bytes& str(const std::string& s) {  // GGUF string: uint64 length, then the bytes
    put<uint64_t>(s.size());
    b.insert(b.end(), s.begin(), s.end());
    return *this;
  }
  std::vector<uint8_t> b;
};

// GGUF metadata value type ids and ggml tensor type ids used by the tests.
constexpr uint32_t kU8 = 0, kU32 = 4, kF32v = 6, kBool = 7, kString = 8, kArray = 9;
constexpr uint32_t kTypeF32 = 0, kTypeQ8_0 = 8, kTypeQ4_K = 12;

}  // namespace pfx::test

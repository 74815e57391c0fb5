// sha256 through OpenSSL's EVP interface (see sha256.h).
#include "core/sha256.h"

#include <openssl/evp.h>

#include <fstream>
#include <memory>
#include <vector>

#include "util/error.h"

namespace pfx::gates {

namespace {

// One EVP digest context; the deleter frees it on every path out.
struct Digest {
  std::unique_ptr<EVP_MD_CTX, decltype(&EVP_MD_CTX_free)> ctx{EVP_MD_CTX_new(), &EVP_MD_CTX_free};
  Digest() {
    if (!ctx || EVP_DigestInit_ex(ctx.get(), EVP_sha256(), nullptr) != 1) fail("sha256: OpenSSL digest init failed");
  }
  void update(const char* p, size_t n) {
    if (EVP_DigestUpdate(ctx.get(), p, n) != 1) fail("sha256: OpenSSL digest update failed");
  }
  std::string hex() {
    unsigned char md[EVP_MAX_MD_SIZE];
    unsigned int len = 0;
    if (EVP_DigestFinal_ex(ctx.get(), md, &len) != 1) fail("sha256: OpenSSL digest final failed");
    static const char* digits = "0123456789abcdef";
    std::string out;
    for (unsigned i = 0; i < len; ++i) {
      out += digits[md[i] >> 4];
      out += digits[md[i] & 15];
    }
    return out;
  }
};

}  // namespace

std::string sha256_hex(const std::string& bytes) {
  Digest d;
  d.update(bytes.data(), bytes.size());
  return d.hex();
}

std::string sha256_file(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) fail(path.string(), ": cannot open to hash it");
  Digest d;
  std::vector<char> buf(1 << 20);  // 1 MiB reads: a 7B-sized binary is hashed without holding it
  while (in) {
    in.read(buf.data(), static_cast<std::streamsize>(buf.size()));
    if (in.gcount() > 0) d.update(buf.data(), static_cast<size_t>(in.gcount()));
  }
  if (in.bad()) fail(path.string(), ": read error while hashing");
  return d.hex();
}

}  // namespace pfx::gates

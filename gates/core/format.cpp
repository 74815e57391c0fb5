// Number formatting (see format.h).
#include "core/format.h"

#include <cstdio>
#include <cstdlib>

namespace pfx::gates {
std::string sci(double v) {
  char b[32];
  std::snprintf(b, sizeof b, "%.2e", v);
  return b;
}
std::string fixed(double v, int decimals) {
  char b[64];
  std::snprintf(b, sizeof b, "%.*f", decimals, v);
  return b;
}
std::string pct(double fraction) { return fixed(fraction * 100.0, 1) + "%"; }
std::string signed_pct(double percent) { return (percent >= 0 ? "+" : "") + fixed(percent, 1) + "%"; }
std::string grouped(long long v) {
  std::string digits = std::to_string(std::llabs(v));
  std::string out;
  for (size_t i = 0; i < digits.size(); ++i) {
    if (i && (digits.size() - i) % 3 == 0) out += ',';
    out += digits[i];
  }
  return (v < 0 ? "-" : "") + out;
}
std::string shape_text(const std::vector<int64_t>& dims) {
  std::string s = "[";
  for (size_t i = 0; i < dims.size(); ++i) s += (i ? "," : "") + std::to_string(dims[i]);
  return s + "]";
}
}  // namespace pfx::gates

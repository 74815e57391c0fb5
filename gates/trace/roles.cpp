// role_of: strips the "blk.N." layer prefix from an NVTX range name; role_parts splits a
// grouped role at its '+'.
#include "trace/roles.h"

namespace pfx::trace {

std::string role_of(std::string_view name) {
  constexpr std::string_view prefix = "blk.";
  if (name.substr(0, prefix.size()) != prefix) return std::string(name);
  std::size_t i = prefix.size();
  std::size_t digits = 0;
  while (i < name.size() && name[i] >= '0' && name[i] <= '9') {
    ++i;
    ++digits;
  }
  // Needs at least one digit, then a dot, then a non-empty rest: "blk.7." alone is not a role.
  if (digits == 0 || i + 1 >= name.size() || name[i] != '.') return std::string(name);
  return std::string(name.substr(i + 1));
}

std::vector<std::string> role_parts(std::string_view role) {
  std::vector<std::string> parts;
  for (std::size_t start = 0;;) {
    const std::size_t plus = role.find('+', start);
    parts.emplace_back(role.substr(start, plus == std::string_view::npos ? std::string_view::npos : plus - start));
    if (plus == std::string_view::npos) return parts;
    start = plus + 1;
  }
}

}  // namespace pfx::trace

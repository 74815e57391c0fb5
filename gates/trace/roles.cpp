// role_of: strips the "blk.N." layer prefix from an NVTX range name.
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

}  // namespace pfx::trace

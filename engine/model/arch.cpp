// The architecture table (see arch.h).
#include "model/arch.h"

#include <array>

namespace pfx::model {
namespace {

constexpr std::array<ArchTraits, 2> kArchs = {{
    {"llama", RopeStyle::Adjacent, true},
    {"qwen2", RopeStyle::Neox, false},
}};

}  // namespace

const ArchTraits* find_arch(std::string_view name) {
  for (const ArchTraits& a : kArchs)
    if (a.name == name) return &a;
  return nullptr;
}

std::string supported_arch_names() {
  std::string s;
  for (const ArchTraits& a : kArchs) s += (s.empty() ? "" : ", ") + std::string(a.name);
  return s;
}

}  // namespace pfx::model

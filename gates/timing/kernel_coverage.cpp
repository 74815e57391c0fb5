// Unguarded kernels and the coverage check (see kernel_coverage.h).
#include "timing/kernel_coverage.h"

#include <map>

namespace pfx::gates {

using nlohmann::json;

namespace {

bool same_resources(const KernelResources& a, const KernelResources& b) {
  return a.registers == b.registers && a.spill_bytes() == b.spill_bytes() && a.stack_bytes == b.stack_bytes &&
         a.smem_bytes() == b.smem_bytes();
}

}  // namespace

json kernel_coverage(const CoverageInput& in) {
  if (!in.resources_known) return {{"known", false}, {"note", in.resources_note}};
  const bool sass = in.baseline_sass.available && in.candidate_sass.available;
  std::map<std::string, const KernelResources*> base;
  for (const auto& k : in.baseline) base[k.mangled] = &k;
  json unguarded = json::array();
  for (const auto& k : in.candidate) {
    if (in.launched.count(k.mangled)) continue;
    std::string changed;
    if (sass) {
      const auto x = in.baseline_sass.by_mangled.find(k.mangled), y = in.candidate_sass.by_mangled.find(k.mangled);
      if (y == in.candidate_sass.by_mangled.end()) changed = "unknown";  // a kernel the SASS listing lacks
      else changed = x == in.baseline_sass.by_mangled.end() ? "new" : x->second == y->second ? "unchanged" : "changed";
    } else {
      const auto b = base.find(k.mangled);
      changed = b == base.end() ? "new" : same_resources(*b->second, k) ? "unchanged" : "changed";
    }
    unguarded.push_back({{"kernel", k.name.empty() ? k.mangled : k.name}, {"mangled", k.mangled}, {"source", k.source},
                         {"changed", changed}});
  }
  return {{"known", true}, {"kernels", in.candidate.size()}, {"launched", in.launched.size()}, {"unguarded", unguarded},
          {"changed_by", sass ? "SASS hash" : "ptxas resources"},
          {"note", sass ? "" : "SASS hashes unavailable (" + (in.baseline_sass.available ? in.candidate_sass.reason : in.baseline_sass.reason) +
                                   "): changed judged by ptxas resources only"}};
}

}  // namespace pfx::gates

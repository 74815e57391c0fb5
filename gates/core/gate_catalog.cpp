// The gate catalog (see gate_catalog.h).
#include "core/gate_catalog.h"

namespace pfx::gates {

const std::vector<GateInfo>& gate_catalog() {
  // Results order: whole-prefill throughput, kernel time, kernel resources, tests.
  static const std::vector<GateInfo> catalog = {
      {"parity", true, 10, false, {}},
      {"accuracy", true, 11, false, {}},
      {"greedy", false, 12, false, {}},
      {"ptxas", false, 2, false, {{"ptxas", "ptxas: kernel resources (sm_90)", "No kernel resources", false}}},
      {"suite", false, 3, false, {}},
      {"timing", true, 1, true, {{"kernels", "Per-kernel GPU time, baseline vs candidate", "no kernel timing", true}}},
      {"ab", true, 0, false, {{"ab", "A/B samples (tok/s per run)", "no A/B samples", true}}},
  };
  return catalog;
}

const GateInfo* gate_info(const std::string& name) {
  for (const auto& g : gate_catalog())
    if (g.name == name) return &g;
  return nullptr;
}

const std::vector<std::string>& known_gates() {
  static const std::vector<std::string> names = [] {
    std::vector<std::string> n;
    for (const auto& g : gate_catalog()) n.push_back(g.name);
    return n;
  }();
  return names;
}

bool gate_needs_gpu(const std::string& gate) {
  const GateInfo* g = gate_info(gate);
  return g && g->needs_gpu;
}

}  // namespace pfx::gates

// The ptxas gate's figures, typed: one kernel's resources as the gate reports them, the one JSON
// mapping of it (details.kernels[].baseline / .candidate, docs/schemas/gate-result.md), the rows
// for the report's results table (kernels whose registers or blocks/SM changed) and the per-kernel
// table ("ptxas").
#pragma once
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "core/gate_result.h"
#include "ptxas/kernel_resources.h"
#include "ptxas/occupancy.h"

namespace pfx::gates {

// The compiler's numbers for one kernel and the blocks/SM they allow (empty: threads unknown).
struct KernelFigures {
  KernelResources resources;
  std::optional<int> blocks_per_sm;
  std::string limiter;
};
KernelFigures kernel_figures(const KernelResources& k, const Occupancy& o);
nlohmann::json to_json(const KernelFigures& k);
KernelFigures kernel_figures_from_json(const nlohmann::json& j, const std::string& where);

// One candidate kernel against the baseline's kernel of the same name (`key`: the name, plus
// " [mangled]" where several kernels share it).
struct KernelComparison {
  std::string key;
  std::optional<KernelFigures> baseline;  // empty: not in the baseline (or no baseline file)
  KernelFigures candidate;
  bool added = false;                     // a baseline file exists and lacks it
  bool budgeted = false;                  // a budget glob matched it
};

// The rows (at most 8 changed kernels) and the "ptxas" table; each names its kernel's check.
void add_ptxas_output(GateResult& r, const std::vector<KernelComparison>& kernels, const std::vector<std::string>& removed);

// landing-gate-result/1 reader: rows and table from details.kernels and details.removed_kernels.
void read_legacy_ptxas_output(GateResult& r);

}  // namespace pfx::gates

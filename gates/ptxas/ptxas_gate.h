// The ptxas gate: per kernel, registers, spills, stack, shared memory and the blocks/SM they
// allow on sm_90, baseline → candidate, against budgets per kernel-name glob from the gate
// profile (gates.ptxas.budgets: [{kernels: "k_gemm_q6k*", max_regs: 96, max_spill_bytes: 0,
// max_stack_bytes, max_smem_bytes, min_blocks_per_sm: 2}]). A ptxas performance note on a kernel
// that its baseline kernel did not have (C7512 / C7513: the wgmma pipeline serialized, which no
// register or spill figure shows) fails the kernel's check; where the baseline's file predates the
// notes, a noted kernel's check is inconclusive, and so is every kernel whose candidate file lacks
// the notes its baseline's file records. Needs no GPU, only a CUDA build.
#pragma once
#include <nlohmann/json.hpp>

#include "run/gate_context.h"
#include "ptxas/kernel_resources.h"

namespace pfx::gates {

GateResult run_ptxas_gate(const GateContext& ctx);
// Where build `b` keeps its kernel-resources.json (capabilities.kernel_resources, beside prefill).
std::filesystem::path kernel_resources_path(const Build& b);

// The comparison itself, on parsed files (what the gate runs; tests call it on real files).
// Adds one check per candidate kernel to `r` and fills r.details / r.evidence.
void compare_kernel_resources(GateResult& r, const KernelResourceFile* baseline, const KernelResourceFile& candidate,
                              const nlohmann::json& budgets, const std::string& budgets_origin);

}  // namespace pfx::gates

// The gates `landing` can run, by name, in report order; each takes a GateContext.
#pragma once
#include <filesystem>
#include <string>

#include "run/gate_context.h"

namespace pfx::gates {

// Runs gate `name`; an exception inside a gate becomes a FAIL result naming it (a gate never takes
// the whole landing down).
GateResult run_gate(const std::string& name, const GateContext& ctx, const std::filesystem::path& landing_exe);

// Registers each gate's reader of its landing-gate-result/1 details (core/gate_result.h), so
// results written before rows and tables existed render as they did. `landing` calls it first.
void register_legacy_output_readers();

}  // namespace pfx::gates

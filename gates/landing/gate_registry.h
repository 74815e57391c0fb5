// The gates `landing` can run, by name, in report order; each takes a GateContext.
#pragma once
#include <filesystem>
#include <string>

#include "core/gate_context.h"

namespace pfx::gates {

// Runs gate `name`; an exception inside a gate becomes a FAIL result naming it (a gate never takes
// the whole landing down).
GateResult run_gate(const std::string& name, const GateContext& ctx, const std::filesystem::path& landing_exe);

}  // namespace pfx::gates

// The context block of a report (STYLE.md habit 10): host, OS, CPU, toolchain, GPU, driver,
// CUDA, clocks and time, captured on whichever machine runs a gate.
#pragma once
#include <nlohmann/json.hpp>

namespace pfx::gates {

// {"host", "os", "cpu", "cores", "memory_gib", "time_utc", "nvcc", "cmake", "gpu": {...} | null,
//  "gpu_unavailable_reason"}. Never throws: a missing tool becomes "unknown".
nlohmann::json capture_environment();

}  // namespace pfx::gates

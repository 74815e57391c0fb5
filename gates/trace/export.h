// `kerneltrace export`: a trace in the formats other tools read.
//   perfetto  Chrome trace-event JSON, which ui.perfetto.dev and chrome://tracing open: per GPU
//             one process with one track per stream holding its kernels, and above each, a
//             "ranges" track holding the NVTX ranges as slices spanning the GPU time of the kernels
//             launched inside them (prefill → blk.7.attn_v → kernel); the host process with one
//             track per OS thread holding the NVTX ranges as the CPU saw them. Times in µs.
//   csv       one row per kernel: name, device, stream, start/end/duration ns, grid, block,
//             registers, shared memory, the NVTX range path it was launched under and its role.
#pragma once
#include <nlohmann/json.hpp>
#include <string>

#include "trace/trace_model.h"

namespace pfx::trace {

nlohmann::json export_chrome_trace(const Trace& trace);
std::string export_kernels_csv(const Trace& trace);

}  // namespace pfx::trace

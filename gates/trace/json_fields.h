// The one JSON form of each record that traces and journals share (kernels, devices, range kinds,
// payloads, options): the journal writes a kernel exactly as the trace file does, under the same
// keys (docs/schemas/kerneltrace.md). Reads are strict, through util/json_read.h.
#pragma once
#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

#include "trace/trace_model.h"
#include "util/json_read.h"
#include "trace/trace_options.h"

namespace pfx::trace {

using nlohmann::json;

json payload_to_json(const Payload& payload);  // null for Type::none
Payload payload_from_json(const json& value, const std::string& where);

json options_to_json(const TraceOptions& options);
TraceOptions options_from_json(const json& value, const std::string& where);

const char* range_kind_name(RangeKind kind);  // "push_pop", "start_end"
RangeKind range_kind_from_json(const json& value, const std::string& where);

// A kernel record: every TraceKernel field; `thread` and `range` null when unknown (a journal's
// kernel records are always unattributed: the launch records carry the attribution). Reading
// does not check that `range` exists in the trace (the trace reader does).
nlohmann::ordered_json kernel_to_json(const TraceKernel& k);
TraceKernel kernel_from_json(const json& value, const std::string& where);

nlohmann::ordered_json device_to_json(const TraceDevice& d);  // compute_capability "9.0"
TraceDevice device_from_json(const json& value, const std::string& where);

}  // namespace pfx::trace

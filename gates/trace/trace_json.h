// A trace as JSON (schema "kerneltrace/1"): write, read back, and validate, with errors that name
// the file and the field ("run.json: kernels[12].range: range 40 is not in ranges").
#pragma once
#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>

#include "trace/trace_model.h"

namespace pfx::trace {

// Keys in a fixed, readable order (schema first).
nlohmann::ordered_json trace_to_json(const Trace& trace);

// `source` names where the JSON came from in error messages (a file path).
Trace trace_from_json(const nlohmann::json& value, const std::string& source);

Trace load_trace(const std::filesystem::path& path);

// Writes to PATH.tmp, then renames over PATH, so a reader never sees half a trace.
void write_trace_file(const Trace& trace, const std::filesystem::path& path);

}  // namespace pfx::trace

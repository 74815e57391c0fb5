// Strict typed reads from nlohmann::json with errors that name the file and the field path
// ("t.json: kernels[3].start_ns: expected an unsigned integer, got string \"12\""), plus the one
// JSON form of each record that traces and journals share (kernels, devices, range kinds,
// payloads, options): the journal writes a kernel exactly as the trace file does, under the same
// keys (docs/schemas/kerneltrace.md).
#pragma once
#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

#include "trace/trace_model.h"
#include "trace/trace_options.h"

namespace pfx::trace {

using nlohmann::json;

// Joins a location and a key: "f.json: " + "kernels" -> "f.json: kernels"; "f.json: process" +
// "pid" -> "f.json: process.pid". A location ending in ": " is a file/line prefix.
std::string json_path(const std::string& where, std::string_view key);

// "string \"abc\"", "number 3", "null", "object", ... (for "got ..." in messages).
std::string describe_json(const json& value);

// obj[key]; fails "<where>: expected an object" or "<where>.<key>: missing".
const json& json_field(const json& obj, std::string_view key, const std::string& where);
// obj[key] or nullptr when absent or null.
const json* json_optional_field(const json& obj, std::string_view key, const std::string& where);

std::uint64_t json_u64(const json& value, const std::string& where);
std::uint32_t json_u32(const json& value, const std::string& where);
std::int32_t json_i32(const json& value, const std::string& where);
double json_number(const json& value, const std::string& where);
bool json_bool(const json& value, const std::string& where);
std::string json_string(const json& value, const std::string& where);

// The required fields of one JSON object, read with the functions above; every error names
// json_path(where, key). f.u64("ts") is json_u64(json_field(obj, "ts", where), json_path(where, "ts")).
class FieldReader {
 public:
  FieldReader(const json& obj, std::string where) : obj_(obj), where_(std::move(where)) {}
  const json& field(std::string_view key) const { return json_field(obj_, key, where_); }
  std::string path(std::string_view key) const { return json_path(where_, key); }
  std::uint64_t u64(std::string_view key) const { return json_u64(field(key), path(key)); }
  std::uint32_t u32(std::string_view key) const { return json_u32(field(key), path(key)); }
  std::int32_t i32(std::string_view key) const { return json_i32(field(key), path(key)); }
  std::string str(std::string_view key) const { return json_string(field(key), path(key)); }

 private:
  const json& obj_;
  std::string where_;
};

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

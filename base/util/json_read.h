// Strict typed reads from nlohmann::json with errors that name the file and the field path
// ("t.json: kernels[3].start_ns: expected an unsigned integer, got string \"12\""): the one JSON
// reader of the tracer's traces and journals and of the gates' results and figures.
#pragma once
#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

namespace pfx {

using JsonValue = nlohmann::json;

// Joins a location and a key: "f.json: " + "kernels" -> "f.json: kernels"; "f.json: process" +
// "pid" -> "f.json: process.pid". A location ending in ": " is a file/line prefix.
std::string json_path(const std::string& where, std::string_view key);

// "string \"abc\"", "number 3", "null", "object", ... (for "got ..." in messages).
std::string describe_json(const JsonValue& value);

// obj[key]; fails "<where>: expected an object" or "<where>.<key>: missing".
const JsonValue& json_field(const JsonValue& obj, std::string_view key, const std::string& where);
// obj[key] or nullptr when absent or null.
const JsonValue* json_optional_field(const JsonValue& obj, std::string_view key, const std::string& where);

std::uint64_t json_u64(const JsonValue& value, const std::string& where);
std::uint32_t json_u32(const JsonValue& value, const std::string& where);
std::int32_t json_i32(const JsonValue& value, const std::string& where);
double json_number(const JsonValue& value, const std::string& where);
bool json_bool(const JsonValue& value, const std::string& where);
std::string json_string(const JsonValue& value, const std::string& where);

// The required fields of one JSON object, read with the functions above; every error names
// json_path(where, key). f.u64("ts") is json_u64(json_field(obj, "ts", where), json_path(where, "ts")).
class FieldReader {
 public:
  FieldReader(const JsonValue& obj, std::string where) : obj_(obj), where_(std::move(where)) {}
  const JsonValue& field(std::string_view key) const { return json_field(obj_, key, where_); }
  std::string path(std::string_view key) const { return json_path(where_, key); }
  std::uint64_t u64(std::string_view key) const { return json_u64(field(key), path(key)); }
  std::uint32_t u32(std::string_view key) const { return json_u32(field(key), path(key)); }
  std::int32_t i32(std::string_view key) const { return json_i32(field(key), path(key)); }
  std::string str(std::string_view key) const { return json_string(field(key), path(key)); }
  // Optional fields: absent or null → the default (or empty).
  const JsonValue* optional(std::string_view key) const { return json_optional_field(obj_, key, where_); }
  std::string str_or(std::string_view key, std::string dflt = {}) const {
    const JsonValue* v = optional(key);
    return v ? json_string(*v, path(key)) : dflt;
  }
  std::optional<double> number_or_null(std::string_view key) const {
    const JsonValue* v = optional(key);
    return v ? std::optional<double>(json_number(*v, path(key))) : std::nullopt;
  }
  bool bool_or(std::string_view key, bool dflt) const {
    const JsonValue* v = optional(key);
    return v ? json_bool(*v, path(key)) : dflt;
  }

 private:
  const JsonValue& obj_;
  std::string where_;
};

}  // namespace pfx

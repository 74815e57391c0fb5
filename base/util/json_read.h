// Strict typed reads from nlohmann::json with errors that name the file and the field path
// ("t.json: kernels[3].start_ns: expected an unsigned integer, got string \"12\""): the one JSON
// reader of the tracer's traces and journals and of the gates' results and figures.
#pragma once
#include <cstdint>
#include <initializer_list>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <variant>

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

  // A record's fields and the members they go to, each read as its member's type says (a
  // uint32_t member through json_u32, ...), so a record's reader is its one list of fields:
  //   f.read({{"name", &k.name}, {"device", &k.device}});         // required, read in this order
  //   f.read_present({{"note", &row.note}});                       // absent or null: left as it is
  using Member = std::variant<std::string*, bool*, std::int32_t*, std::uint32_t*, std::uint64_t*>;
  using Fields = std::initializer_list<std::pair<std::string_view, Member>>;
  // (Plain pair members, not structured bindings: clang 14, the fuzz build's compiler, cannot
  // capture a structured binding in a lambda.)
  void read(Fields fields) const {
    for (const auto& f : fields) {
      const std::string_view key = f.first;
      std::visit([&](auto* m) { *m = as(field(key), key, m); }, f.second);
    }
  }
  void read_present(Fields fields) const {
    for (const auto& f : fields) {
      const std::string_view key = f.first;
      if (const JsonValue* v = optional(key)) std::visit([&](auto* m) { *m = as(*v, key, m); }, f.second);
    }
  }

 private:
  std::string as(const JsonValue& v, std::string_view key, const std::string*) const { return json_string(v, path(key)); }
  bool as(const JsonValue& v, std::string_view key, const bool*) const { return json_bool(v, path(key)); }
  std::int32_t as(const JsonValue& v, std::string_view key, const std::int32_t*) const { return json_i32(v, path(key)); }
  std::uint32_t as(const JsonValue& v, std::string_view key, const std::uint32_t*) const { return json_u32(v, path(key)); }
  std::uint64_t as(const JsonValue& v, std::string_view key, const std::uint64_t*) const { return json_u64(v, path(key)); }

  const JsonValue& obj_;
  std::string where_;
};

}  // namespace pfx

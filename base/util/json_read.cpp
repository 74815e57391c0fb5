// Strict typed JSON reads (see json_read.h).
#include "util/json_read.h"

#include <algorithm>
#include <limits>

#include "util/error.h"

namespace pfx {

namespace {
// The location as a message prefix: "f.json: " (a bare file/line prefix) prints as "f.json".
std::string loc(const std::string& where) {
  if (where.size() >= 2 && where.compare(where.size() - 2, 2, ": ") == 0) return where.substr(0, where.size() - 2);
  return where;
}
}  // namespace

std::string json_path(const std::string& where, std::string_view key) {
  if (where.empty() || (where.size() >= 2 && where.compare(where.size() - 2, 2, ": ") == 0)) {
    return where + std::string(key);
  }
  return where + "." + std::string(key);
}

std::string describe_json(const nlohmann::json& value) {
  switch (value.type()) {
    case nlohmann::json::value_t::null: return "null";
    case nlohmann::json::value_t::boolean: return value.get<bool>() ? "true" : "false";
    case nlohmann::json::value_t::string: {
      std::string text = value.get<std::string>();
      if (text.size() > 40) text = text.substr(0, 40) + "...";
      return "string \"" + text + "\"";
    }
    case nlohmann::json::value_t::number_integer:
    case nlohmann::json::value_t::number_unsigned:
    case nlohmann::json::value_t::number_float: return "number " + value.dump();
    case nlohmann::json::value_t::object: return "an object";
    case nlohmann::json::value_t::array: return "an array";
    default: return "an unsupported JSON value";
  }
}

const nlohmann::json& json_field(const nlohmann::json& obj, std::string_view key, const std::string& where) {
  if (!obj.is_object()) fail(loc(where), ": expected an object, got ", describe_json(obj));
  auto it = obj.find(key);
  if (it == obj.end()) fail(json_path(where, key), ": missing");
  return *it;
}

const nlohmann::json* json_optional_field(const nlohmann::json& obj, std::string_view key, const std::string& where) {
  if (!obj.is_object()) fail(loc(where), ": expected an object, got ", describe_json(obj));
  auto it = obj.find(key);
  if (it == obj.end() || it->is_null()) return nullptr;
  return &*it;
}

std::uint64_t json_u64(const nlohmann::json& value, const std::string& where) {
  if (value.is_number_unsigned()) return value.get<std::uint64_t>();
  if (value.is_number_integer() && value.get<std::int64_t>() >= 0) {
    return static_cast<std::uint64_t>(value.get<std::int64_t>());
  }
  fail(loc(where), ": expected an unsigned integer, got ", describe_json(value));
}

std::uint32_t json_u32(const nlohmann::json& value, const std::string& where) {
  std::uint64_t v = json_u64(value, where);
  if (v > std::numeric_limits<std::uint32_t>::max()) {
    fail(loc(where), ": expected an unsigned 32-bit integer, got ", describe_json(value));
  }
  return static_cast<std::uint32_t>(v);
}

std::int32_t json_i32(const nlohmann::json& value, const std::string& where) {
  if (value.is_number_integer()) {
    std::int64_t v = value.is_number_unsigned() ? static_cast<std::int64_t>(std::min<std::uint64_t>(
                                                      value.get<std::uint64_t>(), std::numeric_limits<std::int64_t>::max()))
                                                : value.get<std::int64_t>();
    if (v >= std::numeric_limits<std::int32_t>::min() && v <= std::numeric_limits<std::int32_t>::max()) {
      return static_cast<std::int32_t>(v);
    }
  }
  fail(loc(where), ": expected a 32-bit integer, got ", describe_json(value));
}

double json_number(const nlohmann::json& value, const std::string& where) {
  if (value.is_number()) return value.get<double>();
  fail(loc(where), ": expected a number, got ", describe_json(value));
}

bool json_bool(const nlohmann::json& value, const std::string& where) {
  if (value.is_boolean()) return value.get<bool>();
  fail(loc(where), ": expected true or false, got ", describe_json(value));
}

std::string json_string(const nlohmann::json& value, const std::string& where) {
  if (value.is_string()) return value.get<std::string>();
  fail(loc(where), ": expected a string, got ", describe_json(value));
}

}  // namespace pfx

// Typed metadata getters of gguf::File: accept every compatible stored type (any integer width
// for integers, any numeric type for floats), range-check, and name file, key and types on error.
#include <cmath>
#include <cstring>
#include <limits>

#include "gguf/gguf.h"
#include "util/error.h"

namespace pfx::gguf {

namespace {

bool is_unsigned(ValueType t) {
  return t == ValueType::UINT8 || t == ValueType::UINT16 || t == ValueType::UINT32 || t == ValueType::UINT64;
}
bool is_signed(ValueType t) {
  return t == ValueType::INT8 || t == ValueType::INT16 || t == ValueType::INT32 || t == ValueType::INT64;
}
bool is_integer(ValueType t) { return is_unsigned(t) || is_signed(t); }
bool is_float(ValueType t) { return t == ValueType::FLOAT32 || t == ValueType::FLOAT64; }

// Element k of a packed little-endian numeric array, widened without loss.
template <class T>
T load(const std::vector<uint8_t>& raw, size_t k) {
  T v;
  std::memcpy(&v, raw.data() + k * sizeof(T), sizeof(T));
  return v;
}

struct Scalar {  // one integer or float element, in the widest type of its kind
  bool negative = false;
  uint64_t u = 0;
  int64_t i = 0;
  double f = 0;
};

Scalar element(const Value& v, size_t k) {
  Scalar s;
  switch (v.array_type) {
    case ValueType::UINT8: s.u = load<uint8_t>(v.raw, k); break;
    case ValueType::UINT16: s.u = load<uint16_t>(v.raw, k); break;
    case ValueType::UINT32: s.u = load<uint32_t>(v.raw, k); break;
    case ValueType::UINT64: s.u = load<uint64_t>(v.raw, k); break;
    case ValueType::BOOL: s.u = load<uint8_t>(v.raw, k); break;
    case ValueType::INT8: s.i = load<int8_t>(v.raw, k); break;
    case ValueType::INT16: s.i = load<int16_t>(v.raw, k); break;
    case ValueType::INT32: s.i = load<int32_t>(v.raw, k); break;
    case ValueType::INT64: s.i = load<int64_t>(v.raw, k); break;
    case ValueType::FLOAT32: s.f = load<float>(v.raw, k); break;
    case ValueType::FLOAT64: s.f = load<double>(v.raw, k); break;
    default: break;
  }
  if (is_signed(v.array_type)) s.negative = s.i < 0;
  return s;
}

}  // namespace

void File::fail_key(std::string_view key, std::string_view expected, const Value& found) const {
  fail(path_.string(), ": metadata key '", key, "': expected ", expected, ", found ", found.type_string());
}

#define PFX_FIND_OR_FAIL(key, expected)                                                           \
  const Value* v = find(key);                                                                     \
  if (!v) fail(path_.string(), ": metadata key '", key, "' is missing (expected ", expected, ")")

std::string File::get_string(std::string_view key) const {
  PFX_FIND_OR_FAIL(key, "a string");
  if (v->type != ValueType::STRING) fail_key(key, "string", *v);
  return v->str;
}

uint64_t File::get_uint(std::string_view key) const {
  PFX_FIND_OR_FAIL(key, "an unsigned integer");
  if (is_unsigned(v->type)) return v->u;
  if (is_signed(v->type)) {
    if (v->i < 0) fail(path_.string(), ": metadata key '", key, "': value ", v->i, " is negative (expected >= 0)");
    return static_cast<uint64_t>(v->i);
  }
  fail_key(key, "an unsigned integer", *v);
}

int64_t File::get_int(std::string_view key) const {
  PFX_FIND_OR_FAIL(key, "an integer");
  if (is_signed(v->type)) return v->i;
  if (is_unsigned(v->type)) {
    if (v->u > static_cast<uint64_t>(std::numeric_limits<int64_t>::max())) {
      fail(path_.string(), ": metadata key '", key, "': value ", v->u, " does not fit int64");
    }
    return static_cast<int64_t>(v->u);
  }
  fail_key(key, "an integer", *v);
}

double File::get_float(std::string_view key) const {
  PFX_FIND_OR_FAIL(key, "a number");
  if (is_float(v->type)) return v->f;
  if (is_unsigned(v->type)) return static_cast<double>(v->u);
  if (is_signed(v->type)) return static_cast<double>(v->i);
  fail_key(key, "a number", *v);
}

bool File::get_bool(std::string_view key) const {
  PFX_FIND_OR_FAIL(key, "a bool");
  if (v->type != ValueType::BOOL) fail_key(key, "bool", *v);
  return v->u != 0;
}

std::vector<std::string> File::get_string_array(std::string_view key) const {
  PFX_FIND_OR_FAIL(key, "an array of strings");
  if (v->type != ValueType::ARRAY || v->array_type != ValueType::STRING) fail_key(key, "array[string]", *v);
  return v->strings;
}

std::vector<float> File::get_float_array(std::string_view key) const {
  PFX_FIND_OR_FAIL(key, "an array of numbers");
  if (v->type != ValueType::ARRAY || !(is_integer(v->array_type) || is_float(v->array_type))) {
    fail_key(key, "a numeric array", *v);
  }
  const size_t n = static_cast<size_t>(v->array_size());
  std::vector<float> out(n);
  if (v->array_type == ValueType::FLOAT32) {
    if (n) std::memcpy(out.data(), v->raw.data(), n * sizeof(float));
    return out;
  }
  for (size_t k = 0; k < n; ++k) {
    const Scalar s = element(*v, k);
    out[k] = is_float(v->array_type)    ? static_cast<float>(s.f)
             : is_signed(v->array_type) ? static_cast<float>(s.i)
                                        : static_cast<float>(s.u);
  }
  return out;
}

std::vector<int64_t> File::get_int_array(std::string_view key) const {
  PFX_FIND_OR_FAIL(key, "an array of integers");
  if (v->type != ValueType::ARRAY || !is_integer(v->array_type)) fail_key(key, "an integer array", *v);
  const size_t n = static_cast<size_t>(v->array_size());
  std::vector<int64_t> out(n);
  for (size_t k = 0; k < n; ++k) {
    const Scalar s = element(*v, k);
    if (is_signed(v->array_type)) {
      out[k] = s.i;
    } else {
      if (s.u > static_cast<uint64_t>(std::numeric_limits<int64_t>::max())) {
        fail(path_.string(), ": metadata key '", key, "': element ", k, " = ", s.u, " does not fit int64");
      }
      out[k] = static_cast<int64_t>(s.u);
    }
  }
  return out;
}

#undef PFX_FIND_OR_FAIL

std::string File::get_string_or(std::string_view key, std::string dflt) const {
  return has(key) ? get_string(key) : std::move(dflt);
}
uint64_t File::get_uint_or(std::string_view key, uint64_t dflt) const { return has(key) ? get_uint(key) : dflt; }
int64_t File::get_int_or(std::string_view key, int64_t dflt) const { return has(key) ? get_int(key) : dflt; }
double File::get_float_or(std::string_view key, double dflt) const { return has(key) ? get_float(key) : dflt; }
bool File::get_bool_or(std::string_view key, bool dflt) const { return has(key) ? get_bool(key) : dflt; }

}  // namespace pfx::gguf

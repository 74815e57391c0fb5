// gguf::Value helpers: type names and sizes, array sizes, constructors used by the writer.
#include <cstring>

#include "gguf/gguf.h"
#include "util/error.h"

namespace pfx::gguf {

std::string_view value_type_name(ValueType t) {
  switch (t) {
    case ValueType::UINT8: return "uint8";
    case ValueType::INT8: return "int8";
    case ValueType::UINT16: return "uint16";
    case ValueType::INT16: return "int16";
    case ValueType::UINT32: return "uint32";
    case ValueType::INT32: return "int32";
    case ValueType::FLOAT32: return "float32";
    case ValueType::BOOL: return "bool";
    case ValueType::STRING: return "string";
    case ValueType::ARRAY: return "array";
    case ValueType::UINT64: return "uint64";
    case ValueType::INT64: return "int64";
    case ValueType::FLOAT64: return "float64";
  }
  return "type#invalid";
}

size_t value_type_size(ValueType t) {
  switch (t) {
    case ValueType::UINT8:
    case ValueType::INT8:
    case ValueType::BOOL: return 1;
    case ValueType::UINT16:
    case ValueType::INT16: return 2;
    case ValueType::UINT32:
    case ValueType::INT32:
    case ValueType::FLOAT32: return 4;
    case ValueType::UINT64:
    case ValueType::INT64:
    case ValueType::FLOAT64: return 8;
    case ValueType::STRING:
    case ValueType::ARRAY: return 0;
  }
  return 0;
}

uint64_t Value::array_size() const {
  if (type != ValueType::ARRAY) return 0;
  if (array_type == ValueType::STRING) return strings.size();
  if (array_type == ValueType::ARRAY) return items.size();
  const size_t es = value_type_size(array_type);
  return es ? raw.size() / es : 0;
}

std::string Value::type_string() const {
  if (type != ValueType::ARRAY) return std::string(value_type_name(type));
  return "array[" + std::string(value_type_name(array_type)) + "]";
}

namespace {
Value scalar(ValueType t) {
  Value v;
  v.type = t;
  return v;
}
}  // namespace

Value Value::of_u8(uint8_t x) { Value v = scalar(ValueType::UINT8); v.u = x; return v; }
Value Value::of_i8(int8_t x) { Value v = scalar(ValueType::INT8); v.i = x; return v; }
Value Value::of_u16(uint16_t x) { Value v = scalar(ValueType::UINT16); v.u = x; return v; }
Value Value::of_i16(int16_t x) { Value v = scalar(ValueType::INT16); v.i = x; return v; }
Value Value::of_u32(uint32_t x) { Value v = scalar(ValueType::UINT32); v.u = x; return v; }
Value Value::of_i32(int32_t x) { Value v = scalar(ValueType::INT32); v.i = x; return v; }
Value Value::of_u64(uint64_t x) { Value v = scalar(ValueType::UINT64); v.u = x; return v; }
Value Value::of_i64(int64_t x) { Value v = scalar(ValueType::INT64); v.i = x; return v; }
Value Value::of_f32(float x) { Value v = scalar(ValueType::FLOAT32); v.f = x; return v; }
Value Value::of_f64(double x) { Value v = scalar(ValueType::FLOAT64); v.f = x; return v; }
Value Value::of_bool(bool x) { Value v = scalar(ValueType::BOOL); v.u = x ? 1 : 0; return v; }
Value Value::of_string(std::string x) { Value v = scalar(ValueType::STRING); v.str = std::move(x); return v; }

Value Value::of_string_array(std::vector<std::string> x) {
  Value v = scalar(ValueType::ARRAY);
  v.array_type = ValueType::STRING;
  v.strings = std::move(x);
  return v;
}

Value Value::of_f32_array(const std::vector<float>& x) {
  std::vector<uint8_t> raw(x.size() * sizeof(float));
  if (!x.empty()) std::memcpy(raw.data(), x.data(), raw.size());
  return of_raw_array(ValueType::FLOAT32, std::move(raw));
}

Value Value::of_i32_array(const std::vector<int32_t>& x) {
  std::vector<uint8_t> raw(x.size() * sizeof(int32_t));
  if (!x.empty()) std::memcpy(raw.data(), x.data(), raw.size());
  return of_raw_array(ValueType::INT32, std::move(raw));
}

Value Value::of_raw_array(ValueType element_type, std::vector<uint8_t> raw) {
  const size_t es = value_type_size(element_type);
  if (es == 0) fail("gguf: of_raw_array: element type ", value_type_name(element_type), " is not fixed-size");
  if (raw.size() % es != 0) {
    fail("gguf: of_raw_array: ", raw.size(), " bytes is not a multiple of the ", value_type_name(element_type),
         " size ", es);
  }
  Value v = scalar(ValueType::ARRAY);
  v.array_type = element_type;
  v.raw = std::move(raw);
  return v;
}

Value Value::of_array_of_arrays(std::vector<Value> x) {
  for (const Value& item : x) {
    if (item.type != ValueType::ARRAY) fail("gguf: of_array_of_arrays: every item must be an array");
  }
  Value v = scalar(ValueType::ARRAY);
  v.array_type = ValueType::ARRAY;
  v.items = std::move(x);
  return v;
}

int64_t TensorInfo::rows() const {
  int64_t r = 1;
  for (size_t k = 1; k < dims.size(); ++k) r *= dims[k];
  return r;
}

int64_t TensorInfo::row_bytes() const { return quant::row_bytes(type, cols()); }

}  // namespace pfx::gguf

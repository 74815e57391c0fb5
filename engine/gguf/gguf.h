// GGUF v2/v3 reader: memory-maps a file, validates every header, KV and tensor-table field
// before anything is used, and exposes typed metadata getters and zero-copy tensor data.
// Format: https://github.com/ggml-org/ggml/blob/master/docs/gguf.md (little-endian only).
// Opening costs O(metadata): nothing is allocated for a count before the bytes that encode it
// are known to be in the file, and the parsed metadata may take at most kMaxMetadataBytes.
#pragma once
#include <cstdint>
#include <filesystem>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "quant/types.h"

namespace pfx::gguf {

enum class ValueType : uint32_t {
  UINT8 = 0,
  INT8 = 1,
  UINT16 = 2,
  INT16 = 3,
  UINT32 = 4,
  INT32 = 5,
  FLOAT32 = 6,
  BOOL = 7,
  STRING = 8,
  ARRAY = 9,
  UINT64 = 10,
  INT64 = 11,
  FLOAT64 = 12,
};

// "uint32", "string", "array" ...; "type#<id>" for ids outside the enum.
std::string_view value_type_name(ValueType t);
// Bytes of one element of a fixed-size type; 0 for STRING and ARRAY.
size_t value_type_size(ValueType t);

// One metadata value. Scalars live in the field their type selects: unsigned ints and BOOL in
// `u`, signed ints in `i`, FLOAT32/FLOAT64 in `f` (FLOAT32 widened exactly), STRING in `str`.
// Arrays: `array_type` is the element type; fixed-size elements are packed little-endian in
// `raw` (as in the file), strings in `strings`, nested arrays in `items`.
struct Value {
  ValueType type = ValueType::UINT8;
  ValueType array_type = ValueType::UINT8;  // meaningful only when type == ARRAY
  uint64_t u = 0;
  int64_t i = 0;
  double f = 0.0;
  std::string str;
  std::vector<uint8_t> raw;
  std::vector<std::string> strings;
  std::vector<Value> items;

  bool is_array() const { return type == ValueType::ARRAY; }
  uint64_t array_size() const;  // element count; 0 for a scalar

  // "uint32", "string", "array[float32]".
  std::string type_string() const;

  // Constructors for writers and tests.
  static Value of_u8(uint8_t v);
  static Value of_i8(int8_t v);
  static Value of_u16(uint16_t v);
  static Value of_i16(int16_t v);
  static Value of_u32(uint32_t v);
  static Value of_i32(int32_t v);
  static Value of_u64(uint64_t v);
  static Value of_i64(int64_t v);
  static Value of_f32(float v);
  static Value of_f64(double v);
  static Value of_bool(bool v);
  static Value of_string(std::string v);
  static Value of_string_array(std::vector<std::string> v);
  static Value of_f32_array(const std::vector<float>& v);
  static Value of_i32_array(const std::vector<int32_t>& v);
  // Packs numeric elements given as raw little-endian bytes (count = raw.size() / element size).
  static Value of_raw_array(ValueType element_type, std::vector<uint8_t> raw);
  static Value of_array_of_arrays(std::vector<Value> items);
};

// Memory the parsed key-value metadata and tensor table may take (counted as the reader
// allocates it). The largest real vocabularies (256k tokens, 300k merges) need under 16 MiB; a
// file past this is refused, so no file, however small or crafted, costs more to open.
constexpr uint64_t kMaxMetadataBytes = uint64_t{32} << 20;
// Tensors a file may have. Real models have at most a few thousand (Llama 3.1 405B: 1,138;
// DeepSeek-V3: ~1,025); the cap bounds what consumers hold per tensor (model binding keeps a
// reference to each), which the metadata budget does not see.
constexpr uint64_t kMaxTensors = uint64_t{1} << 16;

struct TensorInfo {
  std::string name;
  std::vector<int64_t> dims;  // ggml order: dims[0] = elements per row (contiguous)
  quant::Type type = quant::Type::F32;
  uint64_t offset = 0;        // relative to the data section
  int64_t n_elements = 0;
  int64_t n_bytes = 0;
  int64_t rows() const;       // product of dims[1..]
  int64_t cols() const { return dims.empty() ? 1 : dims[0]; }
  int64_t row_bytes() const;  // bytes of one row
};

class File {
 public:
  // Maps and validates the whole file; throws pfx::Error naming the file, the byte offset (or
  // key/tensor) and what was expected. GGUF v1 is rejected.
  static File open(const std::filesystem::path& path);

  File(File&&) noexcept;
  File& operator=(File&&) noexcept;
  File(const File&) = delete;             // owns a mapping: one owner
  File& operator=(const File&) = delete;
  ~File();

  uint32_t version() const { return version_; }
  const std::filesystem::path& path() const { return path_; }
  uint64_t alignment() const { return alignment_; }
  uint64_t data_offset() const { return data_offset_; }  // absolute start of the data section
  uint64_t file_size() const { return size_; }
  // Memory the parsed metadata and tensor table take, as charged against kMaxMetadataBytes.
  uint64_t metadata_bytes() const { return metadata_bytes_; }

  // Metadata, in file order.
  bool has(std::string_view key) const { return find(key) != nullptr; }
  const Value* find(std::string_view key) const;
  const std::vector<std::pair<std::string, Value>>& kv() const { return kv_; }

  // Typed getters: throw pfx::Error naming the file and key if the key is missing or holds an
  // incompatible type (message says expected vs found) or a value out of range.
  std::string get_string(std::string_view key) const;
  uint64_t get_uint(std::string_view key) const;   // any integer type, must be >= 0
  int64_t get_int(std::string_view key) const;     // any integer type, must fit int64
  double get_float(std::string_view key) const;    // any numeric type
  bool get_bool(std::string_view key) const;
  std::vector<std::string> get_string_array(std::string_view key) const;
  std::vector<float> get_float_array(std::string_view key) const;   // any numeric elements
  std::vector<int64_t> get_int_array(std::string_view key) const;   // any integer elements

  // Same, but `dflt` when the key is absent (a present key of the wrong type still throws).
  std::string get_string_or(std::string_view key, std::string dflt) const;
  uint64_t get_uint_or(std::string_view key, uint64_t dflt) const;
  int64_t get_int_or(std::string_view key, int64_t dflt) const;
  double get_float_or(std::string_view key, double dflt) const;
  bool get_bool_or(std::string_view key, bool dflt) const;

  // Tensors, in file order.
  const std::vector<TensorInfo>& tensors() const { return tensors_; }
  const TensorInfo* find_tensor(std::string_view name) const;
  // Like find_tensor but throws pfx::Error naming the file and tensor if absent.
  const TensorInfo& tensor(std::string_view name) const;
  // Pointer into the mapping: n_bytes valid bytes, at a multiple of alignment() (>= 8) within
  // the file and so aligned for the type's elements (quant::element_alignment) in memory.
  const uint8_t* tensor_data(const TensorInfo& t) const;

 private:
  File() = default;
  void release() noexcept;
  [[noreturn]] void fail_key(std::string_view key, std::string_view expected, const Value& found) const;

  std::filesystem::path path_;
  const uint8_t* base_ = nullptr;  // mapping (nullptr for an empty file)
  uint64_t size_ = 0;
  uint32_t version_ = 0;
  uint64_t alignment_ = 32;
  uint64_t data_offset_ = 0;
  uint64_t metadata_bytes_ = 0;
  std::vector<std::pair<std::string, Value>> kv_;
  std::vector<TensorInfo> tensors_;
  // Indices of kv_ / tensors_ sorted by name: O(log n) lookups however many entries a file has.
  std::vector<uint32_t> kv_by_key_, tensors_by_name_;

  friend class Parser;
};

}  // namespace pfx::gguf

// GGUF v3 writer: metadata and tensors in, a complete file out (written crash-safely through
// util/atomic_file.h, so a failed write never leaves a partial file or harms an existing one).
// Streams: tensors are produced one at a time by fill callbacks, so multi-GB files need only
// one tensor's bytes in memory.
#pragma once
#include <cstdint>
#include <filesystem>
#include <functional>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <utility>
#include <vector>

#include "gguf/gguf.h"
#include "quant/types.h"

namespace pfx::gguf {

class Writer {
 public:
  // Metadata, written in the order first set; setting a key again replaces its value in place.
  void set_u8(const std::string& key, uint8_t v) { set(key, Value::of_u8(v)); }
  void set_i8(const std::string& key, int8_t v) { set(key, Value::of_i8(v)); }
  void set_u16(const std::string& key, uint16_t v) { set(key, Value::of_u16(v)); }
  void set_i16(const std::string& key, int16_t v) { set(key, Value::of_i16(v)); }
  void set_u32(const std::string& key, uint32_t v) { set(key, Value::of_u32(v)); }
  void set_i32(const std::string& key, int32_t v) { set(key, Value::of_i32(v)); }
  void set_u64(const std::string& key, uint64_t v) { set(key, Value::of_u64(v)); }
  void set_i64(const std::string& key, int64_t v) { set(key, Value::of_i64(v)); }
  void set_f32(const std::string& key, float v) { set(key, Value::of_f32(v)); }
  void set_f64(const std::string& key, double v) { set(key, Value::of_f64(v)); }
  void set_bool(const std::string& key, bool v) { set(key, Value::of_bool(v)); }
  void set_string(const std::string& key, std::string v) { set(key, Value::of_string(std::move(v))); }
  void set_string_array(const std::string& key, std::vector<std::string> v) {
    set(key, Value::of_string_array(std::move(v)));
  }
  void set_float_array(const std::string& key, const std::vector<float>& v) { set(key, Value::of_f32_array(v)); }
  void set_i32_array(const std::string& key, const std::vector<int32_t>& v) { set(key, Value::of_i32_array(v)); }
  // Any value, including arrays of other element types; throws pfx::Error if malformed.
  void set(const std::string& key, Value v);

  // Declares a tensor (ggml dim order: dims[0] = elements per row). `fill(dst)` must write
  // exactly n_bytes = rows * quant::row_bytes(type, dims[0]) bytes. Throws pfx::Error for a
  // duplicate name, bad dims, an unknown type or a row size that is not a block multiple.
  void add_tensor(std::string name, std::vector<int64_t> dims, quant::Type type,
                  std::function<void(uint8_t* dst)> fill);

  // Alignment of tensor data (a power of two >= 8); default 32, or the value set as
  // general.alignment (a uint32). Written as general.alignment only if it is not 32.
  void set_alignment(uint32_t alignment);

  // Writes the file. Fill callbacks are called one at a time, in add_tensor order, on the
  // calling thread (a callback may itself parallelize, e.g. with pfx::parallel_for over rows).
  // Throws pfx::Error on I/O failure or a callback's exception; the target is then untouched.
  void write(const std::filesystem::path& path);

 private:
  struct PendingTensor {
    TensorInfo info;
    std::function<void(uint8_t*)> fill;
  };
  std::vector<std::pair<std::string, Value>> kv_;
  std::unordered_map<std::string, size_t> kv_index_;  // key -> index in kv_
  std::vector<PendingTensor> tensors_;
  std::unordered_set<std::string> tensor_names_;
  uint32_t alignment_ = 32;
};

}  // namespace pfx::gguf

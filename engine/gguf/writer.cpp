// GGUF v3 writer: serializes the header, metadata and tensor table into memory, then streams
// tensor data one tensor at a time through an AtomicFile (temporary file renamed over the target).
#include "gguf/writer.h"

#include <algorithm>
#include <limits>
#include <memory>

#include "util/atomic_file.h"
#include "util/error.h"

namespace pfx::gguf {

namespace {

constexpr uint32_t kMagic = 0x46554747;  // "GGUF"
constexpr uint32_t kVersion = 3;

class Bytes {
 public:
  template <class T>
  void put(T v) {
    const auto* p = reinterpret_cast<const uint8_t*>(&v);
    buf_.insert(buf_.end(), p, p + sizeof v);
  }
  void put_string(const std::string& s) {
    put<uint64_t>(s.size());
    buf_.insert(buf_.end(), s.begin(), s.end());
  }
  void put_raw(const std::vector<uint8_t>& r) { buf_.insert(buf_.end(), r.begin(), r.end()); }
  void put_value(const Value& v);
  void put_array_body(const Value& v);
  const std::vector<uint8_t>& data() const { return buf_; }
  size_t size() const { return buf_.size(); }

 private:
  std::vector<uint8_t> buf_;
};

void Bytes::put_array_body(const Value& v) {
  put<uint32_t>(static_cast<uint32_t>(v.array_type));
  put<uint64_t>(v.array_size());
  if (v.array_type == ValueType::STRING) {
    for (const auto& s : v.strings) put_string(s);
  } else if (v.array_type == ValueType::ARRAY) {
    for (const auto& item : v.items) put_array_body(item);
  } else {
    put_raw(v.raw);
  }
}

void Bytes::put_value(const Value& v) {
  switch (v.type) {
    case ValueType::UINT8: put<uint8_t>(static_cast<uint8_t>(v.u)); break;
    case ValueType::INT8: put<int8_t>(static_cast<int8_t>(v.i)); break;
    case ValueType::UINT16: put<uint16_t>(static_cast<uint16_t>(v.u)); break;
    case ValueType::INT16: put<int16_t>(static_cast<int16_t>(v.i)); break;
    case ValueType::UINT32: put<uint32_t>(static_cast<uint32_t>(v.u)); break;
    case ValueType::INT32: put<int32_t>(static_cast<int32_t>(v.i)); break;
    case ValueType::UINT64: put<uint64_t>(v.u); break;
    case ValueType::INT64: put<int64_t>(v.i); break;
    case ValueType::FLOAT32: put<float>(static_cast<float>(v.f)); break;
    case ValueType::FLOAT64: put<double>(v.f); break;
    case ValueType::BOOL: put<uint8_t>(v.u ? 1 : 0); break;
    case ValueType::STRING: put_string(v.str); break;
    case ValueType::ARRAY: put_array_body(v); break;
  }
}

void check_value(const std::string& key, const Value& v, int depth) {
  if (static_cast<uint32_t>(v.type) > static_cast<uint32_t>(ValueType::FLOAT64)) {
    fail("gguf writer: key '", key, "': invalid value type id ", static_cast<uint32_t>(v.type));
  }
  if (v.type != ValueType::ARRAY) return;
  if (depth > 8) fail("gguf writer: key '", key, "': arrays nested deeper than 8 levels");
  if (static_cast<uint32_t>(v.array_type) > static_cast<uint32_t>(ValueType::FLOAT64)) {
    fail("gguf writer: key '", key, "': invalid array element type id ", static_cast<uint32_t>(v.array_type));
  }
  const size_t es = value_type_size(v.array_type);
  if (es && v.raw.size() % es != 0) {
    fail("gguf writer: key '", key, "': ", v.raw.size(), " raw bytes is not a whole number of ",
         value_type_name(v.array_type), " elements");
  }
  for (const Value& item : v.items) {
    if (item.type != ValueType::ARRAY) fail("gguf writer: key '", key, "': nested array items must be arrays");
    check_value(key, item, depth + 1);
  }
}

uint64_t align_up(uint64_t x, uint64_t a) { return (x + a - 1) / a * a; }

}  // namespace

void Writer::set(const std::string& key, Value v) {
  check_value(key, v, 0);
  if (key == "general.alignment") {
    if (v.type != ValueType::UINT32) fail("gguf writer: general.alignment must be a uint32, got ", v.type_string());
    const uint64_t a = v.u;
    if (a < 8 || (a & (a - 1)) != 0 || a > (uint64_t{1} << 30)) {
      fail("gguf writer: general.alignment ", a, " is not a power of two in 8..2^30 (GGUF requires a multiple of 8)");
    }
    alignment_ = static_cast<uint32_t>(a);
  }
  if (const auto it = kv_index_.find(key); it != kv_index_.end()) {
    kv_[it->second].second = std::move(v);
    return;
  }
  kv_index_.emplace(key, kv_.size());
  kv_.emplace_back(key, std::move(v));
}

void Writer::set_alignment(uint32_t alignment) {
  if (alignment == 32) {
    alignment_ = 32;
    std::erase_if(kv_, [](const auto& kv) { return kv.first == "general.alignment"; });
    kv_index_.clear();
    for (size_t i = 0; i < kv_.size(); ++i) kv_index_.emplace(kv_[i].first, i);
    return;
  }
  set_u32("general.alignment", alignment);
}

void Writer::add_tensor(std::string name, std::vector<int64_t> dims, quant::Type type,
                        std::function<void(uint8_t* dst)> fill) {
  if (tensor_names_.count(name)) fail("gguf writer: duplicate tensor name '", name, "'");
  if (dims.size() > 4) fail("gguf writer: tensor '", name, "': ", dims.size(), " dims (expected at most 4)");
  const quant::TypeTraits* tr = quant::traits(static_cast<uint32_t>(type));
  if (!tr) fail("gguf writer: tensor '", name, "': ", quant::describe_type_id(static_cast<uint32_t>(type)), " is not a valid type");
  TensorInfo info;
  info.name = std::move(name);
  info.type = type;
  info.n_elements = 1;
  for (int64_t d : dims) {
    if (d <= 0 || d > std::numeric_limits<int64_t>::max() / info.n_elements) {
      fail("gguf writer: tensor '", info.name, "': bad dimension ", d, " (expected > 0, total element count < 2^63)");
    }
    info.n_elements *= d;
  }
  info.dims = std::move(dims);
  const int64_t rb = quant::row_bytes(type, info.cols());  // throws if not a block multiple
  if (rb != 0 && info.rows() > std::numeric_limits<int64_t>::max() / rb) {
    fail("gguf writer: tensor '", info.name, "': byte size overflows int64");
  }
  info.n_bytes = info.rows() * rb;
  if (!fill) fail("gguf writer: tensor '", info.name, "': no fill callback");
  tensor_names_.insert(info.name);
  tensors_.push_back({std::move(info), std::move(fill)});
}

void Writer::write(const std::filesystem::path& path) {
  // Offsets first: each tensor starts at the next multiple of the alignment.
  uint64_t running = 0;
  for (auto& t : tensors_) {
    t.info.offset = align_up(running, alignment_);
    running = t.info.offset + static_cast<uint64_t>(t.info.n_bytes);
  }

  Bytes head;
  head.put<uint32_t>(kMagic);
  head.put<uint32_t>(kVersion);
  head.put<uint64_t>(tensors_.size());
  head.put<uint64_t>(kv_.size());
  for (const auto& [key, v] : kv_) {
    head.put_string(key);
    head.put<uint32_t>(static_cast<uint32_t>(v.type));
    head.put_value(v);
  }
  for (const auto& t : tensors_) {
    head.put_string(t.info.name);
    head.put<uint32_t>(static_cast<uint32_t>(t.info.dims.size()));
    for (int64_t d : t.info.dims) head.put<uint64_t>(static_cast<uint64_t>(d));
    head.put<uint32_t>(static_cast<uint32_t>(t.info.type));
    head.put<uint64_t>(t.info.offset);
  }

  // Crash-safe: a unique temporary file beside the target, every write checked, fsync, rename,
  // fsync of the folder (util/atomic_file.h); on any failure the target is untouched.
  AtomicFile out(path);
  auto put = [&](const void* p, size_t n) { out.write(p, n); };
  const std::vector<uint8_t> zeros(alignment_, 0);
  auto pad_to = [&](uint64_t target) {
    while (out.bytes_written() < target) {
      put(zeros.data(), static_cast<size_t>(std::min<uint64_t>(target - out.bytes_written(), zeros.size())));
    }
  };

  put(head.data().data(), head.size());
  const uint64_t data_offset = align_up(out.bytes_written(), alignment_);
  pad_to(data_offset);

  int64_t max_bytes = 0;
  for (const auto& t : tensors_) max_bytes = std::max(max_bytes, t.info.n_bytes);
  std::unique_ptr<uint8_t[]> buf(new uint8_t[static_cast<size_t>(std::max<int64_t>(max_bytes, 1))]);
  for (const auto& t : tensors_) {
    pad_to(data_offset + t.info.offset);
    try {
      t.fill(buf.get());
    } catch (const std::exception& e) {
      fail(path.string(), ": filling tensor '", t.info.name, "' failed: ", e.what());
    }
    put(buf.get(), static_cast<size_t>(t.info.n_bytes));
  }
  // Pad the end too, so the data section is a whole number of alignment units (as gguf-py does).
  pad_to(align_up(out.bytes_written(), alignment_));
  out.commit();
}

}  // namespace pfx::gguf

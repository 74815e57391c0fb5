// GGUF reader: maps the file, then parses and validates the header, the key-value metadata and
// the tensor table with every read bounds-checked, every size formed with checked arithmetic and
// the memory of the parsed metadata budgeted (kMaxMetadataBytes), before any of it is handed out.
// Names and strings from the file appear in messages escaped (util/escape.h).
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <limits>
#include <numeric>
#include <string>

#include "gguf/gguf.h"
#include "quant/types.h"
#include "util/checked.h"
#include "util/error.h"
#include "util/escape.h"

namespace pfx::gguf {

namespace {
constexpr uint32_t kMagic = 0x46554747;  // "GGUF" read as a little-endian uint32
constexpr int kMaxDims = 4;              // GGML_MAX_DIMS
constexpr int kMaxArrayDepth = 8;        // nested arrays deeper than this are rejected
// GGUF requires general.alignment to be a multiple of 8; we also need a power of two, and past
// 2^30 no real file goes.
constexpr uint64_t kMinAlignment = 8, kMaxAlignment = uint64_t{1} << 30;
// Smallest encodings, used to bound counts by the bytes left before allocating anything.
constexpr uint64_t kMinKvBytes = 8 + 4 + 1;            // empty key, type, 1-byte value
constexpr uint64_t kMinTensorInfoBytes = 8 + 4 + 4 + 8;  // empty name, n_dims 0, type, offset
// Bytes each metadata pair / tensor info is charged before its strings and arrays: the entry, its
// file offset and its sort index.
constexpr uint64_t kKvEntryBytes = sizeof(std::pair<std::string, Value>) + sizeof(uint64_t) + sizeof(uint32_t);
constexpr uint64_t kTensorEntryBytes = sizeof(TensorInfo) + sizeof(uint64_t) + 2 * sizeof(uint32_t);

// Heap bytes a std::string of `len` chars allocates (libstdc++ keeps <= 15 inline) plus malloc's
// chunk header: what the metadata budget charges beyond sizeof(std::string).
uint64_t string_heap_bytes(uint64_t len) { return len <= 15 ? 0 : (len + 1 + 8 + 15) / 16 * 16; }

// Sorted indices of `items` by `key_of(item)`; the first pair of equal keys, if any, as (a, b)
// with a before b in file order.
template <class T, class KeyOf>
std::pair<size_t, size_t> sort_by_key(const std::vector<T>& items, KeyOf key_of, std::vector<uint32_t>& order) {
  order.resize(items.size());
  std::iota(order.begin(), order.end(), uint32_t{0});
  std::sort(order.begin(), order.end(), [&](uint32_t a, uint32_t b) {
    const auto ka = key_of(items[a]), kb = key_of(items[b]);
    return ka != kb ? ka < kb : a < b;
  });
  for (size_t k = 1; k < order.size(); ++k) {
    if (key_of(items[order[k - 1]]) == key_of(items[order[k]])) return {order[k - 1], order[k]};
  }
  return {SIZE_MAX, SIZE_MAX};
}
}  // namespace

// Bounds-checked little-endian cursor over the mapping. Every failure names the file and the
// byte offset where the bad field starts.
class Parser {
 public:
  Parser(File& f) : f_(f), p_(f.base_), size_(f.size_) {}

  void parse();

 private:
  [[noreturn]] void fail_at(uint64_t off, const std::string& what) const {
    fail(f_.path_.string(), ": byte offset ", off, ": ", what);
  }
  uint64_t remaining() const { return size_ - pos_; }
  void need(uint64_t n, const char* what) const {
    if (n > remaining()) {
      fail_at(pos_, std::string("file truncated while reading ") + what + ": expected " + std::to_string(n) +
                        " more bytes, only " + std::to_string(remaining()) + " remain (file is " +
                        std::to_string(size_) + " bytes)");
    }
  }
  template <class T>
  T read(const char* what) {
    need(sizeof(T), what);
    T v;
    std::memcpy(&v, p_ + pos_, sizeof v);
    pos_ += sizeof v;
    return v;
  }
  // Counts `bytes` of parsed metadata against kMaxMetadataBytes; `at` is where the entry starts.
  void charge(uint64_t bytes, uint64_t at) {
    used_ += bytes;
    if (used_ > kMaxMetadataBytes) {
      fail_at(at, "the metadata and tensor table would take more than " + std::to_string(kMaxMetadataBytes >> 20) +
                      " MiB of memory once parsed (the reader's limit; real models need far less)");
    }
  }
  // `what` names the string in errors; `index` >= 0 appends "[index]" (an array element): the
  // label is built only when reading fails, not once per element of a 300k-entry vocabulary.
  std::string read_string(const std::string& what, int64_t index = -1);
  ValueType read_value_type(const std::string& what);
  Value read_value(ValueType type, const std::string& what, int depth);
  void read_array(Value& v, const std::string& what, int depth);
  void read_metadata(uint64_t n_kv);
  void apply_alignment();
  void read_tensor_infos(uint64_t n_tensors);
  void check_tensor_layout();

  File& f_;
  const uint8_t* p_;
  uint64_t size_;
  uint64_t pos_ = 0;
  uint64_t used_ = 0;                  // bytes charged so far
  std::vector<uint64_t> kv_at_, tensor_at_;  // file offset of each entry, for messages
};

std::string Parser::read_string(const std::string& what, int64_t index) {
  const auto label = [&] { return index < 0 ? what : what + "[" + std::to_string(index) + "]"; };
  const uint64_t at = pos_;
  if (remaining() < sizeof(uint64_t)) need(sizeof(uint64_t), ("the length of " + label()).c_str());
  const uint64_t len = read<uint64_t>("a string length");
  if (len > remaining()) {
    fail_at(at, label() + ": string length " + std::to_string(len) + " exceeds the " + std::to_string(remaining()) +
                    " bytes left in the file");
  }
  charge(string_heap_bytes(len), at);
  std::string s(reinterpret_cast<const char*>(p_ + pos_), static_cast<size_t>(len));
  pos_ += len;
  return s;
}

ValueType Parser::read_value_type(const std::string& what) {
  const uint64_t at = pos_;
  const uint32_t id = read<uint32_t>(("the value type of " + what).c_str());
  if (id > static_cast<uint32_t>(ValueType::FLOAT64)) {
    fail_at(at, what + ": invalid value type id " + std::to_string(id) + " (expected 0..12)");
  }
  return static_cast<ValueType>(id);
}

void Parser::read_array(Value& v, const std::string& what, int depth) {
  if (depth >= kMaxArrayDepth) {
    fail_at(pos_, what + ": arrays nested deeper than " + std::to_string(kMaxArrayDepth) + " levels");
  }
  v.array_type = read_value_type(what + " (array element type)");
  const uint64_t at = pos_;
  const uint64_t count = read<uint64_t>(("the element count of " + what).c_str());
  // Smallest encoding of one element: its fixed size, 8 for a string, 12 for a nested array.
  const uint64_t min_elem = v.array_type == ValueType::STRING  ? 8
                            : v.array_type == ValueType::ARRAY ? 12
                                                               : value_type_size(v.array_type);
  if (count > remaining() / min_elem) {
    fail_at(at, what + ": array of " + std::to_string(count) + " " + std::string(value_type_name(v.array_type)) +
                    " elements needs at least " + std::to_string(count) + " x " + std::to_string(min_elem) +
                    " bytes, only " + std::to_string(remaining()) + " remain");
  }
  // count * min_elem <= remaining(): none of the products below can wrap.
  switch (v.array_type) {
    case ValueType::STRING:
      charge(count * sizeof(std::string), at);
      v.strings.reserve(static_cast<size_t>(count));
      for (uint64_t k = 0; k < count; ++k) v.strings.push_back(read_string(what, static_cast<int64_t>(k)));
      break;
    case ValueType::ARRAY:
      charge(count * sizeof(Value), at);
      v.items.reserve(static_cast<size_t>(count));
      for (uint64_t k = 0; k < count; ++k) {
        Value item;
        item.type = ValueType::ARRAY;
        read_array(item, what + "[" + std::to_string(k) + "]", depth + 1);
        v.items.push_back(std::move(item));
      }
      break;
    default: {
      const uint64_t bytes = count * min_elem;
      charge(bytes, at);
      if (v.array_type == ValueType::BOOL) {
        for (uint64_t k = 0; k < count; ++k) {
          if (p_[pos_ + k] > 1) {
            fail_at(pos_ + k, what + "[" + std::to_string(k) + "]: bool value " + std::to_string(p_[pos_ + k]) +
                                  " (expected 0 or 1)");
          }
        }
      }
      v.raw.assign(p_ + pos_, p_ + pos_ + bytes);
      pos_ += bytes;
    }
  }
}

Value Parser::read_value(ValueType type, const std::string& what, int depth) {
  Value v;
  v.type = type;
  const uint64_t at = pos_;
  switch (type) {
    case ValueType::UINT8: v.u = read<uint8_t>(what.c_str()); break;
    case ValueType::INT8: v.i = read<int8_t>(what.c_str()); break;
    case ValueType::UINT16: v.u = read<uint16_t>(what.c_str()); break;
    case ValueType::INT16: v.i = read<int16_t>(what.c_str()); break;
    case ValueType::UINT32: v.u = read<uint32_t>(what.c_str()); break;
    case ValueType::INT32: v.i = read<int32_t>(what.c_str()); break;
    case ValueType::UINT64: v.u = read<uint64_t>(what.c_str()); break;
    case ValueType::INT64: v.i = read<int64_t>(what.c_str()); break;
    case ValueType::FLOAT32: v.f = read<float>(what.c_str()); break;
    case ValueType::FLOAT64: v.f = read<double>(what.c_str()); break;
    case ValueType::BOOL:
      v.u = read<uint8_t>(what.c_str());
      if (v.u > 1) fail_at(at, what + ": bool value " + std::to_string(v.u) + " (expected 0 or 1)");
      break;
    case ValueType::STRING: v.str = read_string(what); break;
    case ValueType::ARRAY: read_array(v, what, depth); break;
  }
  return v;
}

// Reserved once, exactly (no growth that would briefly hold two copies), but never more than the
// budget could fill: a count past that fails the budget before the space is needed.
template <class T>
void reserve_entries(std::vector<T>& entries, std::vector<uint64_t>& offsets, uint64_t n, uint64_t entry_bytes) {
  const size_t reserve = static_cast<size_t>(std::min(n, kMaxMetadataBytes / entry_bytes + 1));
  entries.reserve(reserve);
  offsets.reserve(reserve);
}

void Parser::read_metadata(uint64_t n_kv) {
  reserve_entries(f_.kv_, kv_at_, n_kv, kKvEntryBytes);
  for (uint64_t k = 0; k < n_kv; ++k) {
    const uint64_t at = pos_;
    charge(kKvEntryBytes, at);
    std::string key = read_string("the key of metadata pair #" + std::to_string(k));
    const std::string what = "value of key " + quote_untrusted(key);
    const ValueType type = read_value_type(what);
    Value v = read_value(type, what, 0);
    f_.kv_.emplace_back(std::move(key), std::move(v));
    kv_at_.push_back(at);
  }
  const auto [a, b] = sort_by_key(f_.kv_, [](const auto& kv) -> std::string_view { return kv.first; }, f_.kv_by_key_);
  if (b != SIZE_MAX) {
    fail_at(kv_at_[b], "duplicate metadata key " + quote_untrusted(f_.kv_[b].first) + " (first at byte offset " +
                           std::to_string(kv_at_[a]) + ")");
  }
}

void Parser::apply_alignment() {
  const Value* a = f_.find("general.alignment");
  if (!a) return;
  uint64_t align = 0;
  switch (a->type) {
    case ValueType::UINT8:
    case ValueType::UINT16:
    case ValueType::UINT32:
    case ValueType::UINT64: align = a->u; break;
    case ValueType::INT8:
    case ValueType::INT16:
    case ValueType::INT32:
    case ValueType::INT64: align = a->i > 0 ? static_cast<uint64_t>(a->i) : 0; break;
    default:
      fail(f_.path_.string(), ": key 'general.alignment': expected uint32, found ", a->type_string());
  }
  if (align < kMinAlignment || (align & (align - 1)) != 0 || align > kMaxAlignment) {
    const bool is_signed = a->type == ValueType::INT8 || a->type == ValueType::INT16 ||
                           a->type == ValueType::INT32 || a->type == ValueType::INT64;
    fail(f_.path_.string(), ": key 'general.alignment': value ", is_signed ? std::to_string(a->i) : std::to_string(a->u),
         " (expected a power of two in 8..2^30: GGUF requires a multiple of 8)");
  }
  f_.alignment_ = align;
}

void Parser::read_tensor_infos(uint64_t n_tensors) {
  reserve_entries(f_.tensors_, tensor_at_, n_tensors, kTensorEntryBytes);
  for (uint64_t t = 0; t < n_tensors; ++t) {
    const uint64_t start = pos_;
    charge(kTensorEntryBytes, start);
    const std::string label = "tensor info #" + std::to_string(t);
    TensorInfo ti;
    ti.name = read_string("the name of " + label);
    const std::string who = label + " " + quote_untrusted(ti.name);
    const uint64_t dims_at = pos_;
    const uint32_t n_dims = read<uint32_t>(("the n_dims of " + who).c_str());
    if (n_dims > kMaxDims) {
      fail_at(dims_at, who + ": n_dims " + std::to_string(n_dims) + " (expected at most " + std::to_string(kMaxDims) + ")");
    }
    charge(n_dims == 0 ? 0 : 32, dims_at);  // the dims vector's heap chunk
    ti.n_elements = 1;
    for (uint32_t d = 0; d < n_dims; ++d) {
      const uint64_t at = pos_;
      const uint64_t dim = read<uint64_t>(("a dimension of " + who).c_str());
      if (dim == 0 || dim > static_cast<uint64_t>(std::numeric_limits<int64_t>::max())) {
        fail_at(at, who + ": dims[" + std::to_string(d) + "] = " + std::to_string(dim) + " (expected 1..2^63-1)");
      }
      const auto n = checked_mul<int64_t>(ti.n_elements, static_cast<int64_t>(dim));
      if (!n) {
        fail_at(at, who + ": element count overflows int64 at dims[" + std::to_string(d) + "] = " + std::to_string(dim));
      }
      ti.dims.push_back(static_cast<int64_t>(dim));
      ti.n_elements = *n;
    }
    const uint64_t type_at = pos_;
    const uint32_t type_id = read<uint32_t>(("the type of " + who).c_str());
    const quant::TypeTraits* tr = quant::traits(type_id);
    if (!tr) fail_at(type_at, who + ": " + quant::describe_type_id(type_id) + " is not a valid ggml tensor type");
    ti.type = static_cast<quant::Type>(type_id);
    const int64_t cols = ti.dims.empty() ? 1 : ti.dims[0];
    if (cols % tr->block_size != 0) {
      fail_at(type_at, who + ": row of " + std::to_string(cols) + " elements is not a multiple of the " +
                           std::string(tr->name) + " block size " + std::to_string(tr->block_size));
    }
    const auto row_bytes = checked_mul<int64_t>(cols / tr->block_size, tr->type_size);
    const auto n_bytes = row_bytes ? checked_mul<int64_t>(ti.n_elements / cols, *row_bytes) : std::nullopt;
    if (!n_bytes) fail_at(type_at, who + ": byte size overflows int64");
    ti.n_bytes = *n_bytes;
    const uint64_t off_at = pos_;
    ti.offset = read<uint64_t>(("the data offset of " + who).c_str());
    if (ti.offset % f_.alignment_ != 0) {
      fail_at(off_at, who + ": data offset " + std::to_string(ti.offset) + " is not a multiple of the alignment " +
                          std::to_string(f_.alignment_));
    }
    f_.tensors_.push_back(std::move(ti));
    tensor_at_.push_back(start);
  }
  const auto [a, b] =
      sort_by_key(f_.tensors_, [](const TensorInfo& t) -> std::string_view { return t.name; }, f_.tensors_by_name_);
  if (b != SIZE_MAX) {
    fail_at(tensor_at_[b], "tensor info #" + std::to_string(b) + " " + quote_untrusted(f_.tensors_[b].name) +
                               ": duplicate tensor name (first at tensor info #" + std::to_string(a) + ")");
  }
}

void Parser::check_tensor_layout() {
  const uint64_t data_size = f_.data_offset_ <= size_ ? size_ - f_.data_offset_ : 0;
  for (const TensorInfo& t : f_.tensors_) {
    const uint64_t n = static_cast<uint64_t>(t.n_bytes);
    if (t.offset > data_size || n > data_size - t.offset) {
      fail(f_.path_.string(), ": tensor ", quote_untrusted(t.name), ": data [", t.offset, ", ", t.offset, " + ", n,
           ") relative to the data section at byte ", f_.data_offset_, " runs past the end of the file (data section is ",
           data_size, " bytes; expected offset + size <= ", data_size, ")");
    }
    // The mapping is page-aligned, so a file position that is a multiple of the element
    // alignment is an aligned address: typed loads from tensor_data() are never misaligned.
    // (Holds by construction: both offsets are multiples of the alignment, which is >= 8.)
    const int64_t elem_align = quant::element_alignment(t.type);
    if ((f_.data_offset_ + t.offset) % static_cast<uint64_t>(elem_align) != 0) {
      fail(f_.path_.string(), ": tensor ", quote_untrusted(t.name), ": data at byte ", f_.data_offset_ + t.offset,
           " is not aligned to ", elem_align, " bytes, as ", quant::type_name(t.type), " elements need");
    }
  }
  // Offsets and sizes are now within the file, so the sums below cannot wrap.
  std::vector<size_t> order(f_.tensors_.size());
  std::iota(order.begin(), order.end(), size_t{0});
  std::sort(order.begin(), order.end(),
            [&](size_t a, size_t b) { return f_.tensors_[a].offset < f_.tensors_[b].offset; });
  for (size_t k = 1; k < order.size(); ++k) {
    const TensorInfo& prev = f_.tensors_[order[k - 1]];
    const TensorInfo& cur = f_.tensors_[order[k]];
    if (prev.offset + static_cast<uint64_t>(prev.n_bytes) > cur.offset) {
      fail(f_.path_.string(), ": tensor ", quote_untrusted(cur.name), " at data offset ", cur.offset,
           " overlaps tensor ", quote_untrusted(prev.name), " [", prev.offset, ", ",
           prev.offset + static_cast<uint64_t>(prev.n_bytes), ") (expected non-overlapping tensor data)");
    }
  }
}

void Parser::parse() {
  const uint32_t magic = read<uint32_t>("the magic");
  if (magic != kMagic) {
    char shown[4];
    std::memcpy(shown, &magic, 4);
    fail_at(0, "bad magic " + quote_untrusted(std::string_view(shown, 4)) + " (expected 'GGUF'; not a GGUF file)");
  }
  const uint32_t version = read<uint32_t>("the version");
  if (version == 1) fail_at(4, "GGUF version 1 is not supported (expected version 2 or 3; re-convert the model)");
  if (version != 2 && version != 3) {
    if (version >= 0x01000000 && (version & 0xFFFF) == 0) {
      fail_at(4, "version " + std::to_string(version) + " looks like a big-endian GGUF (expected little-endian v2 or v3)");
    }
    fail_at(4, "unsupported GGUF version " + std::to_string(version) + " (expected 2 or 3)");
  }
  f_.version_ = version;
  const uint64_t n_tensors = read<uint64_t>("the tensor count");
  const uint64_t n_kv = read<uint64_t>("the metadata key-value count");
  if (n_tensors > remaining() / kMinTensorInfoBytes) {
    fail_at(8, "tensor count " + std::to_string(n_tensors) + " cannot fit in the " + std::to_string(remaining()) +
                   " bytes left (each tensor info takes at least " + std::to_string(kMinTensorInfoBytes) + ")");
  }
  if (n_tensors > kMaxTensors) {
    fail_at(8, "tensor count " + std::to_string(n_tensors) + " exceeds the reader's limit of " +
                   std::to_string(kMaxTensors) + " tensors (real models have a few thousand at most)");
  }
  if (n_kv > remaining() / kMinKvBytes) {
    fail_at(16, "metadata key-value count " + std::to_string(n_kv) + " cannot fit in the " +
                    std::to_string(remaining()) + " bytes left (each pair takes at least " +
                    std::to_string(kMinKvBytes) + ")");
  }
  read_metadata(n_kv);
  apply_alignment();
  read_tensor_infos(n_tensors);
  // The data section starts at the next multiple of the alignment after the tensor table
  // (pos_ <= size_ and the alignment <= 2^30: no wrap).
  f_.data_offset_ = *checked_align_up<uint64_t>(pos_, f_.alignment_);
  check_tensor_layout();
  f_.metadata_bytes_ = used_;
}

File File::open(const std::filesystem::path& path) {
  File f;
  f.path_ = path;
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) fail(path.string(), ": cannot open: ", std::strerror(errno));
  struct stat st {};
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    ::close(fd);
    fail(path.string(), ": not a regular file (expected a GGUF file)");
  }
  f.size_ = static_cast<uint64_t>(st.st_size);
  if (f.size_ > 0) {
    void* m = ::mmap(nullptr, f.size_, PROT_READ, MAP_PRIVATE, fd, 0);
    const int err = errno;
    ::close(fd);
    if (m == MAP_FAILED) fail(path.string(), ": mmap of ", f.size_, " bytes failed: ", std::strerror(err));
    f.base_ = static_cast<const uint8_t*>(m);
  } else {
    ::close(fd);
  }
  Parser(f).parse();  // on throw, f's destructor unmaps
  return f;
}

File::File(File&& o) noexcept { *this = std::move(o); }

File& File::operator=(File&& o) noexcept {
  if (this != &o) {
    release();
    path_ = std::move(o.path_);
    base_ = std::exchange(o.base_, nullptr);
    size_ = std::exchange(o.size_, 0);
    version_ = o.version_;
    alignment_ = o.alignment_;
    data_offset_ = o.data_offset_;
    metadata_bytes_ = o.metadata_bytes_;
    kv_ = std::move(o.kv_);
    tensors_ = std::move(o.tensors_);
    kv_by_key_ = std::move(o.kv_by_key_);
    tensors_by_name_ = std::move(o.tensors_by_name_);
  }
  return *this;
}

File::~File() { release(); }

void File::release() noexcept {
  if (base_) ::munmap(const_cast<uint8_t*>(base_), size_);
  base_ = nullptr;
  size_ = 0;
}

const Value* File::find(std::string_view key) const {
  const auto it = std::lower_bound(kv_by_key_.begin(), kv_by_key_.end(), key,
                                   [&](uint32_t i, std::string_view k) { return std::string_view(kv_[i].first) < k; });
  return it != kv_by_key_.end() && kv_[*it].first == key ? &kv_[*it].second : nullptr;
}

const TensorInfo* File::find_tensor(std::string_view name) const {
  const auto it = std::lower_bound(tensors_by_name_.begin(), tensors_by_name_.end(), name,
                                   [&](uint32_t i, std::string_view n) { return std::string_view(tensors_[i].name) < n; });
  return it != tensors_by_name_.end() && tensors_[*it].name == name ? &tensors_[*it] : nullptr;
}

const TensorInfo& File::tensor(std::string_view name) const {
  if (const TensorInfo* t = find_tensor(name)) return *t;
  fail(path_.string(), ": tensor ", quote_untrusted(name), " not found (the file has ", tensors_.size(), " tensors)");
}

const uint8_t* File::tensor_data(const TensorInfo& t) const { return base_ + data_offset_ + t.offset; }

}  // namespace pfx::gguf

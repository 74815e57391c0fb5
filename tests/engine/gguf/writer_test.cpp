// GGUF writer round trips: every KV type and several tensor types written by our Writer, read
// back by our reader and by gguf-py (llama.cpp's reader); typed getters; atomic writes.
#include <gtest/gtest.h>

#include <cmath>
#include <numbers>
#include <random>

#include "engine/gguf/gguf_py_dump.h"
#include "engine/gguf/python_runner.h"
#include "gguf/gguf.h"
#include "gguf/writer.h"
#include "quant/blocks.h"
#include "quant/dequant.h"
#include "quant/fp16.h"
#include "quant/quantize.h"
#include "util/error.h"
#include "util/npy.h"

namespace fs = std::filesystem;
using pfx::gguf::File;
using pfx::gguf::Value;
using pfx::gguf::ValueType;
using pfx::gguf::Writer;
using pfx::quant::Type;

namespace {

struct SourceTensor {
  std::string name;
  std::vector<int64_t> dims;
  Type type;
  std::vector<uint8_t> bytes;  // what fill writes
};

std::vector<float> gaussian(size_t n, uint32_t seed) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> dist(0.f, 1.f);
  std::vector<float> v(n);
  for (float& x : v) x = dist(rng);
  return v;
}

SourceTensor quantized(std::string name, std::vector<int64_t> dims, Type type, uint32_t seed) {
  int64_t n = 1;
  for (int64_t d : dims) n *= d;
  const auto src = gaussian(static_cast<size_t>(n), seed);
  SourceTensor t{std::move(name), dims, type, {}};
  const int64_t cols = dims[0], rows = n / cols;
  const int64_t rb = pfx::quant::row_bytes(type, cols);
  t.bytes.resize(static_cast<size_t>(rows * rb));
  for (int64_t r = 0; r < rows; ++r) pfx::quant::quantize_row(type, src.data() + r * cols, t.bytes.data() + r * rb, cols);
  return t;
}

// q4_0 has no quantizer here: random blocks with finite scales exercise the format instead.
SourceTensor random_q4_0(std::string name, int64_t cols, int64_t rows, uint32_t seed) {
  std::mt19937 rng(seed);
  SourceTensor t{std::move(name), {cols, rows}, Type::Q4_0, {}};
  std::vector<pfx::quant::BlockQ4_0> blocks(static_cast<size_t>(cols / 32 * rows));
  for (auto& b : blocks) {
    b.d = pfx::quant::fp32_to_fp16(std::uniform_real_distribution<float>(-2.f, 2.f)(rng));
    for (auto& q : b.qs) q = static_cast<uint8_t>(rng());
  }
  const auto* first = reinterpret_cast<const uint8_t*>(blocks.data());
  t.bytes.assign(first, first + blocks.size() * sizeof(blocks[0]));  // (resize + memcpy: g++ -O3 array-bounds false positive)
  return t;
}

void add_all(Writer& w, const std::vector<SourceTensor>& ts) {
  for (const auto& t : ts) {
    const std::vector<uint8_t>* bytes = &t.bytes;
    w.add_tensor(t.name, t.dims, t.type, [bytes](uint8_t* dst) { std::memcpy(dst, bytes->data(), bytes->size()); });
  }
}

std::vector<float> dequantize_all(Type type, const uint8_t* data, int64_t n) {
  std::vector<float> out(static_cast<size_t>(n));
  pfx::quant::dequantize_row(type, data, out.data(), n);
  return out;
}

void set_every_kv_type(Writer& w) {
  w.set_string("general.architecture", "llama");
  w.set_u8("t.u8", 250);
  w.set_i8("t.i8", -120);
  w.set_u16("t.u16", 65000);
  w.set_i16("t.i16", -32000);
  w.set_u32("t.u32", 4000000000u);
  w.set_i32("t.i32", -2000000000);
  w.set_u64("t.u64", (uint64_t{1} << 40) + 3);
  w.set_i64("t.i64", -(int64_t{1} << 50));
  w.set_f32("t.f32", 0.1f);
  w.set_f64("t.f64", std::numbers::pi);
  w.set_bool("t.bool_true", true);
  w.set_bool("t.bool_false", false);
  w.set_string("t.string", "h\xC3\xA9llo \xE2\x96\x81world");  // UTF-8, includes U+2581
  w.set_string("t.empty_string", "");
  w.set_string_array("t.strings", {"a", "", "\xE2\x96\x81the", "<0x0A>"});
  w.set_float_array("t.floats", {1.5f, -0.25f, 1e-30f, 3.4e38f});
  w.set_i32_array("t.i32s", {1, -2, 2147483647, -2147483647 - 1});
  w.set("t.u8s", Value::of_raw_array(ValueType::UINT8, {0, 1, 255}));
  w.set("t.bools", Value::of_raw_array(ValueType::BOOL, {1, 0, 1}));
  std::vector<uint8_t> i64s(16);
  const int64_t i64v[2] = {-5, int64_t{1} << 62};
  std::memcpy(i64s.data(), i64v, 16);
  w.set("t.i64s", Value::of_raw_array(ValueType::INT64, i64s));
  std::vector<uint8_t> f64s(8);
  const double e = std::numbers::e;
  std::memcpy(f64s.data(), &e, 8);
  w.set("t.f64s", Value::of_raw_array(ValueType::FLOAT64, f64s));
  w.set("t.nested", Value::of_array_of_arrays({Value::of_i32_array({1, 2}), Value::of_i32_array({3})}));
}

std::vector<SourceTensor> several_tensors() {
  std::vector<SourceTensor> ts;
  ts.push_back(quantized("f32.weight", {33, 3}, Type::F32, 1));
  ts.push_back(quantized("f16.weight", {64, 2}, Type::F16, 2));
  ts.push_back(quantized("bf16.weight", {16, 4}, Type::BF16, 3));
  ts.push_back(quantized("q8_0.weight", {64, 3}, Type::Q8_0, 4));
  ts.push_back(quantized("q4_K.weight", {256, 2}, Type::Q4_K, 5));
  ts.push_back(quantized("q6_K.weight", {512, 3}, Type::Q6_K, 6));
  ts.push_back(quantized("f32.3d", {4, 3, 2}, Type::F32, 7));
  ts.push_back(random_q4_0("q4_0.weight", 64, 2, 8));
  ts.push_back(quantized("norm", {7}, Type::F32, 9));
  return ts;
}

// Writes every KV type and several_tensors() to `path`; returns the tensors written.
std::vector<SourceTensor> write_every_kind(const fs::path& path) {
  Writer w;
  set_every_kv_type(w);
  auto ts = several_tensors();
  add_all(w, ts);
  w.write(path);
  return ts;
}

}  // namespace

TEST(GgufWriter, RoundTripsThroughOurReader) {
  pfx::test::TempDir dir("gguf_writer");
  const fs::path path = dir / "all.gguf";
  const auto ts = write_every_kind(path);

  const File f = File::open(path);
  EXPECT_EQ(f.version(), 3u);
  EXPECT_EQ(f.alignment(), 32u);
  EXPECT_EQ(f.get_uint("t.u8"), 250u);
  EXPECT_EQ(f.get_int("t.i8"), -120);
  EXPECT_EQ(f.get_uint("t.u16"), 65000u);
  EXPECT_EQ(f.get_int("t.i16"), -32000);
  EXPECT_EQ(f.get_uint("t.u32"), 4000000000u);
  EXPECT_EQ(f.get_int("t.i32"), -2000000000);
  EXPECT_EQ(f.get_uint("t.u64"), (uint64_t{1} << 40) + 3);
  EXPECT_EQ(f.get_int("t.i64"), -(int64_t{1} << 50));
  EXPECT_EQ(f.get_float("t.f32"), static_cast<double>(0.1f));
  EXPECT_EQ(f.get_float("t.f64"), std::numbers::pi);
  EXPECT_TRUE(f.get_bool("t.bool_true"));
  EXPECT_FALSE(f.get_bool("t.bool_false"));
  EXPECT_EQ(f.get_string("t.string"), "h\xC3\xA9llo \xE2\x96\x81world");
  EXPECT_EQ(f.get_string("t.empty_string"), "");
  EXPECT_EQ(f.get_string_array("t.strings"), (std::vector<std::string>{"a", "", "\xE2\x96\x81the", "<0x0A>"}));
  EXPECT_EQ(f.get_float_array("t.floats"), (std::vector<float>{1.5f, -0.25f, 1e-30f, 3.4e38f}));
  EXPECT_EQ(f.get_int_array("t.i32s"), (std::vector<int64_t>{1, -2, 2147483647, -2147483648LL}));
  EXPECT_EQ(f.get_int_array("t.u8s"), (std::vector<int64_t>{0, 1, 255}));
  EXPECT_EQ(f.get_int_array("t.i64s"), (std::vector<int64_t>{-5, int64_t{1} << 62}));
  EXPECT_EQ(f.get_float_array("t.f64s"), (std::vector<float>{static_cast<float>(std::numbers::e)}));
  EXPECT_EQ(f.find("t.bools")->raw, (std::vector<uint8_t>{1, 0, 1}));
  const Value* nested = f.find("t.nested");
  ASSERT_NE(nested, nullptr);
  ASSERT_EQ(nested->items.size(), 2u);
  EXPECT_EQ(nested->items[1].array_size(), 1u);

  ASSERT_EQ(f.tensors().size(), ts.size());
  for (size_t k = 0; k < ts.size(); ++k) {
    const auto& t = f.tensors()[k];
    EXPECT_EQ(t.name, ts[k].name);
    EXPECT_EQ(t.dims, ts[k].dims);
    EXPECT_EQ(t.type, ts[k].type);
    EXPECT_EQ(t.offset % 32, 0u);
    ASSERT_EQ(t.n_bytes, static_cast<int64_t>(ts[k].bytes.size())) << t.name;
    EXPECT_EQ(std::memcmp(f.tensor_data(t), ts[k].bytes.data(), ts[k].bytes.size()), 0) << t.name;
  }
}

TEST(GgufWriter, GgufPyReadsWhatWeWrite) {
  pfx::test::TempDir dir("gguf_writer_py");
  const fs::path path = dir / "all.gguf";
  const auto ts = write_every_kind(path);
  const File f = File::open(path);

  std::string error;
  const auto py = pfx::test::gguf_py_dump(path, dir / "dump", &error);
  ASSERT_TRUE(py.has_value()) << error;
  EXPECT_EQ(py->version, 3u);
  EXPECT_EQ(py->alignment, 32u);
  EXPECT_EQ(py->data_offset, f.data_offset());
  ASSERT_EQ(py->fields.size(), f.kv().size());
  for (size_t k = 0; k < f.kv().size(); ++k) {
    ASSERT_EQ(py->fields[k].at("key").get<std::string>(), f.kv()[k].first);
    pfx::test::expect_value_matches(f.kv()[k].first, f.kv()[k].second, py->fields[k]);
  }
  ASSERT_EQ(py->tensors.size(), ts.size());
  for (size_t k = 0; k < ts.size(); ++k) {
    const auto& theirs = py->tensors[k];
    const auto& ours = f.tensors()[k];
    SCOPED_TRACE(ours.name);
    EXPECT_EQ(theirs.name, ours.name);
    EXPECT_EQ(theirs.type, static_cast<uint32_t>(ours.type));
    EXPECT_EQ(theirs.shape, ours.dims);
    EXPECT_EQ(theirs.data_offset, f.data_offset() + ours.offset);
    ASSERT_TRUE(theirs.npy.has_value()) << "gguf-py could not dequantize " << pfx::quant::type_name(ours.type);
    const auto want = pfx::read_npy(*theirs.npy);
    const auto got = dequantize_all(ours.type, f.tensor_data(ours), ours.n_elements);
    EXPECT_EQ(pfx::test::bitwise_diff(want.data, got.data(), static_cast<int64_t>(got.size())), "");
  }
}

TEST(GgufWriter, HonoursAlignment) {
  pfx::test::TempDir dir("gguf_writer_align");
  const fs::path path = dir / "a64.gguf";
  Writer w;
  w.set_alignment(64);
  const auto ts = several_tensors();
  add_all(w, ts);
  w.write(path);
  const File f = File::open(path);
  EXPECT_EQ(f.alignment(), 64u);
  EXPECT_EQ(f.get_uint("general.alignment"), 64u);
  EXPECT_EQ(f.data_offset() % 64, 0u);
  for (const auto& t : f.tensors()) EXPECT_EQ(t.offset % 64, 0u) << t.name;
  std::string error;
  const auto py = pfx::test::gguf_py_dump(path, dir / "dump", &error);
  ASSERT_TRUE(py.has_value()) << error;
  EXPECT_EQ(py->alignment, 64u);
  EXPECT_EQ(py->data_offset, f.data_offset());
  EXPECT_THROW(w.set_alignment(48), pfx::Error);
}

TEST(GgufWriter, FailedFillLeavesNoFileAndKeepsTheOldOne) {
  pfx::test::TempDir dir("gguf_writer_fail");
  const fs::path path = dir / "m.gguf";
  {
    Writer ok;
    ok.set_u32("x", 1);
    ok.write(path);
  }
  const auto before = fs::file_size(path);
  Writer w;
  w.set_u32("x", 2);
  w.add_tensor("good", {32}, Type::F32, [](uint8_t* d) { std::memset(d, 0, 128); });
  w.add_tensor("bad", {32}, Type::F32, [](uint8_t*) { throw std::runtime_error("disk on fire"); });
  try {
    w.write(path);
    FAIL() << "expected pfx::Error";
  } catch (const pfx::Error& e) {
    const std::string msg = e.what();
    EXPECT_NE(msg.find("'bad'"), std::string::npos) << msg;
    EXPECT_NE(msg.find("disk on fire"), std::string::npos) << msg;
  }
  EXPECT_EQ(fs::file_size(path), before);
  EXPECT_EQ(File::open(path).get_uint("x"), 1u);
  int entries = 0;
  for ([[maybe_unused]] const auto& e : fs::directory_iterator(dir.path())) ++entries;
  EXPECT_EQ(entries, 1) << "a temporary file was left behind";
}

TEST(GgufWriter, RejectsBadTensors) {
  Writer w;
  auto nop = [](uint8_t*) {};
  w.add_tensor("a", {256}, Type::Q4_K, nop);
  EXPECT_THROW(w.add_tensor("a", {256}, Type::Q4_K, nop), pfx::Error);           // duplicate
  EXPECT_THROW(w.add_tensor("b", {100, 2}, Type::Q4_K, nop), pfx::Error);        // not a block multiple
  EXPECT_THROW(w.add_tensor("c", {0, 2}, Type::F32, nop), pfx::Error);           // zero dim
  EXPECT_THROW(w.add_tensor("d", {1, 1, 1, 1, 1}, Type::F32, nop), pfx::Error);  // 5 dims
  EXPECT_THROW(w.add_tensor("e", {32}, static_cast<Type>(4), nop), pfx::Error);  // removed type id
  EXPECT_THROW(w.add_tensor("f", {int64_t{1} << 40, int64_t{1} << 40}, Type::F32, nop), pfx::Error);
  EXPECT_THROW(w.set("g", Value::of_raw_array(ValueType::UINT32, {1, 2, 3})), pfx::Error);
}

// ---- typed getters ----

class GgufGetters : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = new pfx::test::TempDir("gguf_getters");
    Writer w;
    set_every_kv_type(w);
    w.set_i32("t.negative", -7);
    w.set_u64("t.huge", ~uint64_t{0});
    w.write(*dir_ / "g.gguf");
    file_ = new File(File::open(*dir_ / "g.gguf"));
  }
  static void TearDownTestSuite() {
    delete file_;
    delete dir_;
  }
  static std::string error_of(const std::function<void()>& fn) {
    try {
      fn();
    } catch (const pfx::Error& e) {
      return e.what();
    }
    return "(no error)";
  }
  static pfx::test::TempDir* dir_;
  static File* file_;
};
pfx::test::TempDir* GgufGetters::dir_ = nullptr;
File* GgufGetters::file_ = nullptr;

TEST_F(GgufGetters, WidenAcrossNumericTypes) {
  const File& f = *file_;
  EXPECT_EQ(f.get_int("t.u32"), 4000000000);
  EXPECT_EQ(f.get_uint("t.u8"), 250u);
  EXPECT_EQ(f.get_int("t.u64"), (int64_t{1} << 40) + 3);
  EXPECT_EQ(f.get_float("t.i32"), -2000000000.0);
  EXPECT_EQ(f.get_float("t.u16"), 65000.0);
  EXPECT_EQ(f.get_uint_or("absent", 17), 17u);
  EXPECT_EQ(f.get_int_or("absent", -3), -3);
  EXPECT_EQ(f.get_float_or("absent", 2.5), 2.5);
  EXPECT_EQ(f.get_string_or("absent", "dflt"), "dflt");
  EXPECT_TRUE(f.get_bool_or("absent", true));
  EXPECT_EQ(f.get_uint_or("t.u16", 1), 65000u);
  EXPECT_TRUE(f.has("t.f64"));
  EXPECT_FALSE(f.has("t.F64"));
}

TEST_F(GgufGetters, ErrorsNameFileKeyAndTypes) {
  const File& f = *file_;
  const std::string wrong_type = error_of([&] { (void)f.get_uint("t.string"); });
  EXPECT_NE(wrong_type.find("g.gguf"), std::string::npos) << wrong_type;
  EXPECT_NE(wrong_type.find("'t.string'"), std::string::npos) << wrong_type;
  EXPECT_NE(wrong_type.find("expected an unsigned integer"), std::string::npos) << wrong_type;
  EXPECT_NE(wrong_type.find("found string"), std::string::npos) << wrong_type;

  const std::string missing = error_of([&] { (void)f.get_string("llama.block_count"); });
  EXPECT_NE(missing.find("g.gguf"), std::string::npos) << missing;
  EXPECT_NE(missing.find("'llama.block_count' is missing"), std::string::npos) << missing;

  const std::string negative = error_of([&] { (void)f.get_uint("t.negative"); });
  EXPECT_NE(negative.find("-7"), std::string::npos) << negative;
  const std::string huge = error_of([&] { (void)f.get_int("t.huge"); });
  EXPECT_NE(huge.find("does not fit int64"), std::string::npos) << huge;

  const std::string arr = error_of([&] { (void)f.get_string_array("t.floats"); });
  EXPECT_NE(arr.find("expected array[string], found array[float32]"), std::string::npos) << arr;
  EXPECT_NE(error_of([&] { (void)f.get_float_array("t.strings"); }).find("found array[string]"), std::string::npos);
  EXPECT_NE(error_of([&] { (void)f.get_int_array("t.floats"); }).find("expected an integer array"), std::string::npos);
  EXPECT_NE(error_of([&] { (void)f.get_bool("t.u8"); }).find("expected bool, found uint8"), std::string::npos);
  EXPECT_NE(error_of([&] { (void)f.get_float("t.bool_true"); }).find("found bool"), std::string::npos);
  // A present key of the wrong type is an error even with a default.
  EXPECT_THROW((void)f.get_uint_or("t.string", 1), pfx::Error);
  const std::string no_tensor = error_of([&] { (void)f.tensor("output.weight"); });
  EXPECT_NE(no_tensor.find("'output.weight' not found"), std::string::npos) << no_tensor;
}

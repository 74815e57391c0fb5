// Malformed GGUF files: each must be a pfx::Error whose message names the file and the byte
// offset / key / tensor and what was expected — never a crash, a hang or a huge allocation.
// Files are hand-assembled byte by byte here (not with our Writer) so every field can be broken.
#include <gtest/gtest.h>

#include <cstring>
#include <fstream>
#include <iostream>
#include <optional>

#include "engine/gguf/python_runner.h"
#include "engine/gguf/raw_bytes.h"
#include "gguf/gguf.h"
#include "gguf/writer.h"
#include "quant/types.h"
#include "util/error.h"
#include "util/fixtures.h"

namespace fs = std::filesystem;
using pfx::gguf::File;

namespace {

using namespace pfx::test;  // the type ids of raw_bytes.h

struct TensorSpec {
  std::string name;
  std::vector<uint64_t> dims;
  uint32_t type;
  uint64_t offset;
};

// A small valid v3 file by default; tests break one field.
struct Spec {
  uint32_t magic = 0x46554747;
  uint32_t version = 3;
  std::optional<uint64_t> n_tensors, n_kv;  // overrides of the real counts
  uint64_t alignment = 32;
  std::vector<std::vector<uint8_t>> kvs;    // each: key + type + value, encoded
  std::vector<TensorSpec> tensors;
  uint64_t data_bytes = 0;                  // data section length written (zeros)

  Spec() {
    kv_string("general.architecture", "llama");
    kv_u32("llama.block_count", 2);
    Bytes arr;
    arr.put<uint32_t>(kString).put<uint64_t>(3).str("<unk>").str("a").str("bc");
    kv_raw("tokenizer.ggml.tokens", kArray, arr.b);
    Bytes farr;
    farr.put<uint32_t>(kF32v).put<uint64_t>(2).put<float>(0.5f).put<float>(-1.f);
    kv_raw("tokenizer.ggml.scores", kArray, farr.b);
    tensors = {{"a.weight", {8, 2}, kTypeF32, 0},     // 64 bytes
               {"b.weight", {256, 1}, kTypeQ4_K, 64},  // 144 bytes
               {"c.weight", {32, 2}, kTypeQ8_0, 224}}; // 68 bytes
    data_bytes = 292;
  }
  void kv_raw(const std::string& key, uint32_t type, const std::vector<uint8_t>& value) {
    Bytes k;
    k.str(key).put<uint32_t>(type);
    k.b.insert(k.b.end(), value.begin(), value.end());
    kvs.push_back(k.b);
  }
  void kv_u32(const std::string& key, uint32_t v) { kv_raw(key, kU32, Bytes().put<uint32_t>(v).b); }
  void kv_string(const std::string& key, const std::string& v) { kv_raw(key, kString, Bytes().str(v).b); }

  std::vector<uint8_t> build() const {
    Bytes out;
    out.put<uint32_t>(magic).put<uint32_t>(version);
    out.put<uint64_t>(n_tensors.value_or(tensors.size())).put<uint64_t>(n_kv.value_or(kvs.size()));
    for (const auto& kv : kvs) out.b.insert(out.b.end(), kv.begin(), kv.end());
    for (const auto& t : tensors) {
      out.str(t.name).put<uint32_t>(static_cast<uint32_t>(t.dims.size()));
      for (uint64_t d : t.dims) out.put<uint64_t>(d);
      out.put<uint32_t>(t.type).put<uint64_t>(t.offset);
    }
    while (out.b.size() % alignment) out.b.push_back(0);
    out.b.resize(out.b.size() + data_bytes, 0);
    return out.b;
  }
};

class Malformed : public ::testing::Test {
 protected:
  pfx::test::TempDir dir{"gguf_malformed"};

  fs::path write(const std::string& name, const std::vector<uint8_t>& bytes, size_t len = SIZE_MAX) {
    const fs::path p = dir / name;
    std::ofstream out(p, std::ios::binary | std::ios::trunc);
    out.write(reinterpret_cast<const char*>(bytes.data()), static_cast<std::streamsize>(std::min(len, bytes.size())));
    return p;
  }

  // Opening must throw pfx::Error naming the file and containing every fragment.
  void expect_error(const std::string& name, const std::vector<uint8_t>& bytes,
                    const std::vector<std::string>& fragments) {
    const fs::path p = write(name + ".gguf", bytes);
    try {
      (void)File::open(p);
      ADD_FAILURE() << name << ": opened without error";
    } catch (const pfx::Error& e) {
      const std::string msg = e.what();
      EXPECT_NE(msg.find(p.string()), std::string::npos) << name << ": message does not name the file: " << msg;
      for (const auto& f : fragments) {
        EXPECT_NE(msg.find(f), std::string::npos) << name << ": message lacks '" << f << "': " << msg;
      }
    } catch (const std::exception& e) {
      ADD_FAILURE() << name << ": threw a non-pfx::Error exception: " << e.what();
    }
  }
};

}  // namespace

TEST_F(Malformed, TheBaseSpecIsValid) {
  const File f = File::open(write("valid.gguf", Spec().build()));
  EXPECT_EQ(f.tensors().size(), 3u);
  EXPECT_EQ(f.get_string_array("tokenizer.ggml.tokens").size(), 3u);
  Spec v2;
  v2.version = 2;
  EXPECT_EQ(File::open(write("v2.gguf", v2.build())).version(), 2u);
}

// Every byte of the header and tables, and a sample of the data section: a prefix shorter than
// the end of the last tensor's data is an error naming an offset or a tensor; longer prefixes
// (only trailing padding missing) are valid.
TEST_F(Malformed, TruncatedAtEveryHeaderOffsetAndSampledDataOffsets) {
  for (const bool use_writer : {false, true}) {
    std::vector<uint8_t> bytes;
    if (use_writer) {
      // A file with every KV type and more tensors, from our writer.
      pfx::gguf::Writer w;
      w.set_string("general.architecture", "llama");
      w.set_u8("u8", 1);
      w.set_i8("i8", -1);
      w.set_u16("u16", 2);
      w.set_i16("i16", -2);
      w.set_u32("u32", 3);
      w.set_i32("i32", -3);
      w.set_u64("u64", 4);
      w.set_i64("i64", -4);
      w.set_f32("f32", 0.5f);
      w.set_f64("f64", 0.25);
      w.set_bool("bool", true);
      w.set_string_array("strs", {"x", "yz"});
      w.set_float_array("floats", {1.f, 2.f});
      w.set("nested", pfx::gguf::Value::of_array_of_arrays({pfx::gguf::Value::of_i32_array({1, 2})}));
      w.add_tensor("t0", {32, 3}, pfx::quant::Type::Q8_0, [](uint8_t* d) { std::memset(d, 0, 3 * 34); });
      w.add_tensor("t1", {256}, pfx::quant::Type::Q6_K, [](uint8_t* d) { std::memset(d, 0, 210); });
      w.add_tensor("t2", {5}, pfx::quant::Type::F32, [](uint8_t* d) { std::memset(d, 0, 20); });
      const fs::path whole = dir / "whole.gguf";
      w.write(whole);
      std::ifstream in(whole, std::ios::binary);
      bytes.assign(std::istreambuf_iterator<char>(in), {});
    } else {
      bytes = Spec().build();
    }
    const File whole = File::open(write("whole.gguf", bytes));
    uint64_t data_end = whole.data_offset();
    for (const auto& t : whole.tensors()) {
      data_end = std::max(data_end, whole.data_offset() + t.offset + static_cast<uint64_t>(t.n_bytes));
    }
    int errors = 0;
    for (size_t len = 0; len < bytes.size(); ++len) {
      if (len > whole.data_offset() && len < data_end && len % 7 != 0 && len + 3 < data_end) continue;
      const fs::path p = write("truncated.gguf", bytes, len);
      SCOPED_TRACE("writer file: " + std::to_string(use_writer) + ", truncated to " + std::to_string(len) + " bytes");
      if (len >= data_end) {
        EXPECT_NO_THROW((void)File::open(p));
        continue;
      }
      try {
        (void)File::open(p);
        ADD_FAILURE() << "opened without error";
      } catch (const pfx::Error& e) {
        ++errors;
        const std::string msg = e.what();
        EXPECT_NE(msg.find(p.string()), std::string::npos) << msg;
        const bool located = msg.find("byte offset") != std::string::npos || msg.find("tensor '") != std::string::npos;
        EXPECT_TRUE(located) << "message names neither an offset nor a tensor: " << msg;
      }
    }
    EXPECT_GT(errors, static_cast<int>(whole.data_offset()));
  }
}

TEST_F(Malformed, EmptyFile) { expect_error("empty", {}, {"byte offset 0", "truncated", "magic"}); }

TEST_F(Malformed, BadMagic) {
  Spec s;
  s.magic = 0x4C4D4747;  // "GGML"
  expect_error("bad_magic", s.build(), {"byte offset 0", "bad magic 'GGML'", "expected 'GGUF'"});
}

TEST_F(Malformed, BadVersions) {
  Spec v1;
  v1.version = 1;
  expect_error("v1", v1.build(), {"byte offset 4", "version 1 is not supported", "expected version 2 or 3"});
  Spec v4;
  v4.version = 4;
  expect_error("v4", v4.build(), {"byte offset 4", "unsupported GGUF version 4"});
  Spec be;
  be.version = 0x03000000;
  expect_error("big_endian", be.build(), {"byte offset 4", "big-endian"});
}

TEST_F(Malformed, HugeCounts) {
  Spec t;
  t.n_tensors = uint64_t{1} << 60;
  expect_error("huge_tensor_count", t.build(), {"byte offset 8", "tensor count 1152921504606846976"});
  Spec k;
  k.n_kv = ~uint64_t{0};
  expect_error("huge_kv_count", k.build(), {"byte offset 16", "key-value count"});
  Spec k2;
  k2.n_kv = 5;  // one more than present: runs into the tensor table, then off the end
  expect_error("kv_count_too_big", k2.build(), {"byte offset"});
}

TEST_F(Malformed, HugeStringLengths) {
  Spec key;
  key.kvs.insert(key.kvs.begin(), Bytes().put<uint64_t>(~uint64_t{0} - 3).b);
  expect_error("huge_key_length", key.build(), {"byte offset 24", "string length 18446744073709551612 exceeds"});
  Spec val;
  val.kv_raw("general.name", kString, Bytes().put<uint64_t>(uint64_t{1} << 62).b);
  expect_error("huge_string_value", val.build(), {"key 'general.name'", "string length 4611686018427387904"});
  Spec name;
  name.tensors[1].name = std::string(10, 'x');
  auto bytes = name.build();
  // Patch the name length of tensor #1 to 2^40; find it by its 10 'x' bytes.
  const std::string needle(10, 'x');
  auto it = std::search(bytes.begin(), bytes.end(), needle.begin(), needle.end());
  ASSERT_NE(it, bytes.end());
  const uint64_t huge = uint64_t{1} << 40;
  std::memcpy(&*(it - 8), &huge, 8);
  expect_error("huge_tensor_name", bytes, {"the name of tensor info #1", "string length 1099511627776"});
}

TEST_F(Malformed, BadArrays) {
  Spec huge;
  huge.kv_raw("arr", kArray, Bytes().put<uint32_t>(kU32).put<uint64_t>(uint64_t{1} << 61).b);
  expect_error("huge_array", huge.build(), {"key 'arr'", "array of 2305843009213693952 uint32 elements"});
  Spec huge_strings;
  huge_strings.kv_raw("arr", kArray, Bytes().put<uint32_t>(kString).put<uint64_t>(uint64_t{1} << 40).b);
  expect_error("huge_string_array", huge_strings.build(), {"key 'arr'", "array of 1099511627776 string elements"});
  Spec bad_elem;
  bad_elem.kv_raw("arr", kArray, Bytes().put<uint32_t>(99).put<uint64_t>(1).b);
  expect_error("bad_array_type", bad_elem.build(), {"key 'arr'", "invalid value type id 99"});
  Spec deep;
  Bytes nest;
  for (int d = 0; d < 12; ++d) nest.put<uint32_t>(kArray).put<uint64_t>(1);
  nest.put<uint32_t>(kU32).put<uint64_t>(0);
  deep.kv_raw("deep", kArray, nest.b);
  expect_error("deep_array", deep.build(), {"key 'deep'", "nested deeper"});
}

TEST_F(Malformed, BadValues) {
  Spec type;
  type.kv_raw("x", 13, Bytes().put<uint32_t>(0).b);
  expect_error("bad_value_type", type.build(), {"key 'x'", "invalid value type id 13", "expected 0..12"});
  Spec b;
  b.kv_raw("flag", kBool, Bytes().put<uint8_t>(2).b);
  expect_error("bad_bool", b.build(), {"key 'flag'", "bool value 2", "expected 0 or 1"});
  Spec dup;
  dup.kv_u32("llama.block_count", 3);
  expect_error("duplicate_key", dup.build(), {"duplicate metadata key 'llama.block_count'"});
}

TEST_F(Malformed, BadAlignment) {
  Spec a;
  a.kv_u32("general.alignment", 48);
  expect_error("alignment_48", a.build(), {"general.alignment", "48", "power of two"});
  Spec z;
  z.kv_u32("general.alignment", 0);
  expect_error("alignment_0", z.build(), {"general.alignment", "power of two"});
  Spec s;
  s.kv_string("general.alignment", "32");
  expect_error("alignment_string", s.build(), {"general.alignment", "expected uint32, found string"});
}

TEST_F(Malformed, BadDims) {
  Spec n;
  n.tensors[0].dims = {8, 2, 1, 1, 1};
  expect_error("five_dims", n.build(), {"tensor info #0 'a.weight'", "n_dims 5", "at most 4"});
  Spec z;
  z.tensors[0].dims = {8, 0};
  expect_error("zero_dim", z.build(), {"'a.weight'", "dims[1] = 0"});
  Spec neg;
  neg.tensors[0].dims = {8, ~uint64_t{0}};
  expect_error("negative_dim", neg.build(), {"'a.weight'", "dims[1] = 18446744073709551615"});
  Spec ovf;
  ovf.tensors[0].dims = {uint64_t{1} << 32, uint64_t{1} << 32};
  expect_error("element_overflow", ovf.build(), {"'a.weight'", "element count overflows"});
  Spec bytes_ovf;
  bytes_ovf.tensors[0].dims = {uint64_t{1} << 31, uint64_t{1} << 31};  // 2^62 f32 = 2^64 bytes
  expect_error("byte_overflow", bytes_ovf.build(), {"'a.weight'", "byte size overflows"});
}

TEST_F(Malformed, BadTypes) {
  Spec unknown;
  unknown.tensors[1].type = 77;
  expect_error("unknown_type", unknown.build(), {"'b.weight'", "unknown type id 77"});
  Spec removed;
  removed.tensors[1].type = 4;
  expect_error("removed_type", removed.build(), {"'b.weight'", "Q4_2 (id 4, removed from ggml)"});
  Spec rows;
  rows.tensors[1].dims = {100, 1};
  expect_error("row_not_block_multiple", rows.build(), {"'b.weight'", "row of 100 elements", "q4_K block size 256"});
}

TEST_F(Malformed, BadOffsets) {
  Spec past;
  past.tensors[2].offset = uint64_t{1} << 40;
  expect_error("offset_past_end", past.build(), {"tensor 'c.weight'", "runs past the end of the file"});
  Spec wrap;
  wrap.tensors[2].offset = ~uint64_t{0} - 31;  // aligned, and offset + size wraps around
  expect_error("offset_wraps", wrap.build(), {"tensor 'c.weight'", "runs past the end"});
  Spec short_data;
  short_data.data_bytes = 250;  // c.weight needs [224, 292)
  expect_error("data_short", short_data.build(), {"tensor 'c.weight'", "runs past the end"});
  Spec mis;
  mis.tensors[1].offset = 72;
  expect_error("misaligned", mis.build(), {"'b.weight'", "data offset 72 is not a multiple of the alignment 32"});
  Spec overlap;
  overlap.tensors[2].offset = 192;  // inside b.weight [64, 208)
  expect_error("overlap", overlap.build(), {"'c.weight'", "overlaps tensor 'b.weight'"});
  Spec dup;
  dup.tensors[2].name = "a.weight";
  expect_error("duplicate_tensor", dup.build(), {"'a.weight'", "duplicate tensor name"});
}

TEST_F(Malformed, NotARegularFile) {
  try {
    (void)File::open(dir.path());
    ADD_FAILURE() << "opened a directory";
  } catch (const pfx::Error& e) {
    EXPECT_NE(std::string(e.what()).find("not a regular file"), std::string::npos) << e.what();
  }
}

// Issue 12, item 2: GGUF requires general.alignment to be a multiple of 8; 1, 2 and 4 used to be
// accepted and the mapping then read as float* at odd addresses.
TEST_F(Malformed, AlignmentBelowEightIsRefused) {
  for (const uint32_t a : {1u, 2u, 4u}) {
    Spec s;
    s.alignment = a;
    s.kv_u32("general.alignment", a);
    expect_error("alignment_" + std::to_string(a), s.build(),
                 {"general.alignment", "value " + std::to_string(a), "power of two in 8..2^30", "multiple of 8"});
  }
  Spec eight;
  eight.alignment = 8;
  eight.kv_u32("general.alignment", 8);
  const File f = File::open(write("alignment_8.gguf", eight.build()));
  EXPECT_EQ(f.alignment(), 8u);
  for (const auto& t : f.tensors()) {
    const auto addr = reinterpret_cast<uintptr_t>(f.tensor_data(t));
    EXPECT_EQ(addr % static_cast<uintptr_t>(pfx::quant::element_alignment(t.type)), 0u) << t.name;
  }
}

// Issue 12, item 1: a row of 2^62 f32 elements is 2^64 bytes; the product used to wrap to 0 and the
// tensor was accepted with n_bytes 0 (and `prefill info` printed negative parameter counts).
TEST_F(Malformed, RowByteSizeOverflowIsRefused) {
  Spec s;
  s.tensors[0].dims = {uint64_t{1} << 62};
  expect_error("row_bytes_wrap", s.build(), {"'a.weight'", "byte size overflows int64"});
}

// The parsed metadata is budgeted: a small file cannot make the reader allocate without bound.
// 2.5 million empty strings are 20 MB in the file, 80 MB as std::string: refused, at an offset.
TEST_F(Malformed, MetadataMemoryIsBudgeted) {
  Spec s;
  Bytes arr;
  const uint64_t n = 2'500'000;
  arr.put<uint32_t>(kString).put<uint64_t>(n);
  arr.b.resize(arr.b.size() + n * 8, 0);  // n empty strings: 8-byte zero lengths
  s.kv_raw("tokenizer.ggml.tokens2", kArray, arr.b);
  expect_error("string_bomb", s.build(), {"byte offset", "more than 32 MiB of memory once parsed"});
  // Many tiny key-value pairs: ~13 bytes each in the file, ~180 in memory.
  Spec kv;
  for (int k = 0; k < 250'000; ++k) {
    Bytes one;
    one.str("k" + std::to_string(k)).put<uint32_t>(0).put<uint8_t>(0);
    kv.kvs.push_back(one.b);
  }
  expect_error("kv_bomb", kv.build(), {"more than 32 MiB"});
}

// The largest real vocabulary in the fixtures (Llama 3: 128,256 tokens, 280,147 merges) takes
// well under half the budget.
TEST_F(Malformed, RealVocabulariesFitTheBudgetWithRoom) {
  const fs::path p = pfx::fixtures_dir() / "vocab" / "ggml-vocab-llama-bpe.gguf";
  ASSERT_TRUE(fs::exists(p)) << p;
  const File f = File::open(p);
  std::cout << p.filename().string() << ": " << f.metadata_bytes() << " bytes of parsed metadata\n";
  EXPECT_LT(f.metadata_bytes(), pfx::gguf::kMaxMetadataBytes / 2) << f.metadata_bytes();
  EXPECT_GT(f.metadata_bytes(), 280'147u * 32) << "the budget must count the strings it holds";
}

// Names from the file are shown escaped: no terminal control bytes reach the message.
TEST_F(Malformed, NamesInMessagesAreEscaped) {
  Spec s;
  s.tensors[0].name = std::string("evil\x1b]0;owned\x07\n", 15);
  s.tensors[2].name = s.tensors[0].name;
  const fs::path p = write("escaped.gguf", s.build());
  try {
    (void)File::open(p);
    FAIL() << "expected an error";
  } catch (const pfx::Error& e) {
    const std::string msg = e.what();
    EXPECT_NE(msg.find("'evil\\x1b]0;owned\\x07\\x0a'"), std::string::npos) << msg;
    EXPECT_EQ(msg.find('\x1b'), std::string::npos);
    EXPECT_EQ(msg.find('\n'), std::string::npos);
  }
}

TEST_F(Malformed, TensorCountPastTheLimitIsRefused) {
  Spec s;
  s.n_tensors = pfx::gguf::kMaxTensors + 1;
  auto bytes = s.build();
  bytes.resize(bytes.size() + (pfx::gguf::kMaxTensors + 1) * 24, 0);  // room enough to fit the count
  expect_error("tensor_limit", bytes, {"byte offset 8", "tensor count 65537 exceeds the reader's limit of 65536"});
}

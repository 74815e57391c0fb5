// The ggml type table: names, block geometry and what this library supports, by ggml id.
#include "quant/types.h"

#include <array>
#include <cctype>
#include <limits>
#include <string>

#include "util/error.h"

namespace pfx::quant {
namespace {

struct Entry {
  bool present;      // a type that can appear in a GGUF file
  TypeTraits traits;
};

// Sizes are ggml's type_traits (ggml.c): blck_size and sizeof(block_*). Index = ggml id.
constexpr int kMaxId = 41;
constexpr std::array<Entry, kMaxId + 1> kTable = {{
    /* 0*/ {true, {"f32", 1, 4, true, true}},
    /* 1*/ {true, {"f16", 1, 2, true, true}},
    /* 2*/ {true, {"q4_0", 32, 18, true, false}},
    /* 3*/ {true, {"q4_1", 32, 20, true, false}},
    /* 4*/ {false, {"Q4_2", 0, 0, false, false}},
    /* 5*/ {false, {"Q4_3", 0, 0, false, false}},
    /* 6*/ {true, {"q5_0", 32, 22, true, false}},
    /* 7*/ {true, {"q5_1", 32, 24, true, false}},
    /* 8*/ {true, {"q8_0", 32, 34, true, true}},
    /* 9*/ {true, {"q8_1", 32, 36, false, false}},
    /*10*/ {true, {"q2_K", 256, 84, false, false}},
    /*11*/ {true, {"q3_K", 256, 110, false, false}},
    /*12*/ {true, {"q4_K", 256, 144, true, true}},
    /*13*/ {true, {"q5_K", 256, 176, true, true}},
    /*14*/ {true, {"q6_K", 256, 210, true, true}},
    /*15*/ {true, {"q8_K", 256, 292, true, false}},
    /*16*/ {true, {"iq2_xxs", 256, 66, false, false}},
    /*17*/ {true, {"iq2_xs", 256, 74, false, false}},
    /*18*/ {true, {"iq3_xxs", 256, 98, false, false}},
    /*19*/ {true, {"iq1_s", 256, 50, false, false}},
    /*20*/ {true, {"iq4_nl", 32, 18, false, false}},
    /*21*/ {true, {"iq3_s", 256, 110, false, false}},
    /*22*/ {true, {"iq2_s", 256, 82, false, false}},
    /*23*/ {true, {"iq4_xs", 256, 136, false, false}},
    /*24*/ {true, {"i8", 1, 1, false, false}},
    /*25*/ {true, {"i16", 1, 2, false, false}},
    /*26*/ {true, {"i32", 1, 4, false, false}},
    /*27*/ {true, {"i64", 1, 8, false, false}},
    /*28*/ {true, {"f64", 1, 8, false, false}},
    /*29*/ {true, {"iq1_m", 256, 56, false, false}},
    /*30*/ {true, {"bf16", 1, 2, true, true}},
    /*31*/ {false, {"Q4_0_4_4", 0, 0, false, false}},
    /*32*/ {false, {"Q4_0_4_8", 0, 0, false, false}},
    /*33*/ {false, {"Q4_0_8_8", 0, 0, false, false}},
    /*34*/ {true, {"tq1_0", 256, 54, false, false}},
    /*35*/ {true, {"tq2_0", 256, 66, false, false}},
    /*36*/ {false, {"IQ4_NL_4_4", 0, 0, false, false}},
    /*37*/ {false, {"IQ4_NL_4_8", 0, 0, false, false}},
    /*38*/ {false, {"IQ4_NL_8_8", 0, 0, false, false}},
    /*39*/ {true, {"mxfp4", 32, 17, false, false}},
    /*40*/ {true, {"nvfp4", 64, 36, false, false}},
    /*41*/ {true, {"q1_0", 128, 18, false, false}},
}};

bool iequal(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (size_t k = 0; k < a.size(); ++k) {
    if (std::tolower(static_cast<unsigned char>(a[k])) != std::tolower(static_cast<unsigned char>(b[k]))) return false;
  }
  return true;
}

}  // namespace

const TypeTraits* traits(uint32_t ggml_type_id) {
  if (ggml_type_id > kMaxId || !kTable[ggml_type_id].present) return nullptr;
  return &kTable[ggml_type_id].traits;
}

const TypeTraits& traits(Type t) {
  const TypeTraits* tr = traits(static_cast<uint32_t>(t));
  if (!tr) fail("quant: ", describe_type_id(static_cast<uint32_t>(t)), " is not a valid tensor type");
  return *tr;
}

std::string_view type_name(Type t) {
  if (const TypeTraits* tr = traits(static_cast<uint32_t>(t))) return tr->name;
  return "type#invalid";
}

std::string describe_type_id(uint32_t id) {
  if (id <= kMaxId) {
    const Entry& e = kTable[id];
    if (e.present) return std::string(e.traits.name) + " (id " + std::to_string(id) + ")";
    return std::string(e.traits.name) + " (id " + std::to_string(id) + ", removed from ggml)";
  }
  return "unknown type id " + std::to_string(id);
}

Type parse_type(std::string_view name) {
  for (uint32_t id = 0; id <= kMaxId; ++id) {
    if (kTable[id].present && iequal(kTable[id].traits.name, name)) return static_cast<Type>(id);
  }
  fail("quant: unknown tensor type name '", name, "' (expected a ggml name such as f32, f16, q8_0, q4_K, q6_K)");
}

int64_t element_alignment(Type t) {
  switch (t) {
    case Type::F32:
    case Type::I32:
    case Type::Q8_K: return 4;  // float / int32 fields
    case Type::I64:
    case Type::F64: return 8;
    case Type::I8:
    case Type::MXFP4: return 1;  // bytes only (mxfp4's scale is an e8m0 byte)
    default: break;
  }
  (void)traits(t);  // throws for a value outside the enum
  return 2;  // f16, bf16, i16 and the blocks with fp16 (ggml_half) scales; an upper bound for the rest
}

int64_t row_bytes(Type t, int64_t n_per_row) {
  const TypeTraits& tr = traits(t);
  if (n_per_row < 0 || n_per_row % tr.block_size != 0) {
    fail("quant: row of ", n_per_row, " elements is not a multiple of the ", tr.name, " block size ",
         tr.block_size);
  }
  const int64_t blocks = n_per_row / tr.block_size;
  if (blocks > std::numeric_limits<int64_t>::max() / tr.type_size) {
    fail("quant: row of ", n_per_row, " ", tr.name, " elements overflows a 64-bit byte count");
  }
  return blocks * tr.type_size;
}

}  // namespace pfx::quant

// ggml tensor types as stored in GGUF files: ids, block sizes, bytes per block, what we support.
// Every id ggml has ever assigned is covered, so a reader can tell an unknown id (corrupt file)
// from a known type we cannot dequantize (an IQ format, say) and from an id ggml removed.
#pragma once
#include <cstdint>
#include <string>
#include <string_view>

namespace pfx::quant {

// Values are ggml's GGML_TYPE_* ids (ggml.h); they are what GGUF tensor infos store.
enum class Type : uint32_t {
  F32 = 0,
  F16 = 1,
  Q4_0 = 2,
  Q4_1 = 3,
  // 4 (Q4_2) and 5 (Q4_3) were removed from ggml.
  Q5_0 = 6,
  Q5_1 = 7,
  Q8_0 = 8,
  Q8_1 = 9,
  Q2_K = 10,
  Q3_K = 11,
  Q4_K = 12,
  Q5_K = 13,
  Q6_K = 14,
  Q8_K = 15,
  IQ2_XXS = 16,
  IQ2_XS = 17,
  IQ3_XXS = 18,
  IQ1_S = 19,
  IQ4_NL = 20,
  IQ3_S = 21,
  IQ2_S = 22,
  IQ4_XS = 23,
  I8 = 24,
  I16 = 25,
  I32 = 26,
  I64 = 27,
  F64 = 28,
  IQ1_M = 29,
  BF16 = 30,
  // 31..33 (Q4_0_4_4, Q4_0_4_8, Q4_0_8_8) were removed from GGUF files.
  TQ1_0 = 34,
  TQ2_0 = 35,
  // 36..38 (IQ4_NL_4_4, IQ4_NL_4_8, IQ4_NL_8_8) were removed from GGUF files.
  MXFP4 = 39,
  NVFP4 = 40,
  Q1_0 = 41,
};

struct TypeTraits {
  std::string_view name;   // ggml's name, e.g. "q4_K"
  int64_t block_size;      // elements per block
  int64_t type_size;       // bytes per block
  bool can_dequantize;     // dequantize_row() supports it
  bool can_quantize;       // quantize_row() supports it
};

// Traits of a ggml type id; nullptr if the id is not a type that can appear in a GGUF file
// (never assigned, or removed from ggml).
const TypeTraits* traits(uint32_t ggml_type_id);
// Traits of a valid Type; throws pfx::Error for a value outside the enum.
const TypeTraits& traits(Type t);

// "q4_K"; for an invalid value "type#<id>".
std::string_view type_name(Type t);
// Human description of any id, for error messages: "q4_K (id 12)", "Q4_2 (id 4, removed from
// ggml)", "unknown type id 77".
std::string describe_type_id(uint32_t ggml_type_id);
// Parses ggml's names case-insensitively ("q4_k", "Q6_K", "f16"); throws pfx::Error if unknown.
Type parse_type(std::string_view name);

// Alignment in bytes that typed loads of t's elements or blocks need: alignof of the element type
// or block struct (f32 4, f16/bf16 2, blocks with fp16 scales 2, q8_K 4, i64/f64 8, ...). A
// tensor whose data starts at a multiple of it can be read through typed pointers.
int64_t element_alignment(Type t);

// Bytes of one row of n_per_row elements. Throws pfx::Error if n_per_row is negative or not a
// multiple of the block size, or if the byte count would overflow int64.
int64_t row_bytes(Type t, int64_t n_per_row);

}  // namespace pfx::quant

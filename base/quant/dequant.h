// Reference dequantization: ggml's definitions (dequantize_row_*), bit for bit. The CPU
// reference engine and the tests use it; the CUDA generic path must agree with it exactly.
#pragma once
#include <cstdint>

#include "quant/types.h"

namespace pfx::quant {

// Decodes n elements (a multiple of the type's block size) from src into dst.
// Supported: F32, F16, BF16, Q4_0, Q4_1, Q5_0, Q5_1, Q8_0, Q4_K, Q5_K, Q6_K, Q8_K
// (traits().can_dequantize).
// Throws pfx::Error for other types or a bad n.
void dequantize_row(Type type, const void* src, float* dst, int64_t n);

// Unpacks the 6-bit scale d and min m of sub-block j (0..7) from a q4_K/q5_K scales[12] array.
void get_scale_min_k4(int j, const uint8_t* q, uint8_t* d, uint8_t* m);

}  // namespace pfx::quant

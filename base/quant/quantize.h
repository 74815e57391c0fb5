// Reference quantizers f32 → F32, F16, BF16, Q8_0, Q4_K, Q6_K in ggml's style (the same search
// as ggml's quantize_row_*_ref, no importance matrix), for synthetic models and tests.
// Thread-safe and allocation-free: call per row from many threads.
#pragma once
#include <cstdint>

#include "quant/types.h"

namespace pfx::quant {

// Encodes n elements (a multiple of the type's block size) of src into dst, which must hold
// row_bytes(type, n) bytes. Throws pfx::Error for unsupported types (traits().can_quantize).
void quantize_row(Type type, const float* src, void* dst, int64_t n);

}  // namespace pfx::quant

// Test support for the fast quantized GEMM: random GGUF weight blocks (every bit pattern of the
// quants and scales, fp16 scales of moderate size plus a few subnormal ones), the reference fp16
// weights (quant::dequantize_row, then fp16 round-to-nearest-even: the arithmetic contract), and a
// float64 reference product with the per-element sum of |x·w| that bounds fp32 rounding error.
#pragma once
#include <cstdint>
#include <random>
#include <vector>

#include "quant/types.h"

namespace pfx::kernels::test {

// ggml type ids (base/quant/types.h) of the fast kernels' weight types.
inline constexpr uint32_t kF16 = static_cast<uint32_t>(quant::Type::F16), kQ8_0 = static_cast<uint32_t>(quant::Type::Q8_0),
                          kQ4K = static_cast<uint32_t>(quant::Type::Q4_K), kQ5K = static_cast<uint32_t>(quant::Type::Q5_K),
                          kQ6K = static_cast<uint32_t>(quant::Type::Q6_K);
inline constexpr uint32_t kFastTypes[] = {kQ4K, kQ6K, kQ8_0, kF16};
// gemm_ws's weight types (kernels/gemm_ws.h): the fast types and q5_K.
inline constexpr uint32_t kWsTypes[] = {kQ4K, kQ5K, kQ6K, kQ8_0, kF16};

const char* type_name(uint32_t ggml_type);
int64_t row_bytes(uint32_t ggml_type, int64_t cols);

// N rows of K elements of random blocks of `ggml_type`, in a buffer whose size is exactly
// N·row_bytes (so reads past the end are reads past the tensor).
std::vector<uint8_t> random_weights(uint32_t ggml_type, int64_t N, int64_t K, std::mt19937_64& rng);

// Multiplies the scale d of every q4_K / q6_K block by `factor` (rounded to fp16): 2^4 puts most
// blocks outside the one-FMA decodes' range (kernels/gemm_ws.h), 2^-6 every block inside.
void scale_block_scales(uint32_t ggml_type, std::vector<uint8_t>& raw, float factor);

// fp16 bits of fp16_rn(ggml dequant) of every weight, [N, K].
std::vector<uint16_t> reference_weights_f16(uint32_t ggml_type, const std::vector<uint8_t>& raw, int64_t N,
                                            int64_t K);

// fp16 values uniform in [-1, 1], never 0 (a kernel writing zeros cannot pass).
std::vector<uint16_t> random_activations(int64_t n, std::mt19937_64& rng);

struct Reference {
  std::vector<double> y;       // [T, N]: Σ_k x·w in float64
  std::vector<double> abssum;  // [T, N]: Σ_k |x·w|
};
// x16 [T, K], w16 [N, K] (fp16 bits); threaded.
Reference reference_gemm(const std::vector<uint16_t>& x16, const std::vector<uint16_t>& w16, int64_t T, int64_t N,
                         int64_t K);

// Whether the variant named `name` is to be run: $PFX_GEMM_VARIANTS is a comma-separated list of
// name prefixes ("mma_", "wgmma_t128_n128"); unset or empty selects every variant. Lets a GPU run
// test the two MMA flavours in separate processes, so a crash in one cannot hide the other.
bool variant_selected(const char* name);

// silu(g)·u in float64.
double silu_mul_ref(double g, double u);

}  // namespace pfx::kernels::test

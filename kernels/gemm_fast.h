// Fast quantized GEMM / GEMV launch API (kernels/gemm_fast*.cu): Y[T,N] = X16[T,K] · fp16(W[N,K])ᵀ
// straight from the GGUF blocks of W, without an fp16 copy of the weights in memory.
//
// Arithmetic contract (kernels/gemm_fast_weights.cuh, "Exactness"): every weight becomes exactly
// fp16_round_nearest_even(ggml's fp32 dequant value) — bit for bit what dequant_to_f16 produces —
// activations are fp16, products are exact and accumulated in fp32. The generic path (dequant to
// fp16 in memory + cuBLAS with fp32 compute) is therefore a bit-faithful reference: the two differ
// only in the order of the fp32 additions.
//
// Weight types: q4_K (12), q6_K (14), q8_0 (8), and f16 (1, no decoding); the decode mat-vec also
// q5_K (13). Anything else returns a reason from gemm_fast_unsupported_reason() /
// gemv_fast_unsupported_reason() and the caller takes the generic path.
//
// Measured on the H200 (docs/gemm-fast.md): q4_K 206-399 TFLOP/s (1.2-2.3x llama.cpp's
// MMQ), q6_K 129-154 (~1.0x), bit-identical to cuBLAS on the dequantized weights. At T >= 512 the
// generic path (dequant_to_f16 + cuBLAS) is still faster (375-659 TFLOP/s for q4_K): routing
// prefill GEMMs is the caller's decision; gemv_fast beats it for decode.
//
// Plain C++: the engine includes this header and nothing from the device side.
#pragma once
#include <cuda_runtime_api.h>

#include <cstdint>
#include <string>
#include <vector>

namespace pfx::kernels {

enum class GemmEpilogue {
  StoreF32,       // y is float*:    Y  = X·Wᵀ
  AccumulateF32,  // y is float*:    Y += X·Wᵀ (one fp32 add per element: the residual update)
  StoreF16,       // y is uint16_t*: Y  = fp16_rn(X·Wᵀ)
};

// A weight matrix on the device in its GGUF form: `rows` (N) rows of `cols` (K) elements, rows
// stored back to back as ggml blocks. `data` must be 16-byte aligned (cudaMalloc and GGUF's
// 32-byte tensor alignment both give that).
struct QuantMatrixView {
  const void* data;
  uint32_t ggml_type;
  int64_t rows /*N*/, cols /*K*/;
};

// Token counts up to this go to gemv_fast (the dispatcher's choice); above it to gemm_fast.
inline constexpr int64_t kGemvMaxT = 8;

// Empty if gemm_fast (T > kGemvMaxT) or gemv_fast (T <= kGemvMaxT) supports this call; otherwise
// the reason, for the caller to log before falling back to the generic path.
std::string gemm_fast_unsupported_reason(const QuantMatrixView& w, int64_t T);

// Y[T,N] (row-major, ld N) from X16[T,K] (row-major, ld K). x16 and y 16-byte aligned. Any T >= 1
// (ragged tiles are predicated). Throws pfx::Error for a call gemm_fast_unsupported_reason rejects.
void gemm_fast(const QuantMatrixView& w, const uint16_t* x16, int64_t T, void* y, GemmEpilogue epilogue,
               cudaStream_t stream);

// Fused FFN input: a16[T,N] = fp16( silu(X·Wgᵀ) * (X·Wuᵀ) ), silu(g) = g / (1 + exp(-g)) in fp32.
// gate and up: same type and shape. Saves the fp32 round trip of both GEMM outputs.
std::string gemm_fast_swiglu_unsupported_reason(const QuantMatrixView& gate, const QuantMatrixView& up,
                                                int64_t T);
void gemm_fast_swiglu(const QuantMatrixView& gate, const QuantMatrixView& up, const uint16_t* x16, int64_t T,
                      uint16_t* a16, cudaStream_t stream);

// Decode (1 <= T <= kGemvMaxT): a weight-bandwidth-bound mat-vec on the raw quantized bytes, same
// weight values and fp32 accumulation. Takes q5_K too. Empty reason if gemv_fast takes the call.
std::string gemv_fast_unsupported_reason(const QuantMatrixView& w, int64_t T);
void gemv_fast(const QuantMatrixView& w, const uint16_t* x16, int64_t T, void* y, GemmEpilogue epilogue,
               cudaStream_t stream);

// The decode kernels, for side-by-side timing and tests (kernels/gemm_fast_gemv.cu): Staged = the
// cp.async-ring kernel (q4_K, q6_K, q8_0, f16); DirectW<n> = loads straight into registers, n warps
// splitting K per 16-row block (q4_K: 2, 4, 8, 16; q5_K, q6_K: 2, 4, 8), one block per 16 rows;
// StreamW<n> = the same kernel on as many blocks as the GPU holds at once, each streaming several
// 16-row tiles (q4_K: 4, 8, 16; q5_K, q6_K: 4, 8; same bits as DirectW<n>); SeqD<n> = the generic
// GEMM's summation order, n decoder warps (kernels/gemm_fast_gemv_seq.cuh; q4_K, q6_K: 2, 4;
// q5_K: 2), bitwise equal to the generic path. Auto = gemv_fast's choice (measured,
// kernels/gemm_fast_gemv.cu): for the K-quants seq at T = 2..8, direct at T = 1; staged for q8_0
// and f16. Every kernel gives each output as a fixed-order sum (bitwise run to run), but two
// kernels differ in that order.
// Decode steps (T = 1) in fewer launches, with the same bits as gemv_fast per matrix (its direct
// kernel, one block per 16-row tile of every part, in one grid):
// - gemv_fast_group: up to three matrices of one K-quant type and one K against the same
//   activations, each into its own output under its own epilogue (the Q, K, V projections);
// - gemv_fast_swiglu: a16 = fp16(silu(gate·x) · (up·x)), as gemv_fast of gate and up (StoreF32)
//   followed by silu_mul_f32_to_f16.
// Empty reason if the call is taken; T > 1 is not (gemv_fast runs the generic order there).
inline constexpr int kGemvMaxParts = 3;  // matrices per gemv_fast_group launch
struct GemvOutput {
  QuantMatrixView w;
  void* y;
  GemmEpilogue epilogue;
};
std::string gemv_fast_group_unsupported_reason(const std::vector<GemvOutput>& parts, int64_t T);
void gemv_fast_group(const std::vector<GemvOutput>& parts, const uint16_t* x16, int64_t T, cudaStream_t stream);
// - gemv_fast_group_heads: gemv_fast_group whose parts store the attention's inputs of a decode
//   step, as kernels::rope_store_qkv_fused stores them from gemv_fast_group's fp32 outputs (same
//   bits): each head's pairs (2i, 2i+1) rotated by RoPE (rotate) or not, fp16, into rows [T, rows]
//   (q16) or the cache rows of positions p0 .. p0 + T - 1 ([rows / hd][max_ctx][hd]: kv_cache).
struct GemvHeadOutput {
  QuantMatrixView w;
  uint16_t* y;
  bool rotate, kv_cache;
};
struct GemvRopeTarget {
  const float* cos_sin;  // [T][hd / 2] (cos, sin) of positions p0 + t (kernels::rope_table); null if nothing rotates
  int head_dim;          // hd: a multiple of 16 (a 16-row tile lies in one head); every part's rows a multiple of it
  int p0;                // the first token's position (ignored when p0_dev is set)
  const int* p0_dev;     // or that position in device memory (a graph-captured decode step)
  int max_ctx;           // cache rows per head: p0 + T <= max_ctx
};
std::string gemv_fast_group_heads_unsupported_reason(const std::vector<GemvHeadOutput>& parts, int64_t T,
                                                     const GemvRopeTarget& rope);
void gemv_fast_group_heads(const std::vector<GemvHeadOutput>& parts, const GemvRopeTarget& rope, const uint16_t* x16,
                           int64_t T, cudaStream_t stream);
std::string gemv_fast_swiglu_unsupported_reason(const QuantMatrixView& gate, const QuantMatrixView& up, int64_t T);
void gemv_fast_swiglu(const QuantMatrixView& gate, const QuantMatrixView& up, const uint16_t* x16, int64_t T,
                      uint16_t* a16, cudaStream_t stream);

enum class GemvKernel { Auto, Staged, DirectW2, DirectW4, DirectW8, DirectW16, StreamW4, StreamW8, StreamW16, SeqD2, SeqD4 };
const char* gemv_kernel_name(GemvKernel k);
std::vector<GemvKernel> gemv_fast_kernels(uint32_t ggml_type);  // every kernel but Auto that takes the type
void gemv_fast_kernel(GemvKernel kernel, const QuantMatrixView& w, const uint16_t* x16, int64_t T, void* y,
                      GemmEpilogue epilogue, cudaStream_t stream);

}  // namespace pfx::kernels

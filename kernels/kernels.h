// Host launch API of the CUDA kernels (kernels/*.cu). Plain C++: the engine includes this header
// and nothing from the device side. fp16 tensors are passed as uint16_t* (IEEE binary16 bits).
//
// Every launcher takes the stream it enqueues on, checks its shape and alignment preconditions
// before touching the GPU, and throws pfx::Error (util/error.h) naming the launcher, the argument
// and what was expected. Where the caller can fall back to the generic kernel, a
// `*_unsupported_reason()` function returns nullptr when the fast kernel applies and a static
// message otherwise, so the engine can log the reason and take the generic path.
//
// Layouts: activations row-major [T, width]; q16 [T, H, hd]; one layer's KV
// cache [Hkv][max_ctx][hd] fp16; attention output o16 [T, H*hd].
#pragma once
#include <cstddef>
#include <cstdint>

#include <cuda_runtime_api.h>

struct cublasContext;  // cublasHandle_t is cublasContext*; no cuBLAS header needed here

namespace pfx::kernels {

// ---- weight decoding (dequant.cu) -----------------------------------------------------------
// Supported ggml type ids: F32 (0), F16 (1), Q4_0 (2), Q4_1 (3), Q5_0 (6), Q5_1 (7), Q8_0 (8),
// Q4_K (12), Q5_K (13), Q6_K (14), BF16 (30). Element values are bit-identical to ggml's dequantize_row_* in fp32, and for the
// fp16 outputs to fp16_round_nearest_even of that (the arithmetic contract, kernels/gemm_fast_weights.cuh).
bool dequant_supported(uint32_t ggml_type);

// w: `rows` rows of `cols` elements in the type's block layout (GGUF order; cols a multiple of
// the block size); out: [rows, cols] contiguous, 16-byte aligned.
void dequant_to_f16(uint32_t ggml_type, const void* w, uint16_t* out, int64_t rows, int64_t cols,
                    cudaStream_t stream);
void dequant_to_f32(uint32_t ggml_type, const void* w, float* out, int64_t rows, int64_t cols,
                    cudaStream_t stream);

// x32[t, :] = dequant(token_embd row ids[t]) in fp32. ids is a device array of T token ids; an id
// outside [0, n_vocab) gives a row of NaN (the caller validates ids on the host; NaN makes a slip
// visible instead of reading out of bounds).
void embed_tokens(uint32_t ggml_type, const void* token_embd, int64_t n_vocab, const int32_t* ids,
                  int T, int D, float* x32, cudaStream_t stream);

// ---- RMSNorm (rmsnorm.cu) -------------------------------------------------------------------
// out[t, :] = fp16( (x[t, :] * (1 / sqrt(mean(x[t, :]^2) + eps))) * w ), fp32 math.
// Generic: one warp per row, scalar loads, any D >= 1; sums in the fast kernel's order (bitwise
// equal to it when D % 4 == 0).
void rmsnorm_f32_to_f16(const float* x, const float* w, uint16_t* out, int T, int D, float eps,
                        cudaStream_t stream);
// Fast: one warp per row, float4 loads. Needs D % 4 == 0, x and w 16-byte aligned, out 8-byte.
const char* rmsnorm_fast_unsupported_reason(const float* x, const float* w, const uint16_t* out, int D);
void rmsnorm_f32_to_f16_fast(const float* x, const float* w, uint16_t* out, int T, int D, float eps,
                             cudaStream_t stream);

// ---- RoPE and the KV-cache write (rope.cu) --------------------------------------------------
// ggml rope mode 0 (adjacent pairs (2i, 2i+1): llama) or, with neox, mode 2 (pairs (i, i+n_rot/2):
// qwen2) over the first n_rot elements of each head (0: all hd; the rest pass unrotated), with
// theta(pos, i) = pos * base^(-2i/n_rot) * freq_scale / freq_factors[i] (freq_factors: n_rot/2
// fp32 on the device, llama3's rope_freqs; nullptr: 1). cos/sin are evaluated in double precision,
// the rotation in fp32; the same device function serves the generic and the fused kernel, so both
// give identical bits.
struct QkvShape {
  int T = 0;            // tokens in this call, positions p0 .. p0+T-1
  int H = 0;            // query heads
  int Hkv = 0;          // key/value heads (H % Hkv == 0)
  int hd = 0;           // head dim (even)
  int p0 = 0;           // position of the first token
  int max_ctx = 0;      // cache rows per kv head (p0 + T <= max_ctx)
  float rope_base = 10000.0f;
  // Added for Llama 3 / Qwen2 (issue 13):
  int n_rot = 0;                         // rotated elements per head (even, <= hd); 0: hd
  bool neox = false;                     // pair (i, i + n_rot/2) instead of (2i, 2i+1)
  float freq_scale = 1.0f;               // linear RoPE scaling: 1 / factor
  const float* freq_factors = nullptr;   // [n_rot/2] device fp32, or nullptr
  // Added for graph-launched decode steps (issue 14): when set, the kernel reads the position of
  // the first token from this device int and p0 above is ignored, so one captured CUDA graph
  // serves every step. Fast kernel only (the generic launchers reject it). A device p0 with
  // p0 + T > max_ctx (or < 0) writes nothing: the host checks the position before each replay.
  const int* p0_dev = nullptr;
};
// Inputs: fp32 rows, row strides in elements (>= H*hd resp. Hkv*hd; a fused QKV GEMM output can
// pass pointers into one buffer with its full row stride).
struct QkvInput {
  const float* q32 = nullptr; int64_t ld_q = 0;
  const float* k32 = nullptr; int64_t ld_k = 0;
  const float* v32 = nullptr; int64_t ld_v = 0;
};
// Outputs: q16 [T, H, hd]; this layer's caches [Hkv][max_ctx][hd], rows p0..p0+T-1 written.
struct QkvOutput {
  uint16_t* q16 = nullptr;
  uint16_t* k_cache = nullptr;
  uint16_t* v_cache = nullptr;
};
// Generic, step 1: rotate q32 and k32 in place (fp32).
void rope_f32(float* q32, int64_t ld_q, float* k32, int64_t ld_k, const QkvShape& s, cudaStream_t stream);
// Generic, step 2: fp16 conversion of the (already rotated) q, k and v, K/V scattered into the cache.
void store_qkv(const QkvInput& in, const QkvOutput& out, const QkvShape& s, cudaStream_t stream);
// Fast: rotation + conversion + cache write in one pass over unrotated q32/k32 (inputs untouched).
void rope_store_qkv_fused(const QkvInput& in, const QkvOutput& out, const QkvShape& s, cudaStream_t stream);
// For an epilogue that rotates as it stores (kernels::gemm_ws_group_rope): cos_sin[t][i] = the
// (cos, sin) pair, as two floats, of rotation pair i < n_rot/2 at position p0 + t, t < T; the
// values the kernels above compute for themselves. The position by value or from s.p0_dev (a
// device position whose rows do not fit the cache writes nothing).
void rope_table(const QkvShape& s, float* cos_sin, cudaStream_t stream);

// ---- attention (attention_generic.cu, attention_flash*.cu, attention_decode.cu) ---------------
// o16[t, h*hd + d] = sum_c P[h][t][c] * V[h / (H/Hkv)][c][d], P = softmax_c(scale * q·k) over the
// causal context c <= p0 + t, scale = 1/sqrt(hd). Scores fp32 (in log2 units), unnormalised
// probabilities exp2(s - m) rounded to fp16 before P·V with m the row max rounded up to an
// integer (attention_shared.h: why every kernel then rounds the same), P·V accumulated in fp32,
// divided by the fp32 sum of the probabilities, output rounded to fp16.
struct AttentionArgs {
  const uint16_t* q16 = nullptr;      // [T, H, hd]
  const uint16_t* k_cache = nullptr;  // this layer: [Hkv][max_ctx][hd], rows 0..p0+T-1 valid
  const uint16_t* v_cache = nullptr;
  uint16_t* o16 = nullptr;            // [T, H*hd]
  int T = 0, H = 0, Hkv = 0, hd = 0, p0 = 0, max_ctx = 0;
  // Graph-launched decode steps (issue 14): when set, attention_decode reads p0 from this device
  // int (p0 above is then ignored) and launches a grid that depends on max_ctx only; blocks past
  // the live context's split count exit. The splits for a given context are the same either way,
  // so the output bits are too. A device p0 outside [0, max_ctx - T] gives NaN outputs. The other
  // attention kernels take the position by value only and reject it.
  const int* p0_dev = nullptr;
};

// Generic, any hd. hd 64/128: a plain tiled tensor-core kernel computing flash attention's
// arithmetic in flash's order (bitwise equal to attention_flash_prefill). Other hd: per kv group,
// cuBLAS strided-batched Q·Kᵀ -> fp32 scores [H][T][ctx8] (ctx8 = ctx rounded up to 8), a causal
// softmax kernel writing fp16 probabilities and their fp32 row sums, cuBLAS P·V (fp32 accumulate
// and out), a kernel dividing by the sums into fp16. Scratch of
// attention_generic_scratch_bytes(T, p0+T, H, hd) bytes, 256-byte aligned (0 for hd 64/128: the
// tiled kernel needs none, and scratch may then be null). The handle's stream is set to `stream`.
size_t attention_generic_scratch_bytes(int T, int ctx, int H, int hd);
void attention_generic(const AttentionArgs& a, cublasContext* cublas, void* scratch, size_t scratch_bytes,
                       cudaStream_t stream);

// Fast: tensor-core flash attention (mma.sync m16n8k16, online softmax, causal block skipping,
// a cp.async ring of K/V tiles; attention_flash_variants.h: the variants and the default) for
// prefill, and a split-context kernel for decode (T <= kDecodeMaxT). hd 64 and 128; otherwise
// unsupported (reason returned).
inline constexpr int kDecodeMaxT = 4;
const char* attention_fast_unsupported_reason(const AttentionArgs& a);
// Scratch the fast path needs (split partials of the decode kernel; 0 for prefill shapes).
size_t attention_fast_scratch_bytes(int T, int H, int hd);
// Picks decode for T <= kDecodeMaxT rows after a cached context (p0 > 0, or a device position),
// flash prefill otherwise: a chunk at position 0 (a prompt) gets flash's bits, the generic path's.
void attention_fast(const AttentionArgs& a, void* scratch, size_t scratch_bytes, cudaStream_t stream);
// The two fast kernels directly (tests run each on every shape).
void attention_flash_prefill(const AttentionArgs& a, cudaStream_t stream);
size_t attention_decode_scratch_bytes(int T, int H, int hd);
void attention_decode(const AttentionArgs& a, void* scratch, size_t scratch_bytes, cudaStream_t stream);

// ---- elementwise (elementwise.cu) -----------------------------------------------------------
// a16[i] = fp16( silu(g32[i]) * u32[i] ), silu(g) = g / (1 + exp(-g)) in fp32.
void silu_mul_f32_to_f16(const float* g32, const float* u32, uint16_t* a16, int64_t n, cudaStream_t stream);
// x[i] += y[i] (fp32).
void add_f32(float* x, const float* y, int64_t n, cudaStream_t stream);
// x[t, c] += bias[c] for t < T, c < n; rows of x have stride ld (elements). The Q/K/V biases
// (qwen2) on both CUDA paths.
void add_bias_f32(float* x, int64_t ld, const float* bias, int T, int64_t n, cudaStream_t stream);
// out[i] = fp16_round_nearest_even(in[i]).
void f32_to_f16(const float* in, uint16_t* out, int64_t n, cudaStream_t stream);

// ---- argmax (argmax.cu) ---------------------------------------------------------------------
// out[r] = index of the largest x[r, :] (the lowest index among equal maxima), or -1 if the row
// holds a NaN (greedy sampling on the GPU; the caller treats -1 as a failure).
void argmax_rows(const float* x, int rows, int cols, int32_t* out, cudaStream_t stream);

}  // namespace pfx::kernels

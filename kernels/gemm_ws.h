// The warp-specialized fused quantized GEMM (kernels/gemm_ws_kernel.cuh): Y[T,N] = X16[T,K] ·
// fp16(W[N,K])ᵀ on weights repacked once at load time (kernels/gemm_ws_layout.cuh: the same bits
// in the order the kernel's A fragments want them), TMA + mbarrier pipeline, producer/consumer
// warpgroups, wgmma with the weights dequantized in registers, fp32 accumulation in k order.
// Same arithmetic contract as kernels/gemm_fast.h: bit-identical fp16 weights, bitwise equal to
// cuBLAS on the generic path's dequantized weights.
//
// Types: q4_K, q5_K, q6_K, q8_0, f16; rows a multiple of 64 (SwiGLU: of 8), cols a multiple of the
// type's group (256 for the K-quants, 64 otherwise). Any T >= 1.
// Plain C++: the engine includes this header and nothing from the device side.
#pragma once
#include <cuda_runtime_api.h>

#include <cstdint>
#include <string>
#include <vector>

#include "kernels/gemm_fast.h"

namespace pfx::kernels {

// A matrix in gemm_ws's repacked form, on the device (gemm_ws_repacked_bytes bytes at `data`).
struct WsMatrixView {
  const void* data;
  uint32_t ggml_type;
  int64_t rows /*N*/, cols /*K*/;  // of the source matrix (SwiGLU: of gate, = of up)
  bool swiglu;                     // gate and up interleaved (gemm_ws_repack_swiglu)
};

// Empty when gemm_ws can take a `rows` × `cols` matrix of this type; otherwise why not.
std::string gemm_ws_unsupported_reason(uint32_t ggml_type, int64_t rows, int64_t cols);
// Device bytes of the repacked form (rows padded to 128 with zeros; swiglu: of both matrices).
int64_t gemm_ws_repacked_bytes(uint32_t ggml_type, int64_t rows, int64_t cols, bool swiglu = false);
// Empty when every block's scale is inside the range the fused GEMM's decode takes (its one-FMA
// decode: q4_K |d| <= 2^-7, q6_K |d| < 2^-10, other types any); otherwise how many blocks are not.
// Reads the blocks on the device: runs on `stream` and waits for it.
std::string gemm_ws_scales_out_of_range(const QuantMatrixView& src, cudaStream_t stream);
// GGUF blocks on the device -> repacked form at dst (gemm_ws_repacked_bytes). Checks the scales
// first (gemm_ws_scales_out_of_range: throws pfx::Error if any is out of range; waits for `stream`),
// then repacks asynchronously.
void gemm_ws_repack(const QuantMatrixView& src, void* dst, cudaStream_t stream);
// gate and up (same type and shape) -> one interleaved matrix for the SwiGLU epilogue (scales as
// gemm_ws_repack).
void gemm_ws_repack_swiglu(const QuantMatrixView& gate, const QuantMatrixView& up, void* dst, cudaStream_t stream);

// Y[T, rows] from X16[T, cols] (row-major, 16-byte aligned, as y). Throws pfx::Error on a bad call.
void gemm_ws(const WsMatrixView& w, const uint16_t* x16, int64_t T, void* y, GemmEpilogue epilogue,
             cudaStream_t stream);
// a16[T, rows] = fp16(silu(X·gateᵀ) · (X·upᵀ)), silu and the product exactly as the generic
// path's elementwise kernel (kernels/elementwise_math.cuh). w.swiglu must be set.
void gemm_ws_swiglu(const WsMatrixView& w, const uint16_t* x16, int64_t T, uint16_t* a16, cudaStream_t stream);

// The compiled variants (token tile BN), for the tests and the benchmark.
struct WsVariantInfo {
  const char* name;  // "ws_n128"
  int tile_n;        // tokens per tile (the wgmma n)
  int stages;        // shared-memory ring depth
  int smem_bytes;    // dynamic shared memory per CTA
  int sms_per_tile;  // 1: one CTA of two consumer warpgroups; 2: a 2-CTA cluster, one panel each
  int ctas_per_sm;   // CTAs resident on one SM (2: one's epilogue under the other's MMAs)
  int tile_m = 128;  // weight rows per tile (64: one panel, the decode split over the warpgroups)
  bool split_chains = false;  // tiles' k chains split over CTAs in order (kernels/gemm_ws_schedule.cuh)
  bool groups = false;        // takes gemm_ws_group / gemm_ws_group_rope launches (tiles of 128-row pairs)
  // gemm_ws_pick_variant's cost of one round of this variant's tiles (on sms_per_tile SMs each),
  // relative to one CTA's 128 × 256 tile; 0: never picked (tests and the benchmark only).
  double round_cost = 0.0;
};
const std::vector<WsVariantInfo>& gemm_ws_variants(uint32_t ggml_type);
// The variant gemm_ws / gemm_ws_swiglu / gemm_ws_group run for T tokens over a matrix of
// `out_rows` MMA rows and K columns.
int gemm_ws_pick_variant(uint32_t ggml_type, int64_t T, int64_t out_rows, int64_t K = 4096);
// max_ctas > 0 runs the persistent grid on at most that many CTAs (the tests: split chains at
// small shapes); 0 is one per SM.
void gemm_ws_variant(int variant, const WsMatrixView& w, const uint16_t* x16, int64_t T, void* y,
                     GemmEpilogue epilogue, cudaStream_t stream, int max_ctas = 0);
void gemm_ws_swiglu_variant(int variant, const WsMatrixView& w, const uint16_t* x16, int64_t T, uint16_t* a16,
                            cudaStream_t stream, int max_ctas = 0);

// Several matrices over the same activations (a layer's Q, K and V) in one launch: their repacks
// one after another in one buffer (the repack of rows [a; b] is a's repack followed by b's when a
// has a multiple of 128 rows), w.rows their total, part i writing parts[i].y [T, parts[i].rows].
// Each output gets the bits gemm_ws gives that matrix alone.
struct WsGroupPart {
  int64_t rows;
  void* y;
};
inline constexpr int kWsMaxGroupParts = 3;
// Empty when one gemm_ws_group launch takes these parts (of a `cols`-column matrix of this type).
std::string gemm_ws_group_unsupported_reason(uint32_t ggml_type, const std::vector<WsGroupPart>& parts, int64_t cols);
void gemm_ws_group(const WsMatrixView& w, const std::vector<WsGroupPart>& parts, const uint16_t* x16, int64_t T,
                   GemmEpilogue epilogue, cudaStream_t stream);
void gemm_ws_group_variant(int variant, const WsMatrixView& w, const std::vector<WsGroupPart>& parts,
                           const uint16_t* x16, int64_t T, GemmEpilogue epilogue, cudaStream_t stream, int max_ctas = 0);

// The attention's inputs straight from the Q/K/V GEMM: each part stored as fp16 — into rows
// [T, rows] or into a KV cache [rows / hd][max_ctx][hd] at rows p0 .. p0+T-1 — with each head's
// pairs (2i, 2i+1) rotated by RoPE or not (cos/sin from kernels::rope_table; ggml mode 0 over the
// whole head). Same bits as gemm_ws_group with StoreF32 followed by kernels::rope_store_qkv_fused
// (Q rotated into rows, K rotated and V unrotated into the caches).
struct WsHeadPart {
  int64_t rows;
  uint16_t* y;
  bool rotate;    // RoPE pairs (2i, 2i+1) of each head
  bool kv_cache;  // the cache layout above, else rows [T, rows]
};
struct WsRopeTarget {
  const float* cos_sin;  // [T][hd / 2] (cos, sin) of positions p0 + t (kernels::rope_table); null if nothing rotates
  int head_dim;          // hd: even; every part's rows a multiple of it
  int p0, max_ctx;       // the first token's position; cache rows per head (p0 + T <= max_ctx)
};
std::string gemm_ws_group_rope_unsupported_reason(uint32_t ggml_type, const std::vector<WsHeadPart>& parts, int64_t cols,
                                                  int64_t T, const WsRopeTarget& rope);
void gemm_ws_group_rope(const WsMatrixView& w, const std::vector<WsHeadPart>& parts, const WsRopeTarget& rope,
                        const uint16_t* x16, int64_t T, cudaStream_t stream);
void gemm_ws_group_rope_variant(int variant, const WsMatrixView& w, const std::vector<WsHeadPart>& parts,
                                const WsRopeTarget& rope, const uint16_t* x16, int64_t T, cudaStream_t stream,
                                int max_ctas = 0);

// The split-chain variants' device workspace (accumulators of split tiles and their flags, ~17 MB
// on an H200), allocated on first use on the current device, or here ahead of time. The variants
// of one device share it, and the host orders their launches: one on another stream (or host
// thread) than the last waits for it (an event), so two never overlap. A split-chain launch inside
// a CUDA graph capture is refused (a replay could overlap another launch).
void gemm_ws_reserve_workspace();

}  // namespace pfx::kernels

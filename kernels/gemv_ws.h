// Decode mat-vec on gemm_ws's repacked weights (kernels/gemv_ws.cu): Y[T,N] = X16[T,K] ·
// fp16(W[N,K])ᵀ for T <= kGemvMaxT, reading the same repacked bytes the prefill's fused GEMM reads,
// so that an engine can hold each matrix once (the GGUF blocks need not stay on the device for the
// decode). Same weight values (the fused GEMM's own decoders) and fp32 accumulation as every path.
//
// Summation order, the caller's choice through `warps`:
//  - 1 (kGemvWsGenericOrder): one warp per 16-row tile, one MMA chain over k in order with each
//    k16 block at its natural fragment position — the generic GEMM's order at T <= 8 (bitwise
//    equal to it, as kernels/gemm_fast.h's seq kernel); the tile's weights stream through a ring
//    of shared-memory stages (k_gemv_ws_chain);
//  - n > 1 (2, 4, 8, 16): n warps split each row's k-groups (warp w: groups w, w + n, ...), each with
//    two chains at T = 1 (even and odd k16 steps; one chain at T >= 2), added per warp and then over
//    the warps in warp order — the decode step's order, faster where a tile's one chain would be a
//    latency chain;
//  - 0: the kernel's choice: gemv_ws_warps() at T = 1, 1 at T >= 2.
// Every output is a fixed-order sum (bitwise run to run); two warp counts differ in that order.
//
// Types: q4_K and q6_K (gemv_ws_unsupported_reason says why not for the others). Plain C++.
#pragma once
#include <cuda_runtime_api.h>

#include <cstdint>
#include <string>
#include <vector>

#include "kernels/gemm_fast.h"
#include "kernels/gemm_ws.h"

namespace pfx::kernels {

inline constexpr int kGemvWsGenericOrder = 1;
inline constexpr int kGemvWsChainShallow = -4;  // T = 1: the generic order's kernel with a 4-deep ring (gemv_bench)
inline constexpr int kGemvWsMaxWarps = 16;

// Empty when the mat-vec on the repack takes T tokens of this matrix (w.swiglu: through
// gemv_ws_swiglu only); otherwise why not.
std::string gemv_ws_unsupported_reason(const WsMatrixView& w, int64_t T);
// The warps of `warps` = 0 at T = 1 for an N × K matrix (N: MMA rows; SwiGLU: both matrices').
int gemv_ws_warps(uint32_t ggml_type, int64_t N, int64_t K);

void gemv_ws(const WsMatrixView& w, const uint16_t* x16, int64_t T, void* y, GemmEpilogue epilogue, cudaStream_t stream,
             int warps = 0);

// Up to kGemvMaxParts matrices of one type and K against the same activations in one launch, each
// into its own output: the bits gemv_ws gives each alone with the same `warps` (0: the pick for
// part 0's shape, which must be every part's).
struct GemvWsOutput {
  WsMatrixView w;
  void* y;
  GemmEpilogue epilogue;
};
std::string gemv_ws_group_unsupported_reason(const std::vector<GemvWsOutput>& parts, int64_t T, int warps = 0);
void gemv_ws_group(const std::vector<GemvWsOutput>& parts, const uint16_t* x16, int64_t T, cudaStream_t stream,
                   int warps = 0);

// gemv_ws_group whose parts store the attention's inputs (kernels::gemv_fast_group_heads' stores:
// RoPE pairs and fp16, into rows or the KV cache).
struct GemvWsHeadOutput {
  WsMatrixView w;
  uint16_t* y;
  bool rotate, kv_cache;
};
std::string gemv_ws_group_heads_unsupported_reason(const std::vector<GemvWsHeadOutput>& parts, int64_t T,
                                                   const GemvRopeTarget& rope, int warps = 0);
void gemv_ws_group_heads(const std::vector<GemvWsHeadOutput>& parts, const GemvRopeTarget& rope, const uint16_t* x16,
                         int64_t T, cudaStream_t stream, int warps = 0);

// a16[T, rows] = fp16(silu(X·gateᵀ) · (X·upᵀ)) from gemm_ws_repack_swiglu's interleaved matrix
// (w.swiglu), silu and the product as the generic path's elementwise kernel.
void gemv_ws_swiglu(const WsMatrixView& w, const uint16_t* x16, int64_t T, uint16_t* a16, cudaStream_t stream,
                    int warps = 0);

}  // namespace pfx::kernels

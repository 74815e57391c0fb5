// The GPU backend (host side): weights uploaded in their GGUF quantized form, activations, KV cache
// and scratch on the GPU, one fixed launch sequence per forward. Two paths of the same arithmetic:
//   Path::Generic — plain kernels + dequantize-to-fp16 + cuBLAS: the parity reference;
//   Path::Fast    — the fused kernels under test.
// Plain C++ header: no CUDA headers leak into the CLI.
#pragma once
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "model/backend.h"
#include "model/llama.h"

namespace pfx::cuda {

enum class Path { Fast, Generic };
const char* path_name(Path);

// The fast path's prefill GEMM variants (every one computes the same arithmetic as generic):
//   Pipelined — dequantize + cuBLAS, the next weight dequantized on a side stream meanwhile;
//   Fused     — kernels/gemm_ws.h: warp-specialized TMA/wgmma kernels on weights repacked at
//               load (same bits), dequantized in registers; gate and up fused with SwiGLU;
// (The staged kernels of kernels/gemm_fast.h, raw GGUF blocks dequantized into shared memory, are
// no longer a variant: their sums are not in generic's order, 1.96e-3 off at 7B against the 1e-3
// parity bound in the H200 landing of 5feb052; gemm_bench keeps them as the design's reference.)
// Chosen per backend (CLI: --gemm), never by the environment; the CLI lists the names in
// `prefill --version --json` as capabilities.gemm_variants.
enum class FastGemm { Pipelined, Fused };
// Fused: measured faster end to end on the H200 at pp512 and pp2048 in one run (7B Q4_K_M:
// 32.9k / 36.1k tok/s against 27.3k / 34.8k for pipelined; docs/perf-h200.md), with no fp16
// copy or scratch of the weights: a repacked quantized copy that the decode steps read too
// (kernels/gemv_ws.h) for q4_K and q6_K, whose GGUF blocks then leave the device (7B Q4_K_M:
// 4.16 GB of weight matrices, was ~8.1 GB; session 18).
inline constexpr FastGemm kDefaultFastGemm = FastGemm::Fused;
const char* fast_gemm_name(FastGemm);
// Every variant, in a fixed order (the capability list).
const std::vector<FastGemm>& fast_gemm_variants();
// The variant named `name`, or nullopt.
std::optional<FastGemm> parse_fast_gemm(std::string_view name);

// How the fast path launches a decode step (one token after a cached context, no residual dump; a
// one-token prompt at position 0 is a prompt: kernel by kernel, in the generic order):
//   On  — the step's ~300 kernels as one CUDA graph, captured on the second decode step of the
//         backend's life (the first runs kernel by kernel, so every kernel is loaded and every
//         cuBLASLt plan made before the capture) and replayed from then on, across reset() too
//         (token and position through a pinned staging buffer, read by the kernels from device
//         memory); the same kernels with the same arguments, so the logits
//         are bitwise those of Off. Falls back to Off with a logged reason (fallbacks()) where a
//         step cannot be captured (the pipelined variant, attention without a fast kernel, a
//         capture error).
//   Off — kernel by kernel on the stream, as prefill is launched.
// Chosen per backend (CLI: --decode-graph), never by the environment; `prefill --version --json`
// lists the names as capabilities.decode_graph. NVTX ranges are host-side: a replayed step emits
// only the outer "prefill" range, not the per-role ranges inside it.
enum class DecodeGraph { On, Off };
inline constexpr DecodeGraph kDefaultDecodeGraph = DecodeGraph::On;
const char* decode_graph_name(DecodeGraph);
// Every value, the default first (the capability list).
const std::vector<DecodeGraph>& decode_graph_values();
std::optional<DecodeGraph> parse_decode_graph(std::string_view name);

// True when a CUDA device can be used (driver present, ≥ 1 device, compute capability 9.0).
bool gpu_usable();
// Why not (or which device), for messages.
std::string gpu_status();

struct DeviceInfo {
  std::string name;
  int sm_count = 0;
  int sm_clock_mhz = 0;  // current SM clock from cudaDeviceGetAttribute(cudaDevAttrClockRate) (max, kHz→MHz)
  int driver_version = 0, runtime_version = 0;
  int64_t memory_bytes = 0;
};
DeviceInfo device_info();

class CudaBackend final : public Backend {
 public:
  // max_ctx: the longest sequence (prompt + generated) this backend will hold in its KV cache.
  // gemm: the fast path's prefill GEMM variant (ignored on the generic path).
  // decode_graph: how the fast path launches decode steps (ignored on the generic path).
  CudaBackend(const model::Model& model, Path path, int64_t max_ctx, FastGemm gemm = kDefaultFastGemm,
              DecodeGraph decode_graph = kDefaultDecodeGraph);
  ~CudaBackend() override;
  CudaBackend(const CudaBackend&) = delete;  // owns device memory and a cuBLAS handle
  CudaBackend& operator=(const CudaBackend&) = delete;

  std::string name() const override;
  void reset() override;
  std::vector<float> forward(std::span<const int32_t> tokens, bool all_logits) override;
  int64_t position() const override;

  // GPU time of the last forward() (CUDA events around its launch sequence), milliseconds.
  double last_gpu_ms() const;
  // The fast path's prefill GEMM variant (fast_gemm_name), or "generic".
  std::string fast_gemm() const;
  // The decode launch asked for (decode_graph_name), or "off" on the generic path.
  std::string decode_graph() const;
  // Decode steps replayed from the captured graph since construction (0 where it is off or fell back).
  int64_t graph_replays() const;
  // Device bytes holding the weight matrices: the GGUF blocks still on the device (the token
  // embedding always; a layer matrix only where some GEMM on it reads them) plus the fused
  // variant's repacked copies. The norms' vectors are not counted.
  int64_t weight_matrix_bytes() const;
  // Reasons the fast path fell back to a generic kernel or launch (logged once each).
  const std::vector<std::string>& fallbacks() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace pfx::cuda

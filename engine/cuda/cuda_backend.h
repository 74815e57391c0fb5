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
//   Staged    — kernels/gemm_fast.h: raw GGUF blocks staged and dequantized in shared memory;
//               decode too keeps the staged gemv (the others run gemv_fast's direct kernel).
// Chosen per backend (CLI: --gemm), never by the environment; the CLI lists the names in
// `prefill --version --json` as capabilities.gemm_variants.
enum class FastGemm { Pipelined, Fused, Staged };
// Fused: measured faster end to end on the H200 at pp512 and pp2048 in one run (7B Q4_K_M:
// 32.9k / 36.1k tok/s against 27.3k / 34.8k for pipelined; docs/perf-h200.md), with no fp16
// copy or scratch of the weights (a repacked quantized copy beside the GGUF blocks instead).
inline constexpr FastGemm kDefaultFastGemm = FastGemm::Fused;
const char* fast_gemm_name(FastGemm);
// Every variant, in a fixed order (the capability list).
const std::vector<FastGemm>& fast_gemm_variants();
// The variant named `name`, or nullopt.
std::optional<FastGemm> parse_fast_gemm(std::string_view name);

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
  CudaBackend(const model::Model& model, Path path, int64_t max_ctx, FastGemm gemm = kDefaultFastGemm);
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
  // Reasons the fast path fell back to a generic kernel (logged once each).
  const std::vector<std::string>& fallbacks() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace pfx::cuda

// Names of the fast path's prefill GEMM variants (FastGemm, cuda_backend.h): what `--gemm` takes
// and `prefill --version --json` lists as capabilities.gemm_variants.
#include "cuda/cuda_backend.h"

namespace pfx::cuda {

const char* fast_gemm_name(FastGemm v) {
  switch (v) {
    case FastGemm::Pipelined: return "pipelined";
    case FastGemm::Fused: return "fused";
  }
  return "unknown";
}

const std::vector<FastGemm>& fast_gemm_variants() {
  static const std::vector<FastGemm> all = {FastGemm::Pipelined, FastGemm::Fused};
  return all;
}

std::optional<FastGemm> parse_fast_gemm(std::string_view name) {
  for (FastGemm v : fast_gemm_variants())
    if (name == fast_gemm_name(v)) return v;
  return std::nullopt;
}

}  // namespace pfx::cuda

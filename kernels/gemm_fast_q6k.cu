// Fast-GEMM kernel instantiations for q6_K weights (attn_v, some ffn_down, output in Q4_K_M).
// q6_K stages 160 bytes per row per k-tile, so the n256 tile does not fit shared memory.
#include "kernels/gemm_fast_launch.cuh"

namespace pfx::kernels::detail {

const std::vector<GemmVariantEntry>& gemm_variants_q6k() {
  using namespace dev;
  using W = WeightQ6K;
  static const std::vector<GemmVariantEntry> v = {
      variant_entry<CfgMmaW8S3, W>("mma_t128_n128_w8_s3"),
      variant_entry<CfgWgN128S3x1, W>("wgmma_t128_n128_s3"),
      variant_entry<CfgPipeT128D2, W>("wgp_t128_n128_d2"),
      variant_entry<CfgPipeT128D3, W>("wgp_t128_n128_d3"),
  };
  return v;
}

}  // namespace pfx::kernels::detail

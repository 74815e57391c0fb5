// Fast-GEMM kernel instantiations for q4_K weights (the bulk of a Q4_K_M model).
#include "kernels/gemm_fast_launch.cuh"

namespace pfx::kernels::detail {

const std::vector<GemmVariantEntry>& gemm_variants_q4k() {
  using namespace dev;
  using W = WeightQ4K;
  static const std::vector<GemmVariantEntry> v = {
      variant_entry<CfgMmaW8S4, W>("mma_t128_n128_w8_s4"),
      variant_entry<CfgMmaW4S3, W>("mma_t128_n128_w4_s3"),
      variant_entry<CfgWgN128S3, W>("wgmma_t128_n128_s3"),
      variant_entry<CfgWgN128S4, W>("wgmma_t128_n128_s4"),
      variant_entry<CfgWgN256S3, W>("wgmma_t128_n256_s3"),
      variant_entry<CfgPipeT128D2, W>("wgp_t128_n128_d2"),
      variant_entry<CfgPipeT128D3, W>("wgp_t128_n128_d3"),
      variant_entry<CfgPipeT256D2, W>("wgp_t256_n128_d2"),
      variant_entry<CfgPipeT128N256D2, W>("wgp_t128_n256_d2"),
  };
  return v;
}

}  // namespace pfx::kernels::detail

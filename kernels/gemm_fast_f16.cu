// Fast-GEMM kernel instantiations for f16 weights: the quantized pipeline with a copy in place of
// the decode (the benchmark's no-dequantization baseline; f16 GGUF tensors).
#include "kernels/gemm_fast_launch.cuh"

namespace pfx::kernels::detail {

const std::vector<GemmVariantEntry>& gemm_variants_f16() {
  using namespace dev;
  using W = WeightF16;
  static const std::vector<GemmVariantEntry> v = {
      variant_entry<CfgMmaW8S3, W>("mma_t128_n128_w8_s3"),
      variant_entry<CfgWgN128S3x1, W>("wgmma_t128_n128_s3"),
      variant_entry<CfgWgN256S3, W>("wgmma_t128_n256_s3"),
      variant_entry<CfgPipeT128D2, W>("wgp_t128_n128_d2"),
      variant_entry<CfgPipeT256D2, W>("wgp_t256_n128_d2"),
  };
  return v;
}

}  // namespace pfx::kernels::detail

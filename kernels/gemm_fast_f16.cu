// Fast-GEMM kernel instantiations for f16 weights: the quantized pipeline with a copy in place of
// the decode (the benchmark's no-dequantization baseline; f16 GGUF tensors).
#include "kernels/gemm_fast_launch.cuh"

namespace pfx::kernels::detail {

const std::vector<GemmVariantEntry>& gemm_variants_f16() {
  using namespace dev;
  return variant_table<WeightF16, CfgMmaW8S3, CfgWgN128S3x1, CfgWgN256S3, CfgPipeT128D2, CfgPipeT256D2>();
}

}  // namespace pfx::kernels::detail

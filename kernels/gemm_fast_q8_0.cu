// Fast-GEMM kernel instantiations for q8_0 weights.
#include "kernels/gemm_fast_launch.cuh"

namespace pfx::kernels::detail {

const std::vector<GemmVariantEntry>& gemm_variants_q8_0() {
  using namespace dev;
  return variant_table<WeightQ8_0, CfgMmaW8S4, CfgWgN128S3x1, CfgWgN256S3, CfgPipeT128D2, CfgPipeT128D3,
                       CfgPipeT256D2>();
}

}  // namespace pfx::kernels::detail

// Fast-GEMM kernel instantiations for q4_K weights (the bulk of a Q4_K_M model).
#include "kernels/gemm_fast_launch.cuh"

namespace pfx::kernels::detail {

const std::vector<GemmVariantEntry>& gemm_variants_q4k() {
  using namespace dev;
  return variant_table<WeightQ4K, CfgMmaW8S4, CfgMmaW4S3, CfgWgN128S3, CfgWgN128S4, CfgWgN256S3, CfgPipeT128D2,
                       CfgPipeT128D3, CfgPipeT256D2, CfgPipeT128N256D2>();
}

}  // namespace pfx::kernels::detail

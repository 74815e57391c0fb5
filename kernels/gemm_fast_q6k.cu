// Fast-GEMM kernel instantiations for q6_K weights (attn_v, some ffn_down, output in Q4_K_M).
// q6_K stages 160 bytes per row per k-tile, so the n256 tile does not fit shared memory.
#include "kernels/gemm_fast_launch.cuh"

namespace pfx::kernels::detail {

const std::vector<GemmVariantEntry>& gemm_variants_q6k() {
  using namespace dev;
  return variant_table<WeightQ6K, CfgMmaW8S3, CfgWgN128S3x1, CfgPipeT128D2, CfgPipeT128D3>();
}

}  // namespace pfx::kernels::detail

// gemm_ws kernel instantiations for q8_0 weights (kernels/gemm_ws_launch.cuh).
#include "kernels/gemm_ws_launch.cuh"

namespace pfx::kernels::detail {

const WsTypeEntry& ws_type_q8_0() {
  static const WsTypeEntry e = dev::ws_type_entry<dev::kWsQ8_0>();
  return e;
}

}  // namespace pfx::kernels::detail

// gemm_ws kernel instantiations for q5_K weights (kernels/gemm_ws_launch.cuh).
#include "kernels/gemm_ws_launch.cuh"

namespace pfx::kernels::detail {

const WsTypeEntry& ws_type_q5k() {
  static const WsTypeEntry e = dev::ws_type_entry<dev::kWsQ5K>();
  return e;
}

}  // namespace pfx::kernels::detail

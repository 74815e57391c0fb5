// gemm_ws kernel instantiations for q4_K weights (kernels/gemm_ws_launch.cuh).
#include "kernels/gemm_ws_launch.cuh"

namespace pfx::kernels::detail {

const WsTypeEntry& ws_type_q4k() {
  static const WsTypeEntry e = dev::ws_type_entry<dev::kWsQ4K>();
  return e;
}

}  // namespace pfx::kernels::detail

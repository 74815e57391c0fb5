// gemm_ws kernel instantiations for q6_K weights (kernels/gemm_ws_launch.cuh).
#include "kernels/gemm_ws_launch.cuh"

namespace pfx::kernels::detail {

const WsTypeEntry& ws_type_q6k() {
  static const WsTypeEntry e = dev::ws_type_entry<dev::kWsQ6K>();
  return e;
}

}  // namespace pfx::kernels::detail

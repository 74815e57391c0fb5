// gemm_ws kernel instantiations for f16 weights (kernels/gemm_ws_launch.cuh).
#include "kernels/gemm_ws_launch.cuh"

namespace pfx::kernels::detail {

const WsTypeEntry& ws_type_f16() {
  static const WsTypeEntry e = dev::ws_type_entry<dev::kWsF16>();
  return e;
}

}  // namespace pfx::kernels::detail

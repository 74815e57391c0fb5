// Internals shared by the gemm_ws translation units (gemm_ws.cu: host API and dispatch;
// gemm_ws_q4k.cu / _q5k.cu / _q6k.cu / _q8_0.cu / _f16.cu: kernel instantiations per weight type). Plain C++.
#pragma once
#include <cuda_runtime_api.h>

#include <cstdint>
#include <vector>

#include "kernels/gemm_ws.h"

namespace pfx::kernels::detail {

// One launch, validated by the caller.
struct WsLaunch {
  const void* w;  // repacked
  int64_t out_rows;  // MMA rows of the repacked matrix (SwiGLU: 2N; a group: the parts' sum)
  int64_t K, T;
  const uint16_t* x;
  void* y;
  int mode;  // dev::WsMode
  cudaStream_t stream;
  // A group (gemm_ws_group): part i's rows (a multiple of 128 but the last) and output; parts 0:
  // one matrix into y.
  int parts = 0;
  int64_t part_rows[kWsMaxGroupParts] = {};
  void* part_y[kWsMaxGroupParts] = {};
  // Split-chain variants: the workspace (gemm_ws.cu) and, for the tests, a grid smaller than the
  // SM count (0: one CTA per SM).
  void* partial = nullptr;
  unsigned* ready = nullptr;
  int max_ctas = 0;
  // Head stores (gemm_ws_group_rope): part i's dev::WsHeadStore bits and the rope target.
  int part_store[kWsMaxGroupParts] = {};
  const float* rope_cos_sin = nullptr;
  int head_dim = 0, p0 = 0, max_ctx = 0;
};
using WsLaunchFn = void (*)(const WsLaunch&);
// Repack of `rows` source rows (interleaved gate/up when b != nullptr) into dst.
using WsRepackFn = void (*)(const void* a, const void* b, int64_t rows, int64_t cols, void* dst, cudaStream_t stream);

// Tiles a variant's grid runs at once on the current device (its resident clusters), 0 where no
// device answers; nullptr in an entry: SMs × ctas_per_sm / sms_per_tile.
using WsResidentFn = int (*)();

struct WsVariantEntry {
  WsVariantInfo info;
  WsLaunchFn launch;
  WsResidentFn resident = nullptr;
};
struct WsTypeEntry {
  std::vector<WsVariantEntry> variants;
  WsRepackFn repack;
  int64_t group_k;          // cols must be a multiple of this
  int64_t repacked_bytes_per_pair_group;  // bytes per 128 rows per group
};

const WsTypeEntry& ws_type_q4k();
const WsTypeEntry& ws_type_q5k();
const WsTypeEntry& ws_type_q6k();
const WsTypeEntry& ws_type_q8_0();
const WsTypeEntry& ws_type_f16();

}  // namespace pfx::kernels::detail

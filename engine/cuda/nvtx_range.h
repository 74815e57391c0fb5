// NVTX ranges named after what a GPU op computes (DESIGN.md seam 3): GGUF tensor names for GEMMs
// ("blk.7.attn_v"), "blk.7.attn" etc. for other ops, '+' joining fused ops, the op's FLOP count
// as a uint64 payload, all inside one outer "prefill" range. The CUPTI tracer attributes kernel
// time by these names; without a tool attached NVTX calls are near-free no-ops.
// Ranges are host-side: a decode step replayed from its CUDA graph (DecodeGraph::On, cuda_backend.h)
// emits only the outer "prefill" range around the launch, so its kernels carry no per-role name.
#pragma once
#include <nvtx3/nvToolsExt.h>

#include <cstdint>
#include <string>

namespace pfx::cuda {

class NvtxRange {
 public:
  NvtxRange(const std::string& name, uint64_t flops) {
    nvtxEventAttributes_t a{};
    a.version = NVTX_VERSION;
    a.size = NVTX_EVENT_ATTRIB_STRUCT_SIZE;
    a.messageType = NVTX_MESSAGE_TYPE_ASCII;
    a.message.ascii = name.c_str();
    a.payloadType = NVTX_PAYLOAD_TYPE_UNSIGNED_INT64;
    a.payload.ullValue = flops;
    nvtxRangePushEx(&a);
  }
  ~NvtxRange() { nvtxRangePop(); }
  NvtxRange(const NvtxRange&) = delete;  // one push, one pop
  NvtxRange& operator=(const NvtxRange&) = delete;
};

}  // namespace pfx::cuda

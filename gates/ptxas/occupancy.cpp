// sm_90 occupancy arithmetic (see occupancy.h).
#include "ptxas/occupancy.h"

#include <algorithm>

namespace pfx::gates {

namespace {
long round_up(long v, long unit) { return (v + unit - 1) / unit * unit; }
}  // namespace

Occupancy blocks_per_sm(int registers, int threads_per_block, long smem, const Sm90Limits& lim) {
  Occupancy o;
  if (threads_per_block <= 0) {
    o.limiter = "unknown: threads per block not recorded";
    return o;
  }
  o.known = true;
  if (threads_per_block > lim.max_threads_per_block) {
    o.limiter = "invalid: more than 1024 threads per block";
    return o;
  }
  if (registers > lim.max_regs_per_thread) {
    o.limiter = "invalid: more than 255 registers per thread";
    return o;
  }
  if (smem > lim.smem_per_block_max) {
    o.limiter = "invalid: shared memory above 227 KiB per block";
    return o;
  }
  const int warps = (threads_per_block + 31) / 32;
  o.by_warps = lim.max_warps_per_sm / warps;
  if (registers > 0) {
    const long regs_per_warp = round_up(static_cast<long>(registers) * 32, lim.reg_alloc_unit);
    const long warps_by_regs = lim.regs_per_sm / regs_per_warp;
    o.by_regs = static_cast<int>(warps_by_regs / warps);
  } else {
    o.by_regs = lim.max_blocks_per_sm;
  }
  const long smem_block = round_up(smem, lim.smem_alloc_unit) + lim.smem_reserved_per_block;
  o.by_smem = static_cast<int>(lim.smem_per_sm / smem_block);
  o.blocks_per_sm = std::min({o.by_warps, o.by_regs, o.by_smem, lim.max_blocks_per_sm});
  if (o.blocks_per_sm == o.by_regs && o.by_regs < lim.max_blocks_per_sm) o.limiter = "registers";
  else if (o.blocks_per_sm == o.by_smem && o.by_smem < lim.max_blocks_per_sm) o.limiter = "shared memory";
  else if (o.blocks_per_sm == o.by_warps && o.by_warps < lim.max_blocks_per_sm) o.limiter = "warps";
  else o.limiter = "blocks";
  if (o.blocks_per_sm == 0) o.limiter = "cannot launch: " + o.limiter;
  return o;
}

}  // namespace pfx::gates

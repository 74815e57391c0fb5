// Resident blocks per SM on sm_90 (H100/H200) from a kernel's compiler-reported resources, the
// way CUDA's occupancy calculator does it: the minimum over the warp, register, shared-memory and
// block-count limits. Register file 65536 per SM, allocated per warp in units of 256; shared
// memory 228 KiB per SM (max carveout), at most 227 KiB per block, 1 KiB reserved per block,
// allocated in 128-byte units; 2048 threads (64 warps) and 32 blocks per SM.
#pragma once
#include <string>

namespace pfx::gates {

struct Sm90Limits {
  int regs_per_sm = 65536;
  int reg_alloc_unit = 256;        // registers, per warp
  int max_regs_per_thread = 255;
  int smem_per_sm = 228 * 1024;
  int smem_per_block_max = 227 * 1024;
  int smem_reserved_per_block = 1024;
  int smem_alloc_unit = 128;
  int max_warps_per_sm = 64;
  int max_blocks_per_sm = 32;
  int max_threads_per_block = 1024;
};

struct Occupancy {
  int blocks_per_sm = 0;           // 0: cannot launch (or unknown when !known)
  bool known = false;              // false when threads_per_block is unknown
  std::string limiter;             // "registers", "shared memory", "warps", "blocks", "invalid: ..."
  int by_warps = 0, by_regs = 0, by_smem = 0;
};

Occupancy blocks_per_sm(int registers, int threads_per_block, long smem_bytes_per_block,
                        const Sm90Limits& lim = Sm90Limits{});

}  // namespace pfx::gates

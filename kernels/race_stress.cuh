// Race stress points for the tile loops of the fast kernels. In a build with PFX_RACE_STRESS
// (CMake option PFX_RACE_STRESS=ON, never a release), each point stalls the calling warp for a
// pseudo-random 0-2047 cycles that differ per site, warp, block and call, so warps drift apart
// between the phases of a tile loop (stage, wait, compute). A missing barrier or mbarrier wait
// then lets one warp read a buffer another is still writing: the race shows as a parity
// difference instead of hiding behind the usual lock-step schedule (a flash build without its
// tile-loop barrier passed parity at 0 and racecheck with 0 hazards: docs/perf-h200.md).
// In every other build a point compiles to nothing. Include only from .cu files.
#pragma once
#include <cstdint>

#ifdef PFX_RACE_STRESS
namespace pfx::kernels::dev {
__device__ __forceinline__ void race_stress_point(uint32_t site) {
  const uint32_t warp = (threadIdx.x + blockDim.x * (threadIdx.y + blockDim.y * threadIdx.z)) / 32u;
  uint32_t h = site * 0x9E3779B1u ^ blockIdx.x * 0x85EBCA77u ^ blockIdx.y * 0xC2B2AE3Du ^
               blockIdx.z * 0x165667B1u ^ warp * 0x27D4EB2Fu ^ static_cast<uint32_t>(clock64());
  h ^= h >> 15;
  h *= 0x2C1B3C6Du;
  h ^= h >> 12;
  h = __shfl_sync(0xffffffffu, h, 0);  // one stall per warp: lanes of a warp stay converged
  const long long spin = h & 2047u;
  const long long t0 = clock64();
  while (clock64() - t0 < spin) {
  }
}
}  // namespace pfx::kernels::dev
#define PFX_RACE_STRESS_POINT(site) ::pfx::kernels::dev::race_stress_point(site)
#else
#define PFX_RACE_STRESS_POINT(site) ((void)0)
#endif

// A planted slowdown of known length, for calibrating the A/B gate (scripts/gpu/calibrate_ab.sh):
// in a build with PFX_PLANT_SPIN_NS=N (CMake cache variable, never a release build), every thread
// of the fast RMSNorm kernel spins N ns on the global timer before its work, so a launch that fits
// in one wave (two per layer, one for the output norm) lasts N ns longer. The calibration measures
// the planted builds' real Δ itself; N only aims it. In every other build the point compiles to
// nothing. Include only from .cu files.
#pragma once
#include <cstdint>

#if defined(PFX_PLANT_SPIN_NS) && PFX_PLANT_SPIN_NS > 0
namespace pfx::kernels::dev {
__device__ __forceinline__ uint64_t global_ns() {
  uint64_t t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  return t;
}
__device__ __forceinline__ void plant_spin() {
  const uint64_t t0 = global_ns();
  while (global_ns() - t0 < static_cast<uint64_t>(PFX_PLANT_SPIN_NS)) {
  }
}
}  // namespace pfx::kernels::dev
#define PFX_PLANT_SPIN() ::pfx::kernels::dev::plant_spin()
#else
#define PFX_PLANT_SPIN() ((void)0)
#endif

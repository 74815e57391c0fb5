// Hardware limits of the target (H200, sm_90a) that every kernel config static_asserts against.
// Values: CUDA C Programming Guide, "Technical Specifications per Compute Capability" (9.0).
#pragma once

namespace pfx::kernels::sm90 {

inline constexpr int kWarpSize = 32;
inline constexpr int kMaxThreadsPerBlock = 1024;
inline constexpr int kMaxRegistersPerThread = 255;
inline constexpr int kRegistersPerSm = 65536;
// Without cudaFuncAttributeMaxDynamicSharedMemorySize a block gets at most 48 KiB.
inline constexpr int kDefaultSmemPerBlock = 48 * 1024;
// Opt-in maximum per block (227 KiB); the SM has 228 KiB, 1 KiB reserved per block.
inline constexpr int kMaxSmemPerBlock = 227 * 1024;
inline constexpr int kSmemPerSm = 228 * 1024;

}  // namespace pfx::kernels::sm90

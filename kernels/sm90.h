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

// A block of `threads` is whole warps and within the per-block limit (every launch config asserts it).
constexpr bool is_warp_block(int threads) { return threads > 0 && threads % kWarpSize == 0 && threads <= kMaxThreadsPerBlock; }

}  // namespace pfx::kernels::sm90

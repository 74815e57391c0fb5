// RMSNorm into fp16: out[t, :] = fp16( (x[t, :] * r) * w ), r = 1 / sqrt(mean(x[t, :]^2) + eps),
// the order of ggml's rms_norm followed by its mul (fp32 throughout, one rounding to fp16).
//   k_rmsnorm_generic: one warp per row, scalar loads, any D; the plain reference kernel.
//   k_rmsnorm_warp:    one warp per row, float4 loads, 2 rows per block, the row in registers up
//                      to D = 4096; D % 4 == 0.
//   k_rmsnorm_row:     one block per row for few rows (decode): the block loads the row into
//                      shared memory in one round of loads, warp 0 sums it; D % 4 == 0.
// All three sum the squares in one order: lane l takes elements 4(l + 32j) .. 4(l + 32j) + 3, in that
// order, for j = 0, 1, ..., then a fixed shuffle tree adds the lanes. So for D % 4 == 0 the two
// are bit for bit equal: the parity check (fast vs generic) sees no reduction-order noise, which an
// fp16 rounding of the normed activations would otherwise turn into 1-ulp flips at every layer.
#include "kernels/common.cuh"
#include "kernels/cuda_check.h"
#include "kernels/kernels.h"
#include "kernels/launch_checks.h"
#include "kernels/launch_info.h"
#include "kernels/pdl_launch.h"
#include "kernels/plant_spin.cuh"

namespace pfx::kernels {

struct RmsnormWarpCfg {
  // One warp per row, two rows per block: a prefill's T rows spread over every SM (with 8 rows per
  // block a pp512 pass ran its 512 rows on 64 of the H200's 132 SMs).
  static constexpr int kRowsPerBlock = 2;
  static constexpr int kThreads = kRowsPerBlock * sm90::kWarpSize;
  static constexpr int kVec = 4;  // floats per load, and per lane step of the summation order
  static constexpr int kLoadsInFlight = 8;  // float4 loads a lane issues before using them (32 registers)
  static constexpr int kResidentPerLane = 32;  // float4 per lane a row of D <= 4096 keeps in registers
  static_assert(kThreads <= sm90::kMaxThreadsPerBlock, "rmsnorm_warp: block too large");
};
struct RmsnormGenericCfg {  // the same summation order as RmsnormWarpCfg
  static constexpr int kRowsPerBlock = 8;  // one warp each
  static constexpr int kThreads = kRowsPerBlock * sm90::kWarpSize;
  static constexpr int kVec = RmsnormWarpCfg::kVec;
};

// The fast path's kernel for T < kMaxRows rows: at T = 1 one warp per row was all the GPU ran, and
// even with 8 loads in flight per lane a 4096-wide row took 8 dependent L2 round trips (10.5 us
// per call on the H200, 2 per layer). A block of 256 threads loads the row with 4 float4 each.
struct RmsnormRowCfg {
  static constexpr int kThreads = 256;
  static constexpr int kMaxRows = 64;        // at and above: k_rmsnorm_warp (8 rows per block)
  // The row in dynamic shared memory under the 48 KiB a launch gets without an opt-in (with the
  // static r_s beside it: D = 12288 filled all 48 KiB and the launch failed on the H200).
  static constexpr int kMaxD = 8192;
};

namespace {
__device__ __forceinline__ float rms_scale(float sum_sq, int D, float eps) {
  return 1.0f / sqrtf(sum_sq / static_cast<float>(D) + eps);  // IEEE div and sqrt (no fast-math)
}
// ss + x² + y² + z² + w², added in that order (the summation order both kernels share).
__device__ __forceinline__ float add_squares(float ss, float4 v) {
  ss = fmaf(v.x, v.x, ss);
  ss = fmaf(v.y, v.y, ss);
  ss = fmaf(v.z, v.z, ss);
  return fmaf(v.w, v.w, ss);
}
// Four outputs fp16((x * r) * w), packed as the row's next 8 bytes.
__device__ __forceinline__ uint2 normed4(float4 v, float4 g, float r) {
  uint2 o;
  o.x = dev::pack_half2_rn(__fmul_rn(__fmul_rn(v.x, r), g.x), __fmul_rn(__fmul_rn(v.y, r), g.y));
  o.y = dev::pack_half2_rn(__fmul_rn(__fmul_rn(v.z, r), g.z), __fmul_rn(__fmul_rn(v.w, r), g.w));
  return o;
}
}  // namespace

__global__ void __launch_bounds__(RmsnormGenericCfg::kThreads)
    k_rmsnorm_generic(const float* __restrict__ x, const float* __restrict__ w, uint16_t* __restrict__ out, int T,
                      int D, float eps) {
  constexpr int kVec = RmsnormGenericCfg::kVec;
  const int lane = threadIdx.x % 32;
  const int t = blockIdx.x * RmsnormGenericCfg::kRowsPerBlock + threadIdx.x / 32;
  if (t >= T) return;  // whole warp leaves together; no block barrier below
  const float* row = x + static_cast<int64_t>(t) * D;
  uint16_t* orow = out + static_cast<int64_t>(t) * D;
  float ss = 0.0f;
  for (int i = kVec * lane; i < D; i += kVec * 32)
    for (int e = i; e < i + kVec && e < D; ++e) ss = fmaf(row[e], row[e], ss);
  const float r = rms_scale(dev::warp_sum(ss), D, eps);
  for (int i = lane; i < D; i += 32) orow[i] = dev::f2h_bits(__fmul_rn(__fmul_rn(row[i], r), w[i]));
}
PFX_KERNEL_LAUNCH_INFO("k_rmsnorm_generic", RmsnormGenericCfg::kThreads, 0);

__global__ void __launch_bounds__(RmsnormWarpCfg::kThreads)
    k_rmsnorm_warp(const float* __restrict__ x, const float* __restrict__ w, uint16_t* __restrict__ out, int T, int D,
                   float eps) {
  PFX_PLANT_SPIN();  // calibration builds only (kernels/plant_spin.cuh)
  const int lane = threadIdx.x % 32;
  const int t = blockIdx.x * RmsnormWarpCfg::kRowsPerBlock + threadIdx.x / 32;
  if (t >= T) return;  // whole warp leaves together; no block barrier below
  const float4* row = reinterpret_cast<const float4*>(x + static_cast<int64_t>(t) * D);
  const float4* w4 = reinterpret_cast<const float4*>(w);
  uint2* orow = reinterpret_cast<uint2*>(out + static_cast<int64_t>(t) * D);
  const int n4 = D / RmsnormWarpCfg::kVec;
  constexpr int kResident = RmsnormWarpCfg::kResidentPerLane;
  if (n4 <= 32 * kResident) {
    // The whole row in registers (D <= 4096): every load in flight at once, one L2 round trip for
    // the row, none for a second read (a pp512 pass: 10.4 µs per call with two batched passes).
    float4 v[kResident];
#pragma unroll
    for (int j = 0; j < kResident; ++j)
      if (lane + 32 * j < n4) v[j] = row[lane + 32 * j];
    float ss = 0.0f;
#pragma unroll
    for (int j = 0; j < kResident; ++j)
      if (lane + 32 * j < n4) ss = add_squares(ss, v[j]);
    const float r = rms_scale(dev::warp_sum(ss), D, eps);
#pragma unroll
    for (int j = 0; j < kResident; ++j)
      if (lane + 32 * j < n4) orow[lane + 32 * j] = normed4(v[j], w4[lane + 32 * j], r);
    return;
  }
  constexpr int kBatch = RmsnormWarpCfg::kLoadsInFlight;
  // Wider rows: loads of kBatch float4 are issued before their squares are added (taken one at a
  // time they cost an L2 round trip each: 9.6 us per 4096-wide row measured at T = 1). The FMAs
  // still run in the order above (j = 0, 1, ...).
  float ss = 0.0f;
  int i = lane;
  for (; i + 32 * (kBatch - 1) < n4; i += 32 * kBatch) {
    float4 v[kBatch];
#pragma unroll
    for (int b = 0; b < kBatch; ++b) v[b] = row[i + 32 * b];
#pragma unroll
    for (int b = 0; b < kBatch; ++b) ss = add_squares(ss, v[b]);
  }
  for (; i < n4; i += 32) ss = add_squares(ss, row[i]);
  const float r = rms_scale(dev::warp_sum(ss), D, eps);
  // Second read hits L1/L2 (keeping D/32 floats per lane would spill past kResident); batched too.
  i = lane;
  for (; i + 32 * (kBatch - 1) < n4; i += 32 * kBatch) {
    float4 v[kBatch], g[kBatch];
#pragma unroll
    for (int b = 0; b < kBatch; ++b) {
      v[b] = row[i + 32 * b];
      g[b] = w4[i + 32 * b];
    }
#pragma unroll
    for (int b = 0; b < kBatch; ++b) orow[i + 32 * b] = normed4(v[b], g[b], r);
  }
  for (; i < n4; i += 32) orow[i] = normed4(row[i], w4[i], r);
}
PFX_KERNEL_LAUNCH_INFO("k_rmsnorm_warp", RmsnormWarpCfg::kThreads, 0);

__global__ void __launch_bounds__(RmsnormRowCfg::kThreads)
    k_rmsnorm_row(const float* __restrict__ x, const float* __restrict__ w, uint16_t* __restrict__ out, int D,
                  float eps) {
  PFX_PLANT_SPIN();  // calibration builds only (kernels/plant_spin.cuh)
  dev::pdl_launch_dependents();  // the decode GEMV after it may start fetching weights (kernels/ptx.cuh)
  extern __shared__ float4 row_s[];  // the row, D / 4 float4
  __shared__ float r_s;
  const int t = static_cast<int>(blockIdx.x), n4 = D / RmsnormWarpCfg::kVec;
  const float4* row = reinterpret_cast<const float4*>(x + static_cast<int64_t>(t) * D);
  const float4* w4 = reinterpret_cast<const float4*>(w);
  uint2* orow = reinterpret_cast<uint2*>(out + static_cast<int64_t>(t) * D);
  // The norm weights this thread scales by (constants), fetched first: in flight while the block
  // waits for the kernel before it (launched as a programmatic dependent) and then loads the row.
  constexpr int kMine = RmsnormRowCfg::kMaxD / RmsnormWarpCfg::kVec / RmsnormRowCfg::kThreads;
  float4 g[kMine];
#pragma unroll
  for (int j = 0; j < kMine; ++j) {
    const int i = static_cast<int>(threadIdx.x) + j * RmsnormRowCfg::kThreads;
    if (i < n4) g[j] = w4[i];
  }
  dev::pdl_wait();  // x belongs to the kernels before this one; out is read by none still running
#pragma unroll 4
  for (int i = static_cast<int>(threadIdx.x); i < n4; i += RmsnormRowCfg::kThreads) row_s[i] = row[i];
  __syncthreads();
  if (threadIdx.x < 32) {  // lane l adds float4 l, l + 32, ... in order: k_rmsnorm_warp's sum
    float ss = 0.0f;
    for (int i = static_cast<int>(threadIdx.x); i < n4; i += 32) ss = add_squares(ss, row_s[i]);
    const float r = rms_scale(dev::warp_sum(ss), D, eps);
    if (threadIdx.x == 0) r_s = r;
  }
  __syncthreads();
  const float r = r_s;
#pragma unroll
  for (int j = 0; j < kMine; ++j) {
    const int i = static_cast<int>(threadIdx.x) + j * RmsnormRowCfg::kThreads;
    if (i < n4) orow[i] = normed4(row_s[i], g[j], r);
  }
}
PFX_KERNEL_LAUNCH_INFO("k_rmsnorm_row", RmsnormRowCfg::kThreads, 0);

namespace {
void check_common(const char* who, const float* x, const float* w, const uint16_t* out, int T, int D) {
  detail::require(T >= 1 && D >= 1, who, ": T=", T, ", D=", D, " must be positive");
  detail::require(x && w && out, who, ": null pointer");
  detail::require(detail::is_aligned(x, 4) && detail::is_aligned(w, 4) && detail::is_aligned(out, 2), who,
                  ": misaligned x/w/out");
}
}  // namespace

void rmsnorm_f32_to_f16(const float* x, const float* w, uint16_t* out, int T, int D, float eps, cudaStream_t stream) {
  check_common("rmsnorm_f32_to_f16", x, w, out, T, D);
  const unsigned grid =
      static_cast<unsigned>((T + RmsnormGenericCfg::kRowsPerBlock - 1) / RmsnormGenericCfg::kRowsPerBlock);
  k_rmsnorm_generic<<<grid, RmsnormGenericCfg::kThreads, 0, stream>>>(x, w, out, T, D, eps);
  CUDA_CHECK_LAUNCH();
}

const char* rmsnorm_fast_unsupported_reason(const float* x, const float* w, const uint16_t* out, int D) {
  if (D % RmsnormWarpCfg::kVec != 0) return "rmsnorm fast: D is not a multiple of 4";
  if (!detail::is_aligned(x, 16) || !detail::is_aligned(w, 16)) return "rmsnorm fast: x or w not 16-byte aligned";
  if (!detail::is_aligned(out, 8)) return "rmsnorm fast: out not 8-byte aligned";
  return nullptr;
}

void rmsnorm_f32_to_f16_fast(const float* x, const float* w, uint16_t* out, int T, int D, float eps,
                             cudaStream_t stream) {
  check_common("rmsnorm_f32_to_f16_fast", x, w, out, T, D);
  const char* why = rmsnorm_fast_unsupported_reason(x, w, out, D);
  detail::require(why == nullptr, "rmsnorm_f32_to_f16_fast: ", why ? why : "", " (D=", D, ")");
  if (T < RmsnormRowCfg::kMaxRows && D <= RmsnormRowCfg::kMaxD) {
    // A programmatic dependent (kernels/pdl_launch.h): a decode step's one block is resident and has
    // its weights in flight when the kernel before it ends.
    detail::launch_pdl(k_rmsnorm_row, dim3(static_cast<unsigned>(T)), dim3(RmsnormRowCfg::kThreads),
                       static_cast<size_t>(D) * 4, stream, x, w, out, D, eps);
    CUDA_CHECK_LAUNCH();
    return;
  }
  const unsigned grid = static_cast<unsigned>((T + RmsnormWarpCfg::kRowsPerBlock - 1) / RmsnormWarpCfg::kRowsPerBlock);
  k_rmsnorm_warp<<<grid, RmsnormWarpCfg::kThreads, 0, stream>>>(x, w, out, T, D, eps);
  CUDA_CHECK_LAUNCH();
}

}  // namespace pfx::kernels

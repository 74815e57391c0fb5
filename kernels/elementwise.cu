// Elementwise kernels of the forward pass: SwiGLU into fp16 (a16 = fp16(silu(g) * u)), residual
// add in fp32, fp32 -> fp16 conversion, the per-column bias add of the Q/K/V projections. Grid-stride loops over 4-element vectors with a scalar
// tail, so any n and any 4-byte-aligned pointers work.
#include "kernels/common.cuh"
#include "kernels/cuda_check.h"
#include "kernels/elementwise_math.cuh"
#include "kernels/flat_cfg.h"
#include "kernels/kernels.h"
#include "kernels/launch_checks.h"
#include "kernels/launch_info.h"

namespace pfx::kernels {

using ElementwiseCfg = FlatCfg<256, 4>;  // 4 floats (one float4) per vector step

namespace {
// Vector loop when every pointer is 16-byte aligned (float4 in, 4 halves out as 8 bytes), the
// scalar loop covers the rest (and everything when misaligned).
__device__ __forceinline__ int64_t thread_index() { return static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; }
__device__ __forceinline__ int64_t grid_stride() { return static_cast<int64_t>(gridDim.x) * blockDim.x; }
}  // namespace

__global__ void __launch_bounds__(ElementwiseCfg::kThreads)
    k_elementwise_silu_mul(const float* __restrict__ g, const float* __restrict__ u, uint16_t* __restrict__ a,
                           int64_t n, int64_t n_vec) {
  dev::pdl_launch_dependents();  // a decode GEMV after it may start fetching weights (kernels/ptx.cuh)
  for (int64_t i = thread_index(); i < n_vec; i += grid_stride()) {
    const float4 gv = reinterpret_cast<const float4*>(g)[i];
    const float4 uv = reinterpret_cast<const float4*>(u)[i];
    uint2 o;
    o.x = dev::pack_half2_rn(dev::swiglu_f32(gv.x, uv.x), dev::swiglu_f32(gv.y, uv.y));
    o.y = dev::pack_half2_rn(dev::swiglu_f32(gv.z, uv.z), dev::swiglu_f32(gv.w, uv.w));
    reinterpret_cast<uint2*>(a)[i] = o;
  }
  for (int64_t i = n_vec * 4 + thread_index(); i < n; i += grid_stride()) a[i] = dev::f2h_bits(dev::swiglu_f32(g[i], u[i]));
}
PFX_KERNEL_LAUNCH_INFO("k_elementwise_silu_mul", ElementwiseCfg::kThreads, 0);

__global__ void __launch_bounds__(ElementwiseCfg::kThreads)
    k_elementwise_add_f32(float* __restrict__ x, const float* __restrict__ y, int64_t n, int64_t n_vec) {
  for (int64_t i = thread_index(); i < n_vec; i += grid_stride()) {
    float4 a = reinterpret_cast<float4*>(x)[i];
    const float4 b = reinterpret_cast<const float4*>(y)[i];
    a.x = __fadd_rn(a.x, b.x);
    a.y = __fadd_rn(a.y, b.y);
    a.z = __fadd_rn(a.z, b.z);
    a.w = __fadd_rn(a.w, b.w);
    reinterpret_cast<float4*>(x)[i] = a;
  }
  for (int64_t i = n_vec * 4 + thread_index(); i < n; i += grid_stride()) x[i] = __fadd_rn(x[i], y[i]);
}
PFX_KERNEL_LAUNCH_INFO("k_elementwise_add_f32", ElementwiseCfg::kThreads, 0);

__global__ void __launch_bounds__(ElementwiseCfg::kThreads)
    k_elementwise_f32_to_f16(const float* __restrict__ in, uint16_t* __restrict__ out, int64_t n, int64_t n_vec) {
  for (int64_t i = thread_index(); i < n_vec; i += grid_stride()) {
    const float4 v = reinterpret_cast<const float4*>(in)[i];
    uint2 o;
    o.x = dev::pack_half2_rn(v.x, v.y);
    o.y = dev::pack_half2_rn(v.z, v.w);
    reinterpret_cast<uint2*>(out)[i] = o;
  }
  for (int64_t i = n_vec * 4 + thread_index(); i < n; i += grid_stride()) out[i] = dev::f2h_bits(in[i]);
}
PFX_KERNEL_LAUNCH_INFO("k_elementwise_f32_to_f16", ElementwiseCfg::kThreads, 0);

namespace {
// Number of leading 4-element vectors the vector loop may take: all of them when every pointer
// is 16-byte aligned (fp16 outputs: 8-byte), none otherwise.
int64_t vector_count(int64_t n, bool aligned) { return aligned ? n / ElementwiseCfg::kElemsPerThread : 0; }

void check_n(const char* who, int64_t n) { detail::require(n >= 1, who, ": n=", n, " must be positive"); }

// One of the vector-loop kernels above on `stream`, its pointer arguments then (n, nv): a grid for
// the nv vectors, or for the n scalars when the pointers allow no vector loop.
template <class... Params, class... Pointers>
void launch_vector_loop(void (*kernel)(Params...), int64_t n, int64_t nv, cudaStream_t stream, Pointers... ptrs) {
  kernel<<<detail::grid_for(nv > 0 ? nv : n, ElementwiseCfg::kThreads), ElementwiseCfg::kThreads, 0, stream>>>(ptrs..., n,
                                                                                                              nv);
  CUDA_CHECK_LAUNCH();
}
}  // namespace

void silu_mul_f32_to_f16(const float* g32, const float* u32, uint16_t* a16, int64_t n, cudaStream_t stream) {
  check_n("silu_mul_f32_to_f16", n);
  detail::require(g32 && u32 && a16, "silu_mul_f32_to_f16: null pointer");
  const bool aligned = detail::is_aligned(g32, 16) && detail::is_aligned(u32, 16) && detail::is_aligned(a16, 8);
  const int64_t nv = vector_count(n, aligned);
  launch_vector_loop(k_elementwise_silu_mul, n, nv, stream, g32, u32, a16);
}

void add_f32(float* x, const float* y, int64_t n, cudaStream_t stream) {
  check_n("add_f32", n);
  detail::require(x && y, "add_f32: null pointer");
  const int64_t nv = vector_count(n, detail::is_aligned(x, 16) && detail::is_aligned(y, 16));
  launch_vector_loop(k_elementwise_add_f32, n, nv, stream, x, y);
}

// grid-stride over T*n elements of rows with stride ld: x[t*ld + c] += bias[c] (one fp32 add, so
// both CUDA paths and the CPU reference round alike).
__global__ void __launch_bounds__(ElementwiseCfg::kThreads)
    k_elementwise_add_bias(float* __restrict__ x, int64_t ld, const float* __restrict__ bias, int64_t T, int64_t n) {
  for (int64_t i = thread_index(); i < T * n; i += grid_stride()) {
    const int64_t t = i / n, c = i % n;
    x[t * ld + c] = __fadd_rn(x[t * ld + c], bias[c]);
  }
}
PFX_KERNEL_LAUNCH_INFO("k_elementwise_add_bias", ElementwiseCfg::kThreads, 0);

void add_bias_f32(float* x, int64_t ld, const float* bias, int T, int64_t n, cudaStream_t stream) {
  detail::require(x && bias, "add_bias_f32: null pointer");
  detail::require(T >= 1 && n >= 1 && ld >= n, "add_bias_f32: T=", T, " n=", n, " ld=", ld,
                  " (need T, n >= 1 and ld >= n)");
  k_elementwise_add_bias<<<detail::grid_for(int64_t{T} * n, ElementwiseCfg::kThreads), ElementwiseCfg::kThreads, 0,
                           stream>>>(x, ld, bias, T, n);
  CUDA_CHECK_LAUNCH();
}

void f32_to_f16(const float* in, uint16_t* out, int64_t n, cudaStream_t stream) {
  check_n("f32_to_f16", n);
  detail::require(in && out, "f32_to_f16: null pointer");
  const int64_t nv = vector_count(n, detail::is_aligned(in, 16) && detail::is_aligned(out, 8));
  launch_vector_loop(k_elementwise_f32_to_f16, n, nv, stream, in, out);
}

}  // namespace pfx::kernels

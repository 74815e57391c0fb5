// Weight decoding for the generic path: a GGUF weight tensor (any supported ggml type) into a
// dense fp16 (GEMM operand) or fp32 (norm vectors) buffer, bit-identical to ggml's dequantizers
// (fp16 outputs: round-to-nearest-even of the fp32 value). One thread decodes 8 consecutive
// elements and writes them with 16-byte stores; memory-bound, so nothing cleverer is needed.
#include <cuda_fp16.h>

#include <string>
#include <type_traits>

#include "kernels/common.cuh"
#include "kernels/cuda_check.h"
#include "kernels/dequant_decode.cuh"
#include "kernels/flat_cfg.h"
#include "kernels/kernels.h"
#include "kernels/launch_checks.h"
#include "kernels/launch_info.h"
#include "quant/types.h"

namespace pfx::kernels {

using DequantCfg = FlatCfg<256, 8>;  // 16 bytes of fp16 output per step

namespace {

template <class Dec, class Out>
__device__ __forceinline__ void dequant_body(const uint8_t* __restrict__ w, Out* __restrict__ out, int64_t n) {
  const int64_t units = (n + DequantCfg::kElemsPerThread - 1) / DequantCfg::kElemsPerThread;
  const int64_t stride = static_cast<int64_t>(gridDim.x) * blockDim.x;
  for (int64_t u = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; u < units; u += stride) {
    const int64_t i0 = u * DequantCfg::kElemsPerThread;
    if (i0 + 8 <= n) {
      if constexpr (std::is_same_v<Dec, dev::DecodeF16> && std::is_same_v<Out, uint16_t>) {
        // f16 -> f16 is the identity on the bits (a trip through fp32 would canonicalise NaNs).
        const uint16_t* src = reinterpret_cast<const uint16_t*>(w) + i0;
        uint4 v;
        uint16_t* vh = reinterpret_cast<uint16_t*>(&v);
#pragma unroll
        for (int k = 0; k < 8; ++k) vh[k] = src[k];
        *reinterpret_cast<uint4*>(out + i0) = v;
      } else {
        float v[8];
        Dec::decode8(w, i0, v);
        if constexpr (std::is_same_v<Out, uint16_t>) {
          uint4 packed;
          packed.x = dev::pack_half2_rn(v[0], v[1]);
          packed.y = dev::pack_half2_rn(v[2], v[3]);
          packed.z = dev::pack_half2_rn(v[4], v[5]);
          packed.w = dev::pack_half2_rn(v[6], v[7]);
          *reinterpret_cast<uint4*>(out + i0) = packed;
        } else {
          reinterpret_cast<float4*>(out + i0)[0] = make_float4(v[0], v[1], v[2], v[3]);
          reinterpret_cast<float4*>(out + i0)[1] = make_float4(v[4], v[5], v[6], v[7]);
        }
      }
    } else if constexpr (Dec::kBlock == 1) {
      // Tail of an element-wise type whose size is not a multiple of 8.
      for (int64_t i = i0; i < n; ++i) {
        const float v = Dec::decode1(w, i);
        if constexpr (std::is_same_v<Out, uint16_t>) {
          if constexpr (std::is_same_v<Dec, dev::DecodeF16>) {
            out[i] = reinterpret_cast<const uint16_t*>(w)[i];
          } else {
            out[i] = dev::f2h_bits(v);
          }
        } else {
          out[i] = v;
        }
      }
    }
  }
}

}  // namespace

// One named kernel per (type, output), so profiles and CUPTI traces read k_dequant_q4k_f16.
#define PFX_DEQUANT_KERNELS(tname, Dec)                                                                  \
  __global__ void __launch_bounds__(DequantCfg::kThreads)                                               \
      k_dequant_##tname##_f16(const uint8_t* __restrict__ w, uint16_t* __restrict__ out, int64_t n) {   \
    dequant_body<Dec, uint16_t>(w, out, n);                                                             \
  }                                                                                                     \
  __global__ void __launch_bounds__(DequantCfg::kThreads)                                               \
      k_dequant_##tname##_f32(const uint8_t* __restrict__ w, float* __restrict__ out, int64_t n) {      \
    dequant_body<Dec, float>(w, out, n);                                                                \
  }                                                                                                     \
  PFX_KERNEL_LAUNCH_INFO("k_dequant_" #tname "_f16", DequantCfg::kThreads, 0);                          \
  PFX_KERNEL_LAUNCH_INFO("k_dequant_" #tname "_f32", DequantCfg::kThreads, 0)

#define PFX_DEQUANT_KERNELS_OF(tname, Dec, type) PFX_DEQUANT_KERNELS(tname, dev::Dec);
PFX_GENERIC_DECODERS(PFX_DEQUANT_KERNELS_OF)
#undef PFX_DEQUANT_KERNELS_OF
#undef PFX_DEQUANT_KERNELS

namespace {

struct DequantEntry {
  void (*to_f16)(const uint8_t*, uint16_t*, int64_t);
  void (*to_f32)(const uint8_t*, float*, int64_t);
  int block;      // elements per block
  int src_align;  // bytes the source pointer must be aligned to
};

template <class Dec>
constexpr DequantEntry entry(void (*f16)(const uint8_t*, uint16_t*, int64_t), void (*f32)(const uint8_t*, float*, int64_t)) {
  return DequantEntry{f16, f32, Dec::kBlock, Dec::kAlign};
}

// nullptr for an unsupported type.
const DequantEntry* find_entry(uint32_t ggml_type) {
  using quant::Type;
#define PFX_DEQUANT_ENTRY(tname, Dec, type)                                                            \
  case Type::type: {                                                                                   \
    static const DequantEntry e = entry<dev::Dec>(k_dequant_##tname##_f16, k_dequant_##tname##_f32);   \
    return &e;                                                                                         \
  }
  switch (static_cast<Type>(ggml_type)) {
    PFX_GENERIC_DECODERS(PFX_DEQUANT_ENTRY)
#undef PFX_DEQUANT_ENTRY
    default: return nullptr;
  }
}

// "f32, f16, ..., q6_K": ggml's names of the types PFX_GENERIC_DECODERS covers, in its order.
std::string supported_types() {
  std::string names;
#define PFX_DEQUANT_NAME(tname, Dec, type)     \
  if (!names.empty()) names += ", ";           \
  names += quant::type_name(quant::Type::type);
  PFX_GENERIC_DECODERS(PFX_DEQUANT_NAME)
#undef PFX_DEQUANT_NAME
  return names;
}

const DequantEntry& checked_entry(const char* who, uint32_t ggml_type, const void* w, const void* out, int64_t rows,
                                  int64_t cols) {
  const DequantEntry* e = find_entry(ggml_type);
  detail::require(e != nullptr, who, ": tensor type ", quant::describe_type_id(ggml_type),
                  " has no GPU decoder (supported: ", supported_types(), ")");
  detail::require(rows >= 1 && cols >= 1, who, ": shape [", rows, ", ", cols, "] must be positive");
  detail::require(cols % e->block == 0, who, ": ", cols, " columns is not a multiple of the ",
                  quant::describe_type_id(ggml_type), " block size ", e->block);
  detail::require(w != nullptr && out != nullptr, who, ": null pointer (w=", w, ", out=", out, ")");
  detail::require(detail::is_aligned(w, static_cast<uintptr_t>(e->src_align)), who, ": source ", w,
                  " is not ", e->src_align, "-byte aligned");
  detail::require(detail::is_aligned(out, 16), who, ": output ", out, " is not 16-byte aligned");
  return *e;
}

}  // namespace

bool dequant_supported(uint32_t ggml_type) { return find_entry(ggml_type) != nullptr; }

namespace {
// The type's kernel for this output (DequantEntry::to_f16 / to_f32) over rows x cols, on `stream`.
template <class Out>
void launch_dequant(const char* who, uint32_t ggml_type, const void* w, Out* out, int64_t rows, int64_t cols,
                    cudaStream_t stream) {
  const DequantEntry& e = checked_entry(who, ggml_type, w, out, rows, cols);
  void (*const kernel)(const uint8_t*, Out*, int64_t) = [&e] {
    if constexpr (std::is_same_v<Out, uint16_t>)
      return e.to_f16;
    else
      return e.to_f32;
  }();
  const int64_t n = rows * cols;
  const unsigned grid = detail::grid_for((n + 7) / 8, DequantCfg::kThreads);
  kernel<<<grid, DequantCfg::kThreads, 0, stream>>>(static_cast<const uint8_t*>(w), out, n);
  CUDA_CHECK_LAUNCH();
}
}  // namespace

void dequant_to_f16(uint32_t ggml_type, const void* w, uint16_t* out, int64_t rows, int64_t cols, cudaStream_t stream) {
  launch_dequant("dequant_to_f16", ggml_type, w, out, rows, cols, stream);
}

void dequant_to_f32(uint32_t ggml_type, const void* w, float* out, int64_t rows, int64_t cols, cudaStream_t stream) {
  launch_dequant("dequant_to_f32", ggml_type, w, out, rows, cols, stream);
}

}  // namespace pfx::kernels

// Weight decoding for the generic path: a GGUF weight tensor (any supported ggml type) into a
// dense fp16 (GEMM operand) or fp32 (norm vectors) buffer, bit-identical to ggml's dequantizers
// (fp16 outputs: round-to-nearest-even of the fp32 value). One thread decodes 8 consecutive
// elements and writes them with 16-byte stores; memory-bound, so nothing cleverer is needed.
#include <cuda_fp16.h>

#include <type_traits>

#include "kernels/common.cuh"
#include "kernels/cuda_check.h"
#include "kernels/dequant_decode.cuh"
#include "kernels/kernels.h"
#include "kernels/launch_checks.h"
#include "kernels/launch_info.h"
#include "quant/types.h"

namespace pfx::kernels {

struct DequantCfg {
  static constexpr int kThreads = 256;
  static constexpr int kElemsPerThread = 8;  // 16 bytes of fp16 output
  static_assert(kThreads % sm90::kWarpSize == 0 && kThreads <= sm90::kMaxThreadsPerBlock,
                "dequant: whole warps, within the block limit");
};

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
          packed.x = dev::pack_half2(v[0], v[1]);
          packed.y = dev::pack_half2(v[2], v[3]);
          packed.z = dev::pack_half2(v[4], v[5]);
          packed.w = dev::pack_half2(v[6], v[7]);
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

PFX_DEQUANT_KERNELS(f32, dev::DecodeF32);
PFX_DEQUANT_KERNELS(f16, dev::DecodeF16);
PFX_DEQUANT_KERNELS(bf16, dev::DecodeBF16);
PFX_DEQUANT_KERNELS(q8_0, dev::DecodeQ8_0);
PFX_DEQUANT_KERNELS(q4_0, dev::DecodeQ4_0);
PFX_DEQUANT_KERNELS(q4_1, dev::DecodeQ4_1);
PFX_DEQUANT_KERNELS(q5_0, dev::DecodeQ5_0);
PFX_DEQUANT_KERNELS(q5_1, dev::DecodeQ5_1);
PFX_DEQUANT_KERNELS(q4k, dev::DecodeQ4_K);
PFX_DEQUANT_KERNELS(q5k, dev::DecodeQ5_K);
PFX_DEQUANT_KERNELS(q6k, dev::DecodeQ6_K);
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
  static const DequantEntry f32 = entry<dev::DecodeF32>(k_dequant_f32_f16, k_dequant_f32_f32);
  static const DequantEntry f16 = entry<dev::DecodeF16>(k_dequant_f16_f16, k_dequant_f16_f32);
  static const DequantEntry bf16 = entry<dev::DecodeBF16>(k_dequant_bf16_f16, k_dequant_bf16_f32);
  static const DequantEntry q8_0 = entry<dev::DecodeQ8_0>(k_dequant_q8_0_f16, k_dequant_q8_0_f32);
  static const DequantEntry q4_0 = entry<dev::DecodeQ4_0>(k_dequant_q4_0_f16, k_dequant_q4_0_f32);
  static const DequantEntry q4_1 = entry<dev::DecodeQ4_1>(k_dequant_q4_1_f16, k_dequant_q4_1_f32);
  static const DequantEntry q5_0 = entry<dev::DecodeQ5_0>(k_dequant_q5_0_f16, k_dequant_q5_0_f32);
  static const DequantEntry q5_1 = entry<dev::DecodeQ5_1>(k_dequant_q5_1_f16, k_dequant_q5_1_f32);
  static const DequantEntry q4k = entry<dev::DecodeQ4_K>(k_dequant_q4k_f16, k_dequant_q4k_f32);
  static const DequantEntry q5k = entry<dev::DecodeQ5_K>(k_dequant_q5k_f16, k_dequant_q5k_f32);
  static const DequantEntry q6k = entry<dev::DecodeQ6_K>(k_dequant_q6k_f16, k_dequant_q6k_f32);
  switch (static_cast<Type>(ggml_type)) {
    case Type::F32: return &f32;
    case Type::F16: return &f16;
    case Type::BF16: return &bf16;
    case Type::Q8_0: return &q8_0;
    case Type::Q4_0: return &q4_0;
    case Type::Q4_1: return &q4_1;
    case Type::Q5_0: return &q5_0;
    case Type::Q5_1: return &q5_1;
    case Type::Q4_K: return &q4k;
    case Type::Q5_K: return &q5k;
    case Type::Q6_K: return &q6k;
    default: return nullptr;
  }
}

const DequantEntry& checked_entry(const char* who, uint32_t ggml_type, const void* w, const void* out, int64_t rows,
                                  int64_t cols) {
  const DequantEntry* e = find_entry(ggml_type);
  detail::require(e != nullptr, who, ": tensor type ", quant::describe_type_id(ggml_type),
                  " has no GPU decoder (supported: f32, f16, bf16, q8_0, q4_0, q4_1, q5_0, q5_1, q4_K, q5_K, q6_K)");
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

void dequant_to_f16(uint32_t ggml_type, const void* w, uint16_t* out, int64_t rows, int64_t cols, cudaStream_t stream) {
  const DequantEntry& e = checked_entry("dequant_to_f16", ggml_type, w, out, rows, cols);
  const int64_t n = rows * cols;
  const unsigned grid = detail::grid_for((n + 7) / 8, DequantCfg::kThreads);
  e.to_f16<<<grid, DequantCfg::kThreads, 0, stream>>>(static_cast<const uint8_t*>(w), out, n);
  CUDA_CHECK_LAUNCH();
}

void dequant_to_f32(uint32_t ggml_type, const void* w, float* out, int64_t rows, int64_t cols, cudaStream_t stream) {
  const DequantEntry& e = checked_entry("dequant_to_f32", ggml_type, w, out, rows, cols);
  const int64_t n = rows * cols;
  const unsigned grid = detail::grid_for((n + 7) / 8, DequantCfg::kThreads);
  e.to_f32<<<grid, DequantCfg::kThreads, 0, stream>>>(static_cast<const uint8_t*>(w), out, n);
  CUDA_CHECK_LAUNCH();
}

}  // namespace pfx::kernels

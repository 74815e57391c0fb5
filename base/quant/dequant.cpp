// Reference dequantizers, following ggml's dequantize_row_* definitions operation for operation
// (same products in the same order, no fused multiply-add: this file is built with
// -ffp-contract=off) so the results are bit-identical to ggml and to gguf-py.
#include "quant/dequant.h"

#include <cstdint>
#include <cstring>
#include <utility>
#include <vector>

#include "quant/blocks.h"
#include "quant/fp16.h"
#include "quant/row_access.h"
#include "util/error.h"

namespace pfx::quant {

void get_scale_min_k4(int j, const uint8_t* q, uint8_t* d, uint8_t* m) {
  // Sub-blocks 0..3: low 6 bits of bytes j (scale) and j+4 (min). Sub-blocks 4..7: low/high
  // nibble of byte j+4, with the 2 high bits taken from the top of bytes j-4 and j.
  if (j < 4) {
    *d = q[j] & 63;
    *m = q[j + 4] & 63;
  } else {
    *d = static_cast<uint8_t>((q[j + 4] & 0xF) | ((q[j - 4] >> 6) << 4));
    *m = static_cast<uint8_t>((q[j + 4] >> 4) | ((q[j] >> 6) << 4));
  }
}

namespace {

void dequant_f16(const uint16_t* x, float* y, int64_t n) {
  for (int64_t i = 0; i < n; ++i) y[i] = fp16_to_fp32(x[i]);
}

void dequant_bf16(const uint16_t* x, float* y, int64_t n) {
  for (int64_t i = 0; i < n; ++i) y[i] = bf16_to_fp32(x[i]);
}

void dequant_q4_0(const BlockQ4_0* x, float* y, int64_t nb) {
  for (int64_t i = 0; i < nb; ++i, y += QK4_0) {
    const float d = fp16_to_fp32(x[i].d);
    for (int j = 0; j < QK4_0 / 2; ++j) {
      const int lo = (x[i].qs[j] & 0x0F) - 8;
      const int hi = (x[i].qs[j] >> 4) - 8;
      y[j] = static_cast<float>(lo) * d;
      y[j + QK4_0 / 2] = static_cast<float>(hi) * d;
    }
  }
}

void dequant_q4_1(const BlockQ4_1* x, float* y, int64_t nb) {
  for (int64_t i = 0; i < nb; ++i, y += QK4_1) {
    const float d = fp16_to_fp32(x[i].d);
    const float m = fp16_to_fp32(x[i].m);
    for (int j = 0; j < QK4_1 / 2; ++j) {
      y[j] = static_cast<float>(x[i].qs[j] & 0x0F) * d + m;
      y[j + QK4_1 / 2] = static_cast<float>(x[i].qs[j] >> 4) * d + m;
    }
  }
}

// The 5th bit of element j of a q5_0 / q5_1 block: bit j of qh, read as a little-endian uint32.
uint32_t high_bits(const uint8_t (&qh)[4]) {
  uint32_t h;
  std::memcpy(&h, qh, sizeof h);
  return h;
}

void dequant_q5_0(const BlockQ5_0* x, float* y, int64_t nb) {
  for (int64_t i = 0; i < nb; ++i, y += QK5_0) {
    const float d = fp16_to_fp32(x[i].d);
    const uint32_t qh = high_bits(x[i].qh);
    for (int j = 0; j < QK5_0 / 2; ++j) {
      const int lo = static_cast<int>((x[i].qs[j] & 0x0F) | (((qh >> j) & 1) << 4)) - 16;
      const int hi = static_cast<int>((x[i].qs[j] >> 4) | (((qh >> (j + 16)) & 1) << 4)) - 16;
      y[j] = static_cast<float>(lo) * d;
      y[j + QK5_0 / 2] = static_cast<float>(hi) * d;
    }
  }
}

void dequant_q5_1(const BlockQ5_1* x, float* y, int64_t nb) {
  for (int64_t i = 0; i < nb; ++i, y += QK5_1) {
    const float d = fp16_to_fp32(x[i].d);
    const float m = fp16_to_fp32(x[i].m);
    const uint32_t qh = high_bits(x[i].qh);
    for (int j = 0; j < QK5_1 / 2; ++j) {
      const uint32_t lo = (x[i].qs[j] & 0x0F) | (((qh >> j) & 1) << 4);
      const uint32_t hi = (x[i].qs[j] >> 4) | (((qh >> (j + 16)) & 1) << 4);
      y[j] = static_cast<float>(lo) * d + m;
      y[j + QK5_1 / 2] = static_cast<float>(hi) * d + m;
    }
  }
}

void dequant_q8_0(const BlockQ8_0* x, float* y, int64_t nb) {
  for (int64_t i = 0; i < nb; ++i, y += QK8_0) {
    const float d = fp16_to_fp32(x[i].d);
    for (int j = 0; j < QK8_0; ++j) y[j] = static_cast<float>(x[i].qs[j]) * d;
  }
}

// d * scale and dmin * min of sub-block `is` of a q4_K / q5_K block (they pack scales alike).
std::pair<float, float> scale_and_min(const uint8_t* scales, int is, float d, float dmin) {
  uint8_t sc, m;
  get_scale_min_k4(is, scales, &sc, &m);
  return {d * sc, dmin * m};
}

void dequant_q4_k(const BlockQ4_K* x, float* y, int64_t nb) {
  for (int64_t i = 0; i < nb; ++i) {
    const uint8_t* q = x[i].qs;
    const float d = fp16_to_fp32(x[i].d);
    const float min = fp16_to_fp32(x[i].dmin);
    // Each 64 elements: 32 bytes of qs, low nibbles = sub-block 2k, high = sub-block 2k+1.
    for (int j = 0, is = 0; j < QK_K; j += 64, is += 2, q += 32) {
      const auto [d1, m1] = scale_and_min(x[i].scales, is, d, min);
      const auto [d2, m2] = scale_and_min(x[i].scales, is + 1, d, min);
      for (int l = 0; l < 32; ++l) *y++ = d1 * static_cast<float>(q[l] & 0xF) - m1;
      for (int l = 0; l < 32; ++l) *y++ = d2 * static_cast<float>(q[l] >> 4) - m2;
    }
  }
}

void dequant_q5_k(const BlockQ5_K* x, float* y, int64_t nb) {
  for (int64_t i = 0; i < nb; ++i) {
    const uint8_t* ql = x[i].qs;
    const uint8_t* qh = x[i].qh;
    const float d = fp16_to_fp32(x[i].d);
    const float min = fp16_to_fp32(x[i].dmin);
    uint8_t u1 = 1, u2 = 2;  // the qh bit of the current pair of sub-blocks
    for (int j = 0, is = 0; j < QK_K; j += 64, is += 2, ql += 32) {
      const auto [d1, m1] = scale_and_min(x[i].scales, is, d, min);
      const auto [d2, m2] = scale_and_min(x[i].scales, is + 1, d, min);
      for (int l = 0; l < 32; ++l) *y++ = d1 * static_cast<float>((ql[l] & 0xF) + (qh[l] & u1 ? 16 : 0)) - m1;
      for (int l = 0; l < 32; ++l) *y++ = d2 * static_cast<float>((ql[l] >> 4) + (qh[l] & u2 ? 16 : 0)) - m2;
      u1 = static_cast<uint8_t>(u1 << 2);
      u2 = static_cast<uint8_t>(u2 << 2);
    }
  }
}

void dequant_q6_k(const BlockQ6_K* x, float* y, int64_t nb) {
  for (int64_t i = 0; i < nb; ++i) {
    const float d = fp16_to_fp32(x[i].d);
    const uint8_t* ql = x[i].ql;
    const uint8_t* qh = x[i].qh;
    const int8_t* sc = x[i].scales;
    // Each 128 elements: 64 bytes of ql (low nibbles), 32 of qh (2 bits each), 8 scales.
    for (int n = 0; n < QK_K; n += 128, y += 128, ql += 64, qh += 32, sc += 8) {
      for (int l = 0; l < 32; ++l) {
        const int is = l / 16;
        const int q1 = ((ql[l] & 0xF) | (((qh[l] >> 0) & 3) << 4)) - 32;
        const int q2 = ((ql[l + 32] & 0xF) | (((qh[l] >> 2) & 3) << 4)) - 32;
        const int q3 = ((ql[l] >> 4) | (((qh[l] >> 4) & 3) << 4)) - 32;
        const int q4 = ((ql[l + 32] >> 4) | (((qh[l] >> 6) & 3) << 4)) - 32;
        y[l + 0] = d * static_cast<float>(sc[is + 0]) * static_cast<float>(q1);
        y[l + 32] = d * static_cast<float>(sc[is + 2]) * static_cast<float>(q2);
        y[l + 64] = d * static_cast<float>(sc[is + 4]) * static_cast<float>(q3);
        y[l + 96] = d * static_cast<float>(sc[is + 6]) * static_cast<float>(q4);
      }
    }
  }
}

void dequant_q8_k(const BlockQ8_K* x, float* y, int64_t nb) {
  for (int64_t i = 0; i < nb; ++i, y += QK_K) {
    for (int j = 0; j < QK_K; ++j) y[j] = x[i].d * static_cast<float>(x[i].qs[j]);
  }
}

}  // namespace

void dequantize_row(Type type, const void* src, float* dst, int64_t n) {
  const TypeTraits& tr = row_traits(type, n, "dequantize", &TypeTraits::can_dequantize, "reference dequantizer");
  if (is_misaligned(type, src)) {  // read from an aligned copy (quant/row_access.h)
    std::vector<uint64_t> aligned = aligned_row_buffer(type, n);
    std::memcpy(aligned.data(), src, static_cast<size_t>(row_bytes(type, n)));
    return dequantize_row(type, aligned.data(), dst, n);
  }
  const int64_t nb = n / tr.block_size;
  switch (type) {
    case Type::F32: std::memcpy(dst, src, static_cast<size_t>(n) * sizeof(float)); return;
    case Type::F16: return dequant_f16(static_cast<const uint16_t*>(src), dst, n);
    case Type::BF16: return dequant_bf16(static_cast<const uint16_t*>(src), dst, n);
    case Type::Q4_0: return dequant_q4_0(static_cast<const BlockQ4_0*>(src), dst, nb);
    case Type::Q4_1: return dequant_q4_1(static_cast<const BlockQ4_1*>(src), dst, nb);
    case Type::Q5_0: return dequant_q5_0(static_cast<const BlockQ5_0*>(src), dst, nb);
    case Type::Q5_1: return dequant_q5_1(static_cast<const BlockQ5_1*>(src), dst, nb);
    case Type::Q8_0: return dequant_q8_0(static_cast<const BlockQ8_0*>(src), dst, nb);
    case Type::Q4_K: return dequant_q4_k(static_cast<const BlockQ4_K*>(src), dst, nb);
    case Type::Q5_K: return dequant_q5_k(static_cast<const BlockQ5_K*>(src), dst, nb);
    case Type::Q6_K: return dequant_q6_k(static_cast<const BlockQ6_K*>(src), dst, nb);
    case Type::Q8_K: return dequant_q8_k(static_cast<const BlockQ8_K*>(src), dst, nb);
    default: break;
  }
  fail("dequantize: tensor type ", tr.name, " is not supported");
}

}  // namespace pfx::quant

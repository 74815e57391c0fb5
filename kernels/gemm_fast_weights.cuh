// Weight formats of the fast GEMM: how one 64-element k-tile of a q4_K / q6_K / q8_0 row is
// staged from global memory (16-byte cp.async chunks, raw bytes), and how the staged bytes become
// fp16 weights that are bit-identical to fp16_rn(ggml's fp32 dequant value).
//
// Exactness (the arithmetic contract, CUDA_DATAFLOW.md): every product and difference is rounded
// where ggml rounds it and nowhere else (explicit _rn intrinsics, so nvcc cannot contract them):
//   q4_K  y = (d·sc)·q − dmin·m   d·sc, dmin·m and (d·sc)·q are exact in fp32 (≤ 21 significant
//         bits), so the one rounding is the subtraction, as in ggml. (d·sc)·q is formed exactly
//         as fma(2^23 + q, d·sc, −2^23·d·sc), where 2^23 + q comes from a byte permute.
//   q6_K  y = (d·sc)·(q − 32)   d·sc exact, the product rounded once, as in ggml.
//   q8_0  y = q·d              exact in fp32; the fp16 product (one rounding) therefore equals
//         fp16_rn(fp32 product), and is done two at a time in half2.
// Then fp32 → fp16 round-to-nearest-even (cvt.rn.f16x2.f32), as dequant_to_f16 does.
//
// Misalignment: q6_K super-blocks (210 bytes) and q8_0 blocks (34 bytes) sit at 2-byte granularity.
// A stage copies the 16-byte-aligned chunks around each needed byte range, so in shared memory the
// bytes sit at offset m = (global address % 16) inside their region; the tensor base is 16-byte
// aligned, so m depends only on the row index and the k-tile (misalign()).
#pragma once
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <cmath>
#include <cstdint>
#include <cstring>

#include "quant/fp16.h"
#include "quant/types.h"

// Everything below is __host__ __device__: the device intrinsics have exact host twins here, so
// tests/kernels/gemm can run these very decoders on the CPU against quant::dequantize_row.
#define PFX_GEMM_HD __host__ __device__ __forceinline__
// `#pragma unroll` for the device pass only (the host compiler warns about it).
#ifdef __CUDA_ARCH__
#define PFX_GEMM_UNROLL _Pragma("unroll")
#else
#define PFX_GEMM_UNROLL
#endif

namespace pfx::kernels::dev {

PFX_GEMM_HD uint32_t byte_perm(uint32_t x, uint32_t y, uint32_t s) {
#ifdef __CUDA_ARCH__
  return __byte_perm(x, y, s);
#else
  const uint64_t v = (static_cast<uint64_t>(y) << 32) | x;
  uint32_t r = 0;
  for (int i = 0; i < 4; ++i) r |= static_cast<uint32_t>((v >> (8 * ((s >> (4 * i)) & 7u))) & 0xFFu) << (8 * i);
  return r;
#endif
}
PFX_GEMM_HD uint32_t funnel_r(uint32_t lo, uint32_t hi, uint32_t sh) {
#ifdef __CUDA_ARCH__
  return __funnelshift_r(lo, hi, sh);
#else
  return static_cast<uint32_t>(((static_cast<uint64_t>(hi) << 32) | lo) >> (sh & 31u));
#endif
}
PFX_GEMM_HD float bits_float(uint32_t u) {
#ifdef __CUDA_ARCH__
  return __uint_as_float(u);
#else
  float f;
  std::memcpy(&f, &u, sizeof f);
  return f;
#endif
}
PFX_GEMM_HD bool signbit_set(float f) {
#ifdef __CUDA_ARCH__
  return (__float_as_uint(f) >> 31) != 0u;
#else
  return std::signbit(f);
#endif
}
// Single-rounding fp32 arithmetic that nvcc may not contract (host: one IEEE operation each; the
// tests build host code with -ffp-contract=off).
PFX_GEMM_HD float fmul_rn(float a, float b) {
#ifdef __CUDA_ARCH__
  return __fmul_rn(a, b);
#else
  return a * b;
#endif
}
PFX_GEMM_HD float fsub_rn(float a, float b) {
#ifdef __CUDA_ARCH__
  return __fsub_rn(a, b);
#else
  return a - b;
#endif
}
PFX_GEMM_HD float fma_rn(float a, float b, float c) {
#ifdef __CUDA_ARCH__
  return __fmaf_rn(a, b, c);
#else
  return std::fma(a, b, c);
#endif
}
PFX_GEMM_HD float half_bits_to_float(uint32_t bits16) {
#ifdef __CUDA_ARCH__
  return __half2float(__ushort_as_half(static_cast<unsigned short>(bits16 & 0xFFFFu)));
#else
  return quant::fp16_to_fp32(static_cast<uint16_t>(bits16 & 0xFFFFu));
#endif
}
// Two fp32 -> one register of two fp16, round to nearest even (cvt.rn.f16x2.f32); lo in bits 0-15.
PFX_GEMM_HD uint32_t pack_half2_rn(float lo, float hi) {
#ifdef __CUDA_ARCH__
  const __half2 h = __floats2half2_rn(lo, hi);
  return *reinterpret_cast<const uint32_t*>(&h);
#else
  return static_cast<uint32_t>(quant::fp32_to_fp16(lo)) | (static_cast<uint32_t>(quant::fp32_to_fp16(hi)) << 16);
#endif
}
// Per half: fp16_rn(a − b) and fp16_rn(a · b) (HSUB2 / HMUL2.RN); host: the fp32 result of two
// halves' difference/product as used here is exact, so rounding it once to fp16 is the same.
PFX_GEMM_HD uint32_t hsub2(uint32_t a, uint32_t b) {
#ifdef __CUDA_ARCH__
  const __half2 r = __hsub2(*reinterpret_cast<const __half2*>(&a), *reinterpret_cast<const __half2*>(&b));
  return *reinterpret_cast<const uint32_t*>(&r);
#else
  return pack_half2_rn(half_bits_to_float(a) - half_bits_to_float(b), half_bits_to_float(a >> 16) - half_bits_to_float(b >> 16));
#endif
}
PFX_GEMM_HD uint32_t hmul2_rn(uint32_t a, uint32_t b) {
#ifdef __CUDA_ARCH__
  const __half2 r = __hmul2_rn(*reinterpret_cast<const __half2*>(&a), *reinterpret_cast<const __half2*>(&b));
  return *reinterpret_cast<const uint32_t*>(&r);
#else
  return pack_half2_rn(half_bits_to_float(a) * half_bits_to_float(b), half_bits_to_float(a >> 16) * half_bits_to_float(b >> 16));
#endif
}

// 2^23 + b, where b is byte `which` (0..3) of `word`: the float whose mantissa is the byte.
PFX_GEMM_HD float byte_plus_2p23(uint32_t word, int which) {
  return bits_float(byte_perm(word, 0x4B000000u, 0x7440u | static_cast<uint32_t>(which)));
}

// Bytes of a 16-byte cp.async chunk at src that lie inside the tensor (ending at `end`): 16, or
// fewer for the chunk that straddles the end, or 0 past it.
PFX_GEMM_HD uint32_t chunk_bytes_inside(const uint8_t* src, const uint8_t* end) {
  const int64_t left = end - src;
  return left >= 16 ? 16u : (left > 0 ? static_cast<uint32_t>(left) : 0u);
}

// Eight bytes at an even (not necessarily 4-aligned) byte offset of a shared-memory row; reads
// three aligned words (the third only matters when off % 4 == 2) inside the row.
PFX_GEMM_HD void load8_even(const uint8_t* row, int off, uint32_t& lo, uint32_t& hi) {
  const uint32_t* w = reinterpret_cast<const uint32_t*>(row + (off & ~3));
  const uint32_t w0 = w[0], w1 = w[1], w2 = w[2];
  const uint32_t sh = static_cast<uint32_t>(off & 2) * 8u;
  lo = funnel_r(w0, w1, sh);
  hi = funnel_r(w1, w2, sh);
}

// ---- q4_K ---------------------------------------------------------------------------------
// k-tile kt of a row = quarter j = kt % 4 of super-block kt / 4: its 16-byte header (d, dmin,
// scales[12]) and the 32 bytes qs[32j .. 32j+31] (low nibbles: sub-block 2j, high: 2j+1).
// Shared row: [0,16) header, [16,48) qs. A task dequantizes one sub-block (32 weights).
struct WeightQ4K {
  static constexpr uint32_t kGgmlType = static_cast<uint32_t>(quant::Type::Q4_K);
  static constexpr int kBlockElems = 256;
  static constexpr int kBlockBytes = 144;
  static constexpr int kChunks = 3;        // 16-byte copies per row per k-tile
  static constexpr int kRowStride = 48;    // 16·odd bytes: 8 consecutive rows hit 8 distinct bank groups
  static constexpr int kTasksPerRow = 2;   // sub-blocks per k-tile
  static constexpr bool kMayOverrun = false;  // every chunk lies inside its super-block

  PFX_GEMM_HD static const uint8_t* chunk_src(const uint8_t* row, int kt, int c) {
    const uint8_t* blk = row + static_cast<int64_t>(kt >> 2) * kBlockBytes;
    return c == 0 ? blk : blk + 16 + 32 * (kt & 3) + 16 * (c - 1);
  }
  PFX_GEMM_HD static int misalign(int /*n*/, int /*rb16*/, int /*kt*/) { return 0; }

  // Sub-block s (0/1) of the quarter in `raw` -> 32 fp16 weights, as 16 half2 words in k order.
  PFX_GEMM_HD static void dequant32(const uint8_t* raw, int kt, int s, uint32_t (&out)[16]) {
    const uint4 hdr = *reinterpret_cast<const uint4*>(raw);
    const uint4 q0 = *reinterpret_cast<const uint4*>(raw + 16);
    const uint4 q1 = *reinterpret_cast<const uint4*>(raw + 32);
    float d1, m1;
    scale_min(hdr, 2 * (kt & 3) + s, d1, m1);
    const uint32_t words[8] = {q0.x, q0.y, q0.z, q0.w, q1.x, q1.y, q1.z, q1.w};
    const uint32_t shift = 4u * static_cast<uint32_t>(s);
PFX_GEMM_UNROLL
    for (int i = 0; i < 8; ++i) nibbles4(words[i] >> shift, d1, m1, out[2 * i], out[2 * i + 1]);
  }

  // Half hh (0/1) of that sub-block: 16 weights, as 8 half2 words (CTAs with more threads than
  // sub-blocks per k-tile split each one in two).
  PFX_GEMM_HD static void dequant16(const uint8_t* raw, int kt, int s, int hh, uint32_t (&out)[8]) {
    const uint4 hdr = *reinterpret_cast<const uint4*>(raw);
    const uint4 q = *reinterpret_cast<const uint4*>(raw + 16 + 16 * hh);
    float d1, m1;
    scale_min(hdr, 2 * (kt & 3) + s, d1, m1);
    const uint32_t words[4] = {q.x, q.y, q.z, q.w};
    const uint32_t shift = 4u * static_cast<uint32_t>(s);
PFX_GEMM_UNROLL
    for (int i = 0; i < 4; ++i) nibbles4(words[i] >> shift, d1, m1, out[2 * i], out[2 * i + 1]);
  }

  // d·sc and dmin·m of sub-block sbi (0..7) from the 16-byte header (ggml's get_scale_min_k4).
  // With i = sbi % 4 every byte it reads is byte i of one of the three scale words:
  // a = scales[i], b = scales[i+4], c = scales[i+8].
  PFX_GEMM_HD static void scale_min(const uint4& hdr, int sbi, float& d1, float& m1) {
    const uint32_t bs = 8u * static_cast<uint32_t>(sbi & 3);
    const uint32_t a = (hdr.y >> bs) & 0xFFu, b = (hdr.z >> bs) & 0xFFu, c = (hdr.w >> bs) & 0xFFu;
    uint32_t sc, mn;
    if (sbi < 4) {
      sc = a & 63u;
      mn = b & 63u;
    } else {
      sc = (c & 0xFu) | ((a >> 6) << 4);
      mn = (c >> 4) | ((b >> 6) << 4);
    }
    d1 = fmul_rn(half_bits_to_float(hdr.x), static_cast<float>(sc));
    m1 = fmul_rn(half_bits_to_float(hdr.x >> 16), static_cast<float>(mn));
  }

  // The low nibbles of the four bytes of v (already shifted) -> four fp16 weights. The fma forms
  // (d·sc)·q exactly but gives +0 for q = 0 where ggml's product is −0 when d·sc is negative; such
  // sub-blocks (never made by ggml's quantizers, which keep d >= 0) take the plain product.
  PFX_GEMM_HD static void nibbles4(uint32_t v, float d1, float m1, uint32_t& h01, uint32_t& h23) {
    v &= 0x0F0F0F0Fu;
    float y[4];
    if (signbit_set(d1)) {
PFX_GEMM_UNROLL
      for (int e = 0; e < 4; ++e) y[e] = fsub_rn(fmul_rn(d1, fsub_rn(byte_plus_2p23(v, e), 8388608.0f)), m1);
    } else {
      const float nd1 = fmul_rn(d1, -8388608.0f);  // exact: a power-of-two scaling
PFX_GEMM_UNROLL
      for (int e = 0; e < 4; ++e) y[e] = fsub_rn(fma_rn(byte_plus_2p23(v, e), d1, nd1), m1);  // (d·sc)·q exact
    }
    h01 = pack_half2_rn(y[0], y[1]);
    h23 = pack_half2_rn(y[2], y[3]);
  }
};

// ---- q6_K ---------------------------------------------------------------------------------
// k-tile kt = quarter j = kt % 4 of super-block kt / 4, inside half h = j / 2 (sub = j % 2):
// ggml groups r = 2·sub and 2·sub + 1 of that half, element l + 32·(r − 2·sub) of the tile being
//   q = ((ql[64h + l + 32·(r%2)] >> 4·(r/2)) & 15) | (((qh[32h + l] >> 2r) & 3) << 4),
//   y = (d · scales[8h + l/16 + 2r]) · (q − 32).
// Shared row: [0,80) the chunks around ql[64h..64h+63], [80,128) around qh[32h..32h+31],
// [128,160) around scales[0..15] and d (block bytes 192..209); data at offset m in each region.
// A task dequantizes 8 consecutive weights (k-chunk kc = 4·(r − 2·sub) + l/8).
struct WeightQ6K {
  static constexpr uint32_t kGgmlType = static_cast<uint32_t>(quant::Type::Q6_K);
  static constexpr int kBlockElems = 256;
  static constexpr int kBlockBytes = 210;
  static constexpr int kChunks = 10;
  static constexpr int kRowStride = 160;
  static constexpr int kTasksPerRow = 8;
  static constexpr bool kMayOverrun = true;  // the last chunk may pass the end of the last block

  PFX_GEMM_HD static const uint8_t* align16(const uint8_t* p) {
    return reinterpret_cast<const uint8_t*>(reinterpret_cast<uintptr_t>(p) & ~static_cast<uintptr_t>(15));
  }
  PFX_GEMM_HD static const uint8_t* chunk_src(const uint8_t* row, int kt, int c) {
    const uint8_t* blk = row + static_cast<int64_t>(kt >> 2) * kBlockBytes;
    const int h = (kt & 3) >> 1;
    if (c < 5) return align16(blk + 64 * h) + 16 * c;
    if (c < 8) return align16(blk + 128 + 32 * h) + 16 * (c - 5);
    return align16(blk + 192) + 16 * (c - 8);
  }
  PFX_GEMM_HD static int misalign(int n, int rb16, int kt) { return (n * rb16 + (kt >> 2) * kBlockBytes) & 15; }

  PFX_GEMM_HD static uint4 dequant8(const uint8_t* raw, int kt, int kc, int m) {
    const int sub = kt & 1;  // (kt % 4) % 2
    const int h = (kt & 3) >> 1;
    const int g = kc >> 2, p = kc & 3;
    const int r = 2 * sub + g;
    uint32_t l0, l1, h0, h1;
    load8_even(raw, m + 32 * g + 8 * p, l0, l1);
    load8_even(raw, 80 + m + 8 * p, h0, h1);
    const int8_t sc = static_cast<int8_t>(raw[128 + m + 8 * h + (p >> 1) + 2 * r]);
    const uint32_t dbits = *reinterpret_cast<const uint16_t*>(raw + 128 + m + 16);
    return bytes8(l0, l1, h0, h1, r, fmul_rn(half_bits_to_float(dbits), static_cast<float>(sc)));
  }

  // Eight weights of ggml group r (0..3) from their ql bytes (l0, l1), qh bytes (h0, h1) and d·sc.
  PFX_GEMM_HD static uint4 bytes8(uint32_t l0, uint32_t l1, uint32_t h0, uint32_t h1, int r, float ds) {
    const uint32_t lsh = 4u * static_cast<uint32_t>(r >> 1), hsh = 2u * static_cast<uint32_t>(r);
    const uint32_t q0 = ((l0 >> lsh) & 0x0F0F0F0Fu) | (((h0 >> hsh) & 0x03030303u) << 4);
    const uint32_t q1 = ((l1 >> lsh) & 0x0F0F0F0Fu) | (((h1 >> hsh) & 0x03030303u) << 4);
    float y[8];
PFX_GEMM_UNROLL
    for (int e = 0; e < 4; ++e) {
      y[e] = fmul_rn(ds, fsub_rn(byte_plus_2p23(q0, e), 8388640.0f));  // 2^23 + 32: q − 32 exactly
      y[e + 4] = fmul_rn(ds, fsub_rn(byte_plus_2p23(q1, e), 8388640.0f));
    }
    return make_uint4(pack_half2_rn(y[0], y[1]), pack_half2_rn(y[2], y[3]), pack_half2_rn(y[4], y[5]),
                      pack_half2_rn(y[6], y[7]));
  }
};

// ---- q8_0 ---------------------------------------------------------------------------------
// k-tile kt = blocks 2kt and 2kt+1 (68 bytes from row + 68kt): shared row holds the 6 chunks
// around them, data at offset m. A task dequantizes 8 consecutive weights.
struct WeightQ8_0 {
  static constexpr uint32_t kGgmlType = static_cast<uint32_t>(quant::Type::Q8_0);
  static constexpr int kBlockElems = 32;
  static constexpr int kBlockBytes = 34;
  static constexpr int kChunks = 6;
  static constexpr int kRowStride = 96;
  static constexpr int kTasksPerRow = 8;
  static constexpr bool kMayOverrun = true;

  PFX_GEMM_HD static const uint8_t* chunk_src(const uint8_t* row, int kt, int c) {
    const uint8_t* start = row + static_cast<int64_t>(kt) * (2 * kBlockBytes);
    return reinterpret_cast<const uint8_t*>(reinterpret_cast<uintptr_t>(start) & ~static_cast<uintptr_t>(15)) + 16 * c;
  }
  PFX_GEMM_HD static int misalign(int n, int rb16, int kt) { return (n * rb16 + kt * 2 * kBlockBytes) & 15; }

  // Eight int8 (two words) times the fp16 scale d, exactly rounded once to fp16.
  PFX_GEMM_HD static uint4 scale8(uint32_t w0, uint32_t w1, uint32_t dbits) {
    const uint32_t d2 = (dbits & 0xFFFFu) * 0x10001u;  // (d, d)
    const uint32_t bias = 0x64806480u;                // (1152, 1152) = 1024 + 128
    const uint32_t u0 = w0 ^ 0x80808080u, u1 = w1 ^ 0x80808080u;  // q + 128 as unsigned bytes
    // 0x64XX is the half 1024 + XX; minus 1152 gives q exactly.
    const uint32_t p[4] = {byte_perm(u0, 0x64646464u, 0x4140u), byte_perm(u0, 0x64646464u, 0x4342u),
                           byte_perm(u1, 0x64646464u, 0x4140u), byte_perm(u1, 0x64646464u, 0x4342u)};
    uint32_t o[4];
PFX_GEMM_UNROLL
    for (int i = 0; i < 4; ++i) o[i] = hmul2_rn(hsub2(p[i], bias), d2);
    return make_uint4(o[0], o[1], o[2], o[3]);
  }

  PFX_GEMM_HD static uint4 dequant8(const uint8_t* raw, int /*kt*/, int kc, int m) {
    const int b = kc >> 2, j0 = 8 * (kc & 3);
    const int boff = m + b * kBlockBytes;
    uint32_t w0, w1;
    load8_even(raw, boff + 2 + j0, w0, w1);
    const uint32_t dbits = *reinterpret_cast<const uint16_t*>(raw + boff);
    return scale8(w0, w1, dbits);
  }
};

// ---- f16 -----------------------------------------------------------------------------------
// Already fp16: a k-tile of a row is 128 contiguous, 16-byte-aligned bytes (K % 64 == 0), and a
// task copies 8 weights. The same pipeline with no decode arithmetic: the benchmark's measure of
// what the dequantization costs the quantized types, and the fast path for f16 GGUF weights.
struct WeightF16 {
  static constexpr uint32_t kGgmlType = static_cast<uint32_t>(quant::Type::F16);
  static constexpr int kBlockElems = 1;
  static constexpr int kBlockBytes = 2;
  static constexpr int kChunks = 8;
  static constexpr int kRowStride = 128;
  static constexpr int kTasksPerRow = 8;
  static constexpr bool kMayOverrun = false;

  PFX_GEMM_HD static const uint8_t* chunk_src(const uint8_t* row, int kt, int c) {
    return row + static_cast<int64_t>(kt) * 128 + 16 * c;
  }
  PFX_GEMM_HD static int misalign(int /*n*/, int /*rb16*/, int /*kt*/) { return 0; }
  PFX_GEMM_HD static uint4 dequant8(const uint8_t* raw, int /*kt*/, int kc, int /*m*/) {
    return *reinterpret_cast<const uint4*>(raw + 16 * kc);
  }
};

// ---- straight from global memory ---------------------------------------------------------
template <class T>
PFX_GEMM_HD T ldg_ro(const T* p) {
#ifdef __CUDA_ARCH__
  return __ldg(p);
#else
  return *p;
#endif
}

// Eight bytes at an even global address, as two words (four 16-bit loads: 2-byte alignment is all
// q6_K and q8_0 guarantee, and nothing outside the bytes is touched).
PFX_GEMM_HD void ldg8_even(const uint8_t* p, uint32_t& lo, uint32_t& hi) {
  const uint16_t* q = reinterpret_cast<const uint16_t*>(p);
  lo = static_cast<uint32_t>(ldg_ro(q)) | (static_cast<uint32_t>(ldg_ro(q + 1)) << 16);
  hi = static_cast<uint32_t>(ldg_ro(q + 2)) | (static_cast<uint32_t>(ldg_ro(q + 3)) << 16);
}

// Weights k0 .. k0+7 (k0 % 8 == 0) of a row in global memory, as four half2 words: the decoders
// above on bytes read straight from global memory (the decode mat-vec and the benchmark's
// dequantize-to-fp16 kernel).
template <class W>
PFX_GEMM_HD uint4 decode8_global(const uint8_t* row, int k0);

template <>
PFX_GEMM_HD uint4 decode8_global<WeightQ4K>(const uint8_t* row, int k0) {
  const uint8_t* blk = row + static_cast<int64_t>(k0 >> 8) * WeightQ4K::kBlockBytes;
  const int i = k0 & 255, j = i >> 6, s = (i >> 5) & 1, l0 = i & 31;
  const uint4 hdr = ldg_ro(reinterpret_cast<const uint4*>(blk));
  const uint2 q = ldg_ro(reinterpret_cast<const uint2*>(blk + 16 + 32 * j + l0));
  float d1, m1;
  WeightQ4K::scale_min(hdr, 2 * j + s, d1, m1);
  uint4 o;
  WeightQ4K::nibbles4(q.x >> (4 * s), d1, m1, o.x, o.y);
  WeightQ4K::nibbles4(q.y >> (4 * s), d1, m1, o.z, o.w);
  return o;
}

template <>
PFX_GEMM_HD uint4 decode8_global<WeightQ6K>(const uint8_t* row, int k0) {
  const uint8_t* blk = row + static_cast<int64_t>(k0 >> 8) * WeightQ6K::kBlockBytes;
  const int i = k0 & 255, h = i >> 7, e = i & 127, r = e >> 5, l0 = e & 31;
  uint32_t l_0, l_1, h_0, h_1;
  ldg8_even(blk + 64 * h + l0 + 32 * (r & 1), l_0, l_1);
  ldg8_even(blk + 128 + 32 * h + l0, h_0, h_1);
  const int8_t sc = static_cast<int8_t>(ldg_ro(blk + 192 + 8 * h + (l0 >> 4) + 2 * r));
  const uint32_t dbits = ldg_ro(reinterpret_cast<const uint16_t*>(blk + 208));
  return WeightQ6K::bytes8(l_0, l_1, h_0, h_1, r, fmul_rn(half_bits_to_float(dbits), static_cast<float>(sc)));
}

template <>
PFX_GEMM_HD uint4 decode8_global<WeightQ8_0>(const uint8_t* row, int k0) {
  const uint8_t* blk = row + static_cast<int64_t>(k0 >> 5) * WeightQ8_0::kBlockBytes;
  uint32_t w0, w1;
  ldg8_even(blk + 2 + (k0 & 31), w0, w1);
  return WeightQ8_0::scale8(w0, w1, ldg_ro(reinterpret_cast<const uint16_t*>(blk)));
}

template <>
PFX_GEMM_HD uint4 decode8_global<WeightF16>(const uint8_t* row, int k0) {
  return ldg_ro(reinterpret_cast<const uint4*>(row + 2 * static_cast<int64_t>(k0)));
}

}  // namespace pfx::kernels::dev

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

#include <cstdint>

namespace pfx::kern::gemm_dev {

// 2^23 + b, where b is byte `which` (0..3) of `word`: the float whose mantissa is the byte.
__device__ __forceinline__ float byte_plus_2p23(uint32_t word, int which) {
  return __uint_as_float(__byte_perm(word, 0x4B000000u, 0x7440u | static_cast<uint32_t>(which)));
}

__device__ __forceinline__ uint32_t pack_half2_rn(float lo, float hi) {
  const __half2 h = __floats2half2_rn(lo, hi);  // cvt.rn.f16x2.f32: lo in the low 16 bits
  return *reinterpret_cast<const uint32_t*>(&h);
}

__device__ __forceinline__ float half_bits_to_float(uint32_t bits16) {
  return __half2float(__ushort_as_half(static_cast<unsigned short>(bits16 & 0xFFFFu)));
}

// Eight bytes at an even (not necessarily 4-aligned) byte offset of a shared-memory row; reads
// three aligned words (the third only matters when off % 4 == 2) inside the row.
__device__ __forceinline__ void load8_even(const uint8_t* row, int off, uint32_t& lo, uint32_t& hi) {
  const uint32_t* w = reinterpret_cast<const uint32_t*>(row + (off & ~3));
  const uint32_t w0 = w[0], w1 = w[1], w2 = w[2];
  const uint32_t sh = static_cast<uint32_t>(off & 2) * 8u;
  lo = __funnelshift_r(w0, w1, sh);
  hi = __funnelshift_r(w1, w2, sh);
}

// ---- q4_K ---------------------------------------------------------------------------------
// k-tile kt of a row = quarter j = kt % 4 of super-block kt / 4: its 16-byte header (d, dmin,
// scales[12]) and the 32 bytes qs[32j .. 32j+31] (low nibbles: sub-block 2j, high: 2j+1).
// Shared row: [0,16) header, [16,48) qs. A task dequantizes one sub-block (32 weights).
struct WeightQ4K {
  static constexpr uint32_t kGgmlType = 12;
  static constexpr int kBlockElems = 256;
  static constexpr int kBlockBytes = 144;
  static constexpr int kChunks = 3;        // 16-byte copies per row per k-tile
  static constexpr int kRowStride = 48;    // 16·odd bytes: 8 consecutive rows hit 8 distinct bank groups
  static constexpr int kTasksPerRow = 2;   // sub-blocks per k-tile
  static constexpr bool kMayOverrun = false;  // every chunk lies inside its super-block

  __device__ static const uint8_t* chunk_src(const uint8_t* row, int kt, int c) {
    const uint8_t* blk = row + static_cast<int64_t>(kt >> 2) * kBlockBytes;
    return c == 0 ? blk : blk + 16 + 32 * (kt & 3) + 16 * (c - 1);
  }
  __device__ static int misalign(int /*n*/, int /*rb16*/, int /*kt*/) { return 0; }

  // Sub-block s (0/1) of the quarter in `raw` -> 32 fp16 weights, as 16 half2 words in k order.
  __device__ static void dequant32(const uint8_t* raw, int kt, int s, uint32_t (&out)[16]) {
    const uint4 hdr = *reinterpret_cast<const uint4*>(raw);
    const uint4 q0 = *reinterpret_cast<const uint4*>(raw + 16);
    const uint4 q1 = *reinterpret_cast<const uint4*>(raw + 32);
    // get_scale_min_k4(sbi): with i = sbi % 4, every byte it reads is byte i of one of the
    // three scale words: a = scales[i], b = scales[i+4], c = scales[i+8].
    const int sbi = 2 * (kt & 3) + s;
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
    const float d1 = __fmul_rn(half_bits_to_float(hdr.x), static_cast<float>(sc));
    const float m1 = __fmul_rn(half_bits_to_float(hdr.x >> 16), static_cast<float>(mn));
    const float nd1 = d1 * -8388608.0f;  // exact: a power-of-two scaling
    const uint32_t words[8] = {q0.x, q0.y, q0.z, q0.w, q1.x, q1.y, q1.z, q1.w};
    const uint32_t shift = 4u * static_cast<uint32_t>(s);
#pragma unroll
    for (int i = 0; i < 8; ++i) {
      const uint32_t v = (words[i] >> shift) & 0x0F0F0F0Fu;
      float y[4];
#pragma unroll
      for (int e = 0; e < 4; ++e) {
        const float dq = __fmaf_rn(byte_plus_2p23(v, e), d1, nd1);  // (d·sc)·q, exact
        y[e] = __fsub_rn(dq, m1);
      }
      out[2 * i] = pack_half2_rn(y[0], y[1]);
      out[2 * i + 1] = pack_half2_rn(y[2], y[3]);
    }
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
  static constexpr uint32_t kGgmlType = 14;
  static constexpr int kBlockElems = 256;
  static constexpr int kBlockBytes = 210;
  static constexpr int kChunks = 10;
  static constexpr int kRowStride = 160;
  static constexpr int kTasksPerRow = 8;
  static constexpr bool kMayOverrun = true;  // the last chunk may pass the end of the last block

  __device__ static const uint8_t* align16(const uint8_t* p) {
    return reinterpret_cast<const uint8_t*>(reinterpret_cast<uintptr_t>(p) & ~static_cast<uintptr_t>(15));
  }
  __device__ static const uint8_t* chunk_src(const uint8_t* row, int kt, int c) {
    const uint8_t* blk = row + static_cast<int64_t>(kt >> 2) * kBlockBytes;
    const int h = (kt & 3) >> 1;
    if (c < 5) return align16(blk + 64 * h) + 16 * c;
    if (c < 8) return align16(blk + 128 + 32 * h) + 16 * (c - 5);
    return align16(blk + 192) + 16 * (c - 8);
  }
  __device__ static int misalign(int n, int rb16, int kt) { return (n * rb16 + (kt >> 2) * kBlockBytes) & 15; }

  __device__ static uint4 dequant8(const uint8_t* raw, int kt, int kc, int m) {
    const int sub = kt & 1 ? 1 : 0;  // (kt % 4) % 2
    const int h = (kt & 3) >> 1;
    const int g = kc >> 2, p = kc & 3;
    const int r = 2 * sub + g;
    uint32_t l0, l1, h0, h1;
    load8_even(raw, m + 32 * g + 8 * p, l0, l1);
    load8_even(raw, 80 + m + 8 * p, h0, h1);
    const int8_t sc = static_cast<int8_t>(raw[128 + m + 8 * h + (p >> 1) + 2 * r]);
    const uint32_t dbits = *reinterpret_cast<const uint16_t*>(raw + 128 + m + 16);
    const float ds = __fmul_rn(half_bits_to_float(dbits), static_cast<float>(sc));
    const uint32_t lsh = 4u * static_cast<uint32_t>(sub), hsh = 2u * static_cast<uint32_t>(r);
    const uint32_t q0 = ((l0 >> lsh) & 0x0F0F0F0Fu) | (((h0 >> hsh) & 0x03030303u) << 4);
    const uint32_t q1 = ((l1 >> lsh) & 0x0F0F0F0Fu) | (((h1 >> hsh) & 0x03030303u) << 4);
    float y[8];
#pragma unroll
    for (int e = 0; e < 4; ++e) {
      y[e] = __fmul_rn(ds, __fsub_rn(byte_plus_2p23(q0, e), 8388640.0f));  // 2^23 + 32: q − 32 exactly
      y[e + 4] = __fmul_rn(ds, __fsub_rn(byte_plus_2p23(q1, e), 8388640.0f));
    }
    return make_uint4(pack_half2_rn(y[0], y[1]), pack_half2_rn(y[2], y[3]), pack_half2_rn(y[4], y[5]),
                      pack_half2_rn(y[6], y[7]));
  }
};

// ---- q8_0 ---------------------------------------------------------------------------------
// k-tile kt = blocks 2kt and 2kt+1 (68 bytes from row + 68kt): shared row holds the 6 chunks
// around them, data at offset m. A task dequantizes 8 consecutive weights.
struct WeightQ8_0 {
  static constexpr uint32_t kGgmlType = 8;
  static constexpr int kBlockElems = 32;
  static constexpr int kBlockBytes = 34;
  static constexpr int kChunks = 6;
  static constexpr int kRowStride = 96;
  static constexpr int kTasksPerRow = 8;
  static constexpr bool kMayOverrun = true;

  __device__ static const uint8_t* chunk_src(const uint8_t* row, int kt, int c) {
    const uint8_t* start = row + static_cast<int64_t>(kt) * (2 * kBlockBytes);
    return reinterpret_cast<const uint8_t*>(reinterpret_cast<uintptr_t>(start) & ~static_cast<uintptr_t>(15)) + 16 * c;
  }
  __device__ static int misalign(int n, int rb16, int kt) { return (n * rb16 + kt * 2 * kBlockBytes) & 15; }

  // Eight int8 (two words) times the fp16 scale d, exactly rounded once to fp16.
  __device__ static uint4 scale8(uint32_t w0, uint32_t w1, uint32_t dbits) {
    const __half2 d2 = __halves2half2(__ushort_as_half(static_cast<unsigned short>(dbits)),
                                      __ushort_as_half(static_cast<unsigned short>(dbits)));
    const __half2 bias = __floats2half2_rn(1152.0f, 1152.0f);  // 1024 + 128
    const uint32_t u0 = w0 ^ 0x80808080u, u1 = w1 ^ 0x80808080u;  // q + 128 as unsigned bytes
    // 0x64XX is the half 1024 + XX; minus 1152 gives q exactly.
    const uint32_t p[4] = {__byte_perm(u0, 0x64646464u, 0x4140u), __byte_perm(u0, 0x64646464u, 0x4342u),
                           __byte_perm(u1, 0x64646464u, 0x4140u), __byte_perm(u1, 0x64646464u, 0x4342u)};
    uint32_t o[4];
#pragma unroll
    for (int i = 0; i < 4; ++i) {
      const __half2 q = __hsub2(*reinterpret_cast<const __half2*>(&p[i]), bias);
      const __half2 y = __hmul2_rn(q, d2);
      o[i] = *reinterpret_cast<const uint32_t*>(&y);
    }
    return make_uint4(o[0], o[1], o[2], o[3]);
  }

  __device__ static uint4 dequant8(const uint8_t* raw, int /*kt*/, int kc, int m) {
    const int b = kc >> 2, j0 = 8 * (kc & 3);
    const int boff = m + b * kBlockBytes;
    uint32_t w0, w1;
    load8_even(raw, boff + 2 + j0, w0, w1);
    const uint32_t dbits = *reinterpret_cast<const uint16_t*>(raw + boff);
    return scale8(w0, w1, dbits);
  }
};

}  // namespace pfx::kern::gemm_dev

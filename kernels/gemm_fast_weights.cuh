// Weight formats of the fast GEMM: how one 64-element k-tile of a q4_K / q6_K / q8_0 row is
// staged from global memory (16-byte cp.async chunks, raw bytes), and how the staged bytes become
// fp16 weights that are bit-identical to fp16_rn(ggml's fp32 dequant value).
//
// Exactness (the arithmetic contract of the fast path, docs/gemm-fast.md): every product and difference is rounded
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
#include <cstdint>

#include "kernels/hd_ops.cuh"
#include "quant/types.h"

namespace pfx::kernels::dev {

// What the staged pipeline needs of a weight format: its ggml type and block shape (elements,
// bytes), kChunks 16-byte copies per row per k-tile into a shared row of kRowStride bytes,
// kTasksPerRow dequantization tasks per row, and whether a copy may pass the tensor's end.
template <quant::Type kType, int kElems, int kBytes, int kChunksPerTile, int kSharedRowStride, int kTasks,
          bool kCopiesMayOverrun>
struct WeightFormat {
  static constexpr uint32_t kGgmlType = static_cast<uint32_t>(kType);
  static constexpr int kBlockElems = kElems;
  static constexpr int kBlockBytes = kBytes;
  static constexpr int kChunks = kChunksPerTile;
  static constexpr int kRowStride = kSharedRowStride;
  static constexpr int kTasksPerRow = kTasks;
  static constexpr bool kMayOverrun = kCopiesMayOverrun;
};

// 2^23 + b, where b is byte `which` (0..3) of `word`: the float whose mantissa is the byte.
PFX_HD float byte_plus_2p23(uint32_t word, int which) {
  return bits_float(byte_perm(word, 0x4B000000u, 0x7440u | static_cast<uint32_t>(which)));
}

// Byte `which` (0..3) of `word` as a float, exactly (2^23 + byte, minus 2^23).
PFX_HD float byte_float(uint32_t word, int which) { return fsub_rn(byte_plus_2p23(word, which), 8388608.0f); }

// Byte `which` (0..3) of `word` in bits 16..23, every other bit zero: the float byte·2^-133 exactly
// (a bit pattern below 2^24 is its value times 2^-149, whether subnormal or not).
PFX_HD float placed_byte(uint32_t word, int which) {
  return bits_float(byte_perm(word, 0u, 0x4044u | (static_cast<uint32_t>(which) << 8)));
}

// Four weights from the bytes of v read in place (placed_byte): y_e = RN(byte_e·2^-133·scale + offset),
// one FMA each, as two half2 words. With the scale carrying the power of two that undoes the
// byte's placement, it is the one-FMA decode of q4_K (offset −dmin·m) and q6_K (offset −32·d·sc)
// in the decode GEMV and the fused GEMM.
PFX_HD void placed_fma4(uint32_t v, float scale, float offset, uint32_t& h01, uint32_t& h23) {
  float y[4];
PFX_HD_UNROLL
  for (int e = 0; e < 4; ++e) y[e] = fma_rn(placed_byte(v, e), scale, offset);
  h01 = pack_half2_rn(y[0], y[1]);
  h23 = pack_half2_rn(y[2], y[3]);
}

// Where the one-FMA decode's scaled scale is finite, from a block's fp16 d (bits): q4_K |d| <= 2^-7
// (d·sc·2^129 with sc <= 63), q6_K |d| < 2^-10 (d·sc·2^131 with |sc| <= 128); NaN and infinities
// outside. llama.cpp's quantizers give such d for weights up to about 7 (q4_K) and 4 (q6_K).
PFX_HD bool placed_q4k_scale_ok(uint32_t d_bits) { return (d_bits & 0x7FFFu) <= 0x2000u; }
PFX_HD bool placed_q6k_scale_ok(uint32_t d_bits) { return (d_bits & 0x7FFFu) < 0x1400u; }

// Bytes of a 16-byte cp.async chunk at src that lie inside the tensor (ending at `end`): 16, or
// fewer for the chunk that straddles the end, or 0 past it.
PFX_HD uint32_t chunk_bytes_inside(const uint8_t* src, const uint8_t* end) {
  const int64_t left = end - src;
  return left >= 16 ? 16u : (left > 0 ? static_cast<uint32_t>(left) : 0u);
}

// Eight bytes at an even (not necessarily 4-aligned) byte offset of a shared-memory row; reads
// three aligned words (the third only matters when off % 4 == 2) inside the row.
PFX_HD void load8_even(const uint8_t* row, int off, uint32_t& lo, uint32_t& hi) {
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
// Row stride 48 = 16·odd bytes: 8 consecutive rows hit 8 distinct bank groups; tasks = the 2
// sub-blocks of a k-tile; every chunk lies inside its super-block.
struct WeightQ4K : WeightFormat<quant::Type::Q4_K, 256, 144, 3, 48, 2, false> {

  PFX_HD static const uint8_t* chunk_src(const uint8_t* row, int kt, int c) {
    const uint8_t* blk = row + static_cast<int64_t>(kt >> 2) * kBlockBytes;
    return c == 0 ? blk : blk + 16 + 32 * (kt & 3) + 16 * (c - 1);
  }
  PFX_HD static int misalign(int /*n*/, int /*rb16*/, int /*kt*/) { return 0; }

  // Sub-block s (0/1) of the quarter in `raw` -> 32 fp16 weights, as 16 half2 words in k order.
  PFX_HD static void dequant32(const uint8_t* raw, int kt, int s, uint32_t (&out)[16]) {
    const uint4 hdr = *reinterpret_cast<const uint4*>(raw);
    const uint4 q0 = *reinterpret_cast<const uint4*>(raw + 16);
    const uint4 q1 = *reinterpret_cast<const uint4*>(raw + 32);
    float d1, m1;
    scale_min(hdr, 2 * (kt & 3) + s, d1, m1);
    const uint32_t words[8] = {q0.x, q0.y, q0.z, q0.w, q1.x, q1.y, q1.z, q1.w};
    const uint32_t shift = 4u * static_cast<uint32_t>(s);
PFX_HD_UNROLL
    for (int i = 0; i < 8; ++i) nibbles4(words[i] >> shift, d1, m1, out[2 * i], out[2 * i + 1]);
  }

  // Half hh (0/1) of that sub-block: 16 weights, as 8 half2 words (CTAs with more threads than
  // sub-blocks per k-tile split each one in two).
  PFX_HD static void dequant16(const uint8_t* raw, int kt, int s, int hh, uint32_t (&out)[8]) {
    const uint4 hdr = *reinterpret_cast<const uint4*>(raw);
    const uint4 q = *reinterpret_cast<const uint4*>(raw + 16 + 16 * hh);
    float d1, m1;
    scale_min(hdr, 2 * (kt & 3) + s, d1, m1);
    const uint32_t words[4] = {q.x, q.y, q.z, q.w};
    const uint32_t shift = 4u * static_cast<uint32_t>(s);
PFX_HD_UNROLL
    for (int i = 0; i < 4; ++i) nibbles4(words[i] >> shift, d1, m1, out[2 * i], out[2 * i + 1]);
  }

  // d·sc and dmin·m of sub-block sbi (0..7) from the 16-byte header (ggml's get_scale_min_k4).
  // With i = sbi % 4 every byte it reads is byte i of one of the three scale words:
  // a = scales[i], b = scales[i+4], c = scales[i+8].
  PFX_HD static void scale_min(const uint4& hdr, int sbi, float& d1, float& m1) {
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
  PFX_HD static void nibbles4(uint32_t v, float d1, float m1, uint32_t& h01, uint32_t& h23) {
    v &= 0x0F0F0F0Fu;
    float y[4];
    if (signbit_set(d1)) {
PFX_HD_UNROLL
      for (int e = 0; e < 4; ++e) y[e] = fsub_rn(fmul_rn(d1, byte_float(v, e)), m1);
    } else {
      const float nd1 = fmul_rn(d1, -8388608.0f);  // exact: a power-of-two scaling
PFX_HD_UNROLL
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
// The last chunk may pass the end of the last block.
struct WeightQ6K : WeightFormat<quant::Type::Q6_K, 256, 210, 10, 160, 8, true> {

  PFX_HD static const uint8_t* chunk_src(const uint8_t* row, int kt, int c) {
    const uint8_t* blk = row + static_cast<int64_t>(kt >> 2) * kBlockBytes;
    const int h = (kt & 3) >> 1;
    if (c < 5) return floor16(blk + 64 * h) + 16 * c;
    if (c < 8) return floor16(blk + 128 + 32 * h) + 16 * (c - 5);
    return floor16(blk + 192) + 16 * (c - 8);
  }
  PFX_HD static int misalign(int n, int rb16, int kt) { return (n * rb16 + (kt >> 2) * kBlockBytes) & 15; }

  PFX_HD static uint4 dequant8(const uint8_t* raw, int kt, int kc, int m) {
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
  PFX_HD static uint4 bytes8(uint32_t l0, uint32_t l1, uint32_t h0, uint32_t h1, int r, float ds) {
    const uint32_t lsh = 4u * static_cast<uint32_t>(r >> 1), hsh = 2u * static_cast<uint32_t>(r);
    const uint32_t q0 = ((l0 >> lsh) & 0x0F0F0F0Fu) | (((h0 >> hsh) & 0x03030303u) << 4);
    const uint32_t q1 = ((l1 >> lsh) & 0x0F0F0F0Fu) | (((h1 >> hsh) & 0x03030303u) << 4);
    float y[8];
PFX_HD_UNROLL
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
struct WeightQ8_0 : WeightFormat<quant::Type::Q8_0, 32, 34, 6, 96, 8, true> {

  PFX_HD static const uint8_t* chunk_src(const uint8_t* row, int kt, int c) {
    const uint8_t* start = row + static_cast<int64_t>(kt) * (2 * kBlockBytes);
    return floor16(start) + 16 * c;
  }
  PFX_HD static int misalign(int n, int rb16, int kt) { return (n * rb16 + kt * 2 * kBlockBytes) & 15; }

  // Eight int8 (two words) times the fp16 scale d, exactly rounded once to fp16.
  PFX_HD static uint4 scale8(uint32_t w0, uint32_t w1, uint32_t dbits) {
    const uint32_t d2 = (dbits & 0xFFFFu) * 0x10001u;  // (d, d)
    const uint32_t bias = 0x64806480u;                // (1152, 1152) = 1024 + 128
    const uint32_t u0 = w0 ^ 0x80808080u, u1 = w1 ^ 0x80808080u;  // q + 128 as unsigned bytes
    // 0x64XX is the half 1024 + XX; minus 1152 gives q exactly.
    const uint32_t p[4] = {byte_perm(u0, 0x64646464u, 0x4140u), byte_perm(u0, 0x64646464u, 0x4342u),
                           byte_perm(u1, 0x64646464u, 0x4140u), byte_perm(u1, 0x64646464u, 0x4342u)};
    uint32_t o[4];
PFX_HD_UNROLL
    for (int i = 0; i < 4; ++i) o[i] = hmul2_rn(hsub2(p[i], bias), d2);
    return make_uint4(o[0], o[1], o[2], o[3]);
  }

  PFX_HD static uint4 dequant8(const uint8_t* raw, int /*kt*/, int kc, int m) {
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
struct WeightF16 : WeightFormat<quant::Type::F16, 1, 2, 8, 128, 8, false> {

  PFX_HD static const uint8_t* chunk_src(const uint8_t* row, int kt, int c) {
    return row + static_cast<int64_t>(kt) * 128 + 16 * c;
  }
  PFX_HD static int misalign(int /*n*/, int /*rb16*/, int /*kt*/) { return 0; }
  PFX_HD static uint4 dequant8(const uint8_t* raw, int /*kt*/, int kc, int /*m*/) {
    return *reinterpret_cast<const uint4*>(raw + 16 * kc);
  }
};

// ---- straight from global memory ---------------------------------------------------------
// Eight bytes at an even global address, as two words (four 16-bit loads: 2-byte alignment is all
// q6_K and q8_0 guarantee, and nothing outside the bytes is touched).
PFX_HD void ldg8_even(const uint8_t* p, uint32_t& lo, uint32_t& hi) {
  const uint16_t* q = reinterpret_cast<const uint16_t*>(p);
  lo = static_cast<uint32_t>(ldg_ro(q)) | (static_cast<uint32_t>(ldg_ro(q + 1)) << 16);
  hi = static_cast<uint32_t>(ldg_ro(q + 2)) | (static_cast<uint32_t>(ldg_ro(q + 3)) << 16);
}

// Weights k0 .. k0+7 (k0 % 8 == 0) of a row in global memory, as four half2 words: the decoders
// above on bytes read straight from global memory (the decode mat-vec and the benchmark's
// dequantize-to-fp16 kernel).
template <class W>
PFX_HD uint4 decode8_global(const uint8_t* row, int k0);

template <>
PFX_HD uint4 decode8_global<WeightQ4K>(const uint8_t* row, int k0) {
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
PFX_HD uint4 decode8_global<WeightQ6K>(const uint8_t* row, int k0) {
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
PFX_HD uint4 decode8_global<WeightQ8_0>(const uint8_t* row, int k0) {
  const uint8_t* blk = row + static_cast<int64_t>(k0 >> 5) * WeightQ8_0::kBlockBytes;
  uint32_t w0, w1;
  ldg8_even(blk + 2 + (k0 & 31), w0, w1);
  return WeightQ8_0::scale8(w0, w1, ldg_ro(reinterpret_cast<const uint16_t*>(blk)));
}

template <>
PFX_HD uint4 decode8_global<WeightF16>(const uint8_t* row, int k0) {
  return ldg_ro(reinterpret_cast<const uint4*>(row + 2 * static_cast<int64_t>(k0)));
}

}  // namespace pfx::kernels::dev

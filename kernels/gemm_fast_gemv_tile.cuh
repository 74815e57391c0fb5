// Building blocks of the decode mat-vec (gemv_fast, kernels/gemm_fast_gemv.cu): how one warp stages
// a "unit" — 16 weight rows × 256 k of raw quantized bytes, plus the activations those k meet —
// into shared memory with 16-byte copies, and how each lane turns the staged bytes into exact fp16
// weights laid out as A fragments of mma.sync m16n8k16 (weights = A, 16 rows; activations = B, the
// 8 columns being the tokens). Everything is __host__ __device__: the CPU tests run these very
// functions (copies and MMAs emulated) against quant::dequantize_row and a float64 product.
//
// The k order inside an MMA is free (the sum is over all 16 k; any fixed order is a fixed
// reduction order), so each type picks a lane -> k map that suits its block layout: lane (g, tq)
// (g = lane / 4, tq = lane % 4) owns rows g and g + 8 and, for pair p (two MMAs), the 8 consecutive
// k0(p, tq) .. +7 of the unit. MMA 2p takes k0 .. k0+3 (A regs: {row g: k0,k0+1}, {row g+8: same},
// {row g: k0+2,k0+3}, {row g+8: same}; B regs: x[g][k0..k0+1], x[g][k0+2..k0+3]), MMA 2p+1 takes
// k0+4 .. k0+7. Over a unit's 8 pairs and 4 lanes tq, k0(p, tq) + 0..7 covers 0..255 once.
//
// Activations: for pair p, token t < kT and lane tq, the 16 bytes x[t][256u + k0(p, tq) ..] sit at
// chunk (p·kT + t)·4 + tq of the stage's x area, so a lane's B registers of both MMAs of a pair are
// one conflict-free 16-byte shared load.
//
// Weight bytes of a row's unit are copied as the 16-byte-aligned chunks around them; q6_K super-
// blocks (210 B) and q8_0 blocks (34 B) are 2-byte aligned, so the data then start at byte
// m = misalign() of the staged row. Rows past N re-read row N-1 (their results are never stored);
// chunks past the tensor's end are clamped (zero-filled), as in the GEMM.
#pragma once
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <cstdint>

#include "kernels/gemm_fast_weights.cuh"

namespace pfx::kernels::dev {

inline constexpr int kGemvRows = 16;    // weight rows per warp: the M of m16n8k16
inline constexpr int kGemvUnitK = 256;  // k per unit (a q4_K / q6_K super-block)
inline constexpr int kGemvPairs = 8;    // pairs of MMAs (2 × 16 k) per unit

// What the staging reads: the weight rows and the activations.
struct GemvSrc {
  const uint8_t* w;      // row n starts at w + n·row_bytes; 16-byte aligned
  const uint8_t* w_end;  // one past the tensor's last byte
  int64_t row_bytes;
  const uint16_t* x;  // [T, K] fp16, 16-byte aligned
  int N, K;
};

PFX_HD const uint8_t* gemv_row(const GemvSrc& s, int n) {
  return s.w + static_cast<int64_t>(n < s.N ? n : s.N - 1) * s.row_bytes;
}

// Sixteen bytes at an even offset of a shared-memory row, as four words: five aligned 4-byte loads
// (all inside the row's staged bytes for the offsets used here) and four funnel shifts.
PFX_HD void load16_even(const uint8_t* row, int off, uint32_t (&out)[4]) {
  const uint32_t* w = reinterpret_cast<const uint32_t*>(row + (off & ~3));
  const uint32_t sh = static_cast<uint32_t>(off & 2) * 8u;
  uint32_t v[5];
PFX_HD_UNROLL
  for (int i = 0; i < 5; ++i) v[i] = w[i];
PFX_HD_UNROLL
  for (int i = 0; i < 4; ++i) out[i] = funnel_r(v[i], v[i + 1], sh);
}

template <class W>
struct GemvUnit;

// What the mat-vec's staging needs of a unit type: kChunks 16-byte copies per row and unit into a
// shared row of kRowStride bytes; kMayOverrun: the copies may pass the tensor's end (clamped);
// kPartial: a row's last unit may be partial (K % kGemvUnitK != 0).
template <int kChunksPerUnit, int kSharedRowStride, bool kCopiesMayOverrun, bool kPartialLastUnit>
struct GemvStaging {
  static constexpr int kChunks = kChunksPerUnit;
  static constexpr int kRowStride = kSharedRowStride;
  static constexpr bool kMayOverrun = kCopiesMayOverrun;
  static constexpr bool kPartial = kPartialLastUnit;
};

// ---- q4_K: a unit is one super-block (144 bytes, 16-byte aligned: no misalignment) ----------
// Lane tq takes quarter tq of the super-block: qs bytes [32tq, 32tq+32) = two chunks, whose low
// nibbles are sub-block 2tq and high nibbles sub-block 2tq+1; pair p = 4h + 2s + w2 is sub-block
// 2tq+s, chunk h, words 2w2 and 2w2+1: k0 = 64tq + 32s + 16h + 8w2.
// Per weight: one byte permute (2^23 + q), a = fma(2^23+q, |d1|, -2^23·|d1|) = q·|d1| exactly,
// y = fma(a, ±1, -m1) = RN(d1·q - m1) — the one rounding ggml makes, and the sign of a zero d1·q
// is d1's, as in ggml. The high nibbles are masked in place (16·q) with |d1|/16, which is exact.
// Four instructions per weight and a half: and (per 4), prmt, fma, fma, cvt.f16x2 (per 2).
template <>
struct GemvUnit<WeightQ4K> : GemvStaging<9, 144, false, false> {  // K % 256 == 0: every unit is whole
  using W = WeightQ4K;

  PFX_HD static const uint8_t* chunks_base(const uint8_t* row, int u) {
    return row + static_cast<int64_t>(u) * W::kBlockBytes;
  }
  PFX_HD static int misalign(const uint8_t* /*row*/, int /*u*/) { return 0; }
  PFX_HD static int k0(int p, int tq) { return 64 * tq + 32 * ((p >> 1) & 1) + 16 * (p >> 2) + 8 * (p & 1); }

  struct Ctx {
    uint32_t q[8];  // qs bytes [32tq, 32tq+32)
    float d[2], nd[2], sgn, m[2];  // per s: |d1|·2^-4s, -2^23·|d1|·2^-4s, m1; sign of d (= of d1) as ±1
  };
  // scale_bytes: ggml's get_scale_min_k4 for sub-blocks 2tq and 2tq+1 at once, without a branch
  // (lanes tq < 2 and tq >= 2 take different formulas): bytes i = 2(tq%2) and i+1 of
  // a = scales[0..3], b = scales[4..7], c = scales[8..11] give (sc, m) = (a & 63, b & 63) for
  // tq < 2, else ((c & 15) | (a >> 6) << 4, (c >> 4) | (b >> 6) << 4): sub-block 2tq's in byte 0 of
  // sc2 / mn2, 2tq+1's in byte 1. q5_K shares this header layout.
  // scales: the sc are exact small integers, so |d1| = |d|·sc is formed exactly as
  // fma(2^23 + sc, |d|, -2^23·|d|); m1 = dmin·m as in ggml. high_scale: the factor on sub-block
  // 2tq+1's |d1| (1/16 where its nibble is read in place as 16·q; exact, since d is an fp16 >=
  // 2^-24 or 0).
  PFX_HD static void scale_bytes(const uint4& hdr, int tq, uint32_t& sc2, uint32_t& mn2) {
    const uint32_t sh = 16u * static_cast<uint32_t>(tq & 1);
    const uint32_t a = hdr.y >> sh, b = hdr.z >> sh, cc = hdr.w >> sh;  // bytes 0, 1: sub-blocks 2tq, 2tq+1
    const bool high = tq >= 2;
    sc2 = high ? ((cc & 0x0F0Fu) | ((a >> 2) & 0x3030u)) : (a & 0x3F3Fu);
    mn2 = high ? (((cc >> 4) & 0x0F0Fu) | ((b >> 2) & 0x3030u)) : (b & 0x3F3Fu);
  }
  PFX_HD static void scales(const uint4& hdr, int tq, float high_scale, Ctx& c) {
    uint32_t sc2, mn2;
    scale_bytes(hdr, tq, sc2, mn2);
    const float d = half_bits_to_float(hdr.x), dmin = half_bits_to_float(hdr.x >> 16);
    const float ad = bits_float(float_bits(d) & 0x7FFFFFFFu);
    c.sgn = signbit_set(d) ? -1.0f : 1.0f;  // d1 = d·sc with sc >= 0: d1 has d's sign, zero included
PFX_HD_UNROLL
    for (int s = 0; s < 2; ++s) {
      const float ads = s == 0 ? ad : fmul_rn(ad, high_scale);
      const float d1 = fma_rn(byte_plus_2p23(sc2, s), ads, fmul_rn(ads, -8388608.0f));  // |d|·sc·scale, exact
      c.d[s] = d1;
      c.nd[s] = fmul_rn(d1, -8388608.0f);  // exact
      c.m[s] = fmul_rn(dmin, byte_float(mn2, s));
    }
  }
  // From registers: the 16-byte header and this lane's 32 qs bytes (the decode mat-vec's direct
  // kernel loads them from global memory, kernels/gemm_fast_gemv_direct.cuh).
  PFX_HD static Ctx prepare_regs(const uint4& hdr, const uint4& q0, const uint4& q1, int tq) {
    Ctx c;
    c.q[0] = q0.x, c.q[1] = q0.y, c.q[2] = q0.z, c.q[3] = q0.w;
    c.q[4] = q1.x, c.q[5] = q1.y, c.q[6] = q1.z, c.q[7] = q1.w;
    scales(hdr, tq, 0.0625f, c);  // the high nibble is read as 16·q
    return c;
  }
  PFX_HD static Ctx prepare(const uint8_t* srow, int /*m*/, int tq) {
    return prepare_regs(*reinterpret_cast<const uint4*>(srow), *reinterpret_cast<const uint4*>(srow + 16 + 32 * tq),
                        *reinterpret_cast<const uint4*>(srow + 32 + 32 * tq), tq);
  }
  PFX_HD static void nibbles4(uint32_t v, float d, float nd, float sgn, float m, uint32_t& h01, uint32_t& h23) {
    float y[4];
PFX_HD_UNROLL
    for (int e = 0; e < 4; ++e) y[e] = fma_rn(fma_rn(byte_plus_2p23(v, e), d, nd), sgn, -m);
    h01 = pack_half2_rn(y[0], y[1]);
    h23 = pack_half2_rn(y[2], y[3]);
  }
  PFX_HD static uint4 pair(const Ctx& c, int /*tq*/, int p) {
    const int h = p >> 2, s = (p >> 1) & 1, w2 = p & 1;
    const uint32_t mask = s == 0 ? 0x0F0F0F0Fu : 0xF0F0F0F0u;
    uint4 o;
    nibbles4(c.q[4 * h + 2 * w2] & mask, c.d[s], c.nd[s], c.sgn, c.m[s], o.x, o.y);
    nibbles4(c.q[4 * h + 2 * w2 + 1] & mask, c.d[s], c.nd[s], c.sgn, c.m[s], o.z, o.w);
    return o;
  }
};

// ---- q6_K: a unit is one super-block (210 bytes, 2-byte aligned) -----------------------------
// Lane tq takes half hh = tq/2 and positions l in [16(tq%2), +16) of every ggml group r = 0..3:
// ql[64hh + l] (groups 0, 2), ql[64hh + 32 + l] (groups 1, 3), qh[32hh + l] and the four scales
// sc[8hh + tq%2 + 2r] — three 16-byte pieces. Pair p = 2r + w2 is group r, positions
// 16(tq%2) + 8w2 .. +7: k0 = 128hh + 32r + 16(tq%2) + 8w2. Decoding: WeightQ6K::bytes8, exact.
template <>
struct GemvUnit<WeightQ6K> : GemvStaging<14, 224, true, false> {  // 224 bytes hold 210 at any even misalignment <= 14
  using W = WeightQ6K;

  PFX_HD static const uint8_t* chunks_base(const uint8_t* row, int u) {
    return floor16(row + static_cast<int64_t>(u) * W::kBlockBytes);
  }
  PFX_HD static int misalign(const uint8_t* row, int u) {
    return static_cast<int>((reinterpret_cast<uintptr_t>(row) + static_cast<uintptr_t>(u) * W::kBlockBytes) & 15u);
  }
  PFX_HD static int k0(int p, int tq) { return 128 * (tq >> 1) + 32 * (p >> 1) + 16 * (tq & 1) + 8 * (p & 1); }

  struct Ctx {
    uint32_t la[4], lb[4], h[4];  // ql[64hh + l ..], ql[64hh + 32 + l ..], qh[32hh + l ..], 16 bytes each
    float ds[4];                  // d·sc of group r
  };
  PFX_HD static Ctx prepare(const uint8_t* srow, int m, int tq) {
    Ctx c;
    const int hh = tq >> 1, l0 = 16 * (tq & 1);
    load16_even(srow, m + 64 * hh + l0, c.la);
    load16_even(srow, m + 64 * hh + 32 + l0, c.lb);
    load16_even(srow, m + 128 + 32 * hh + l0, c.h);
    const float d = half_bits_to_float(*reinterpret_cast<const uint16_t*>(srow + m + 208));
PFX_HD_UNROLL
    for (int r = 0; r < 4; ++r) {
      const int8_t sc = static_cast<int8_t>(srow[m + 192 + 8 * hh + (tq & 1) + 2 * r]);
      c.ds[r] = fmul_rn(d, static_cast<float>(sc));
    }
    return c;
  }
  PFX_HD static uint4 pair(const Ctx& c, int /*tq*/, int p) {
    const int r = p >> 1, w = 2 * (p & 1);
    const uint32_t* l = (r & 1) ? c.lb : c.la;
    return W::bytes8(l[w], l[w + 1], c.h[w], c.h[w + 1], r, c.ds[r]);
  }
};

// ---- q8_0: a unit is 8 blocks (272 bytes, 2-byte aligned); K % 256 may be 64, 128 or 192 -----
// Pair p is block p; lane tq takes its bytes 8tq .. 8tq+7: k0 = 32p + 8tq. Decoding:
// WeightQ8_0::scale8, exact. A partial last unit has 2·(K % 256)/64 pairs.
template <>
struct GemvUnit<WeightQ8_0> : GemvStaging<18, 288, true, true> {  // 288 bytes hold 272 at any even misalignment <= 14
  using W = WeightQ8_0;

  PFX_HD static const uint8_t* chunks_base(const uint8_t* row, int u) {
    return floor16(row + static_cast<int64_t>(u) * 8 * W::kBlockBytes);
  }
  PFX_HD static int misalign(const uint8_t* row, int /*u*/) {  // 272 = 17·16
    return static_cast<int>(reinterpret_cast<uintptr_t>(row) & 15u);
  }
  PFX_HD static int k0(int p, int tq) { return 32 * p + 8 * tq; }

  struct Ctx {
    const uint8_t* srow;
    int m;
  };
  PFX_HD static Ctx prepare(const uint8_t* srow, int m, int /*tq*/) { return Ctx{srow, m}; }
  PFX_HD static uint4 pair(const Ctx& c, int tq, int p) {
    const int blk = c.m + p * W::kBlockBytes;
    uint32_t w0, w1;
    load8_even(c.srow, blk + 2 + 8 * tq, w0, w1);
    return W::scale8(w0, w1, *reinterpret_cast<const uint16_t*>(c.srow + blk));
  }
};

// ---- f16: a unit is 512 bytes; pair p, lane tq: k0 = 32p + 8tq (one 16-byte load) -------------
// 528: 16 bytes of padding, rows g and g+1 on different banks; a partial last unit copies past the row.
template <>
struct GemvUnit<WeightF16> : GemvStaging<32, 528, true, true> {

  PFX_HD static const uint8_t* chunks_base(const uint8_t* row, int u) {
    return row + static_cast<int64_t>(u) * 2 * kGemvUnitK;
  }
  PFX_HD static int misalign(const uint8_t* /*row*/, int /*u*/) { return 0; }
  PFX_HD static int k0(int p, int tq) { return 32 * p + 8 * tq; }

  struct Ctx {
    const uint8_t* srow;
  };
  PFX_HD static Ctx prepare(const uint8_t* srow, int /*m*/, int /*tq*/) { return Ctx{srow}; }
  PFX_HD static uint4 pair(const Ctx& c, int tq, int p) {
    return *reinterpret_cast<const uint4*>(c.srow + 64 * p + 16 * tq);
  }
};

// Bytes of one stage: the 16 staged rows, then the activation chunks.
template <class W>
inline constexpr int kGemvWeightBytes = kGemvRows * GemvUnit<W>::kRowStride;
template <class W, int kT>
inline constexpr int kGemvStageBytes = kGemvWeightBytes<W> + kGemvPairs * kT * 4 * 16;

// Pairs of unit u that lie inside the row (all 8 but in a partial last q8_0 / f16 unit).
PFX_HD int gemv_pairs_in_unit(int K, int u) {
  const int left = K - kGemvUnitK * u;
  return left >= kGemvUnitK ? kGemvPairs : left / 32;
}

// The 16-byte copies of one lane, set up once per block so that staging a unit costs little more
// than the copies: lane L stages row L % 16 (chunks L / 16, L / 16 + 2, ...) and activation chunks
// e = L + 32j, j < kT. A warp-wide copy thus reads 32 contiguous bytes of each of 16 rows.
template <class W, int kT>
struct GemvCopier {
  using U = GemvUnit<W>;
  static constexpr int kRowCopies = (U::kChunks + 1) / 2;  // the last is absent for c0 = 1 when kChunks is odd

  const uint8_t* row;  // this lane's weight row (row N-1 for rows past N)
  const uint8_t* w_end;
  const uint16_t* x;
  int K, c0, dst_w, dst_x;
  int x_off[kT];  // t·K + k0 of activation chunk j
  int x_k0[kT];   // its k0 (partial units skip the chunks past K)

  PFX_HD GemvCopier(const GemvSrc& s, int n0, int lane)
      : row(gemv_row(s, n0 + (lane & 15))), w_end(s.w_end), x(s.x), K(s.K), c0(lane >> 4) {
    dst_w = (lane & 15) * U::kRowStride + 16 * c0;
    dst_x = kGemvWeightBytes<W> + 16 * lane;
PFX_HD_UNROLL
    for (int j = 0; j < kT; ++j) {  // chunk e = (p·kT + t)·4 + tq
      const int e = lane + 32 * j;
      const int tq = e & 3, t = (e >> 2) % kT, p = (e >> 2) / kT;
      x_k0[j] = U::k0(p, tq);
      x_off[j] = t * K + x_k0[j];
    }
  }

  // copy(byte offset in the stage, source, source bytes to read (the rest zero-filled)).
#ifdef __CUDACC__
#pragma nv_exec_check_disable
#endif
  template <class Copy>
  PFX_HD void stage(int u, Copy&& copy) const {
    const uint8_t* base = U::chunks_base(row, u) + 16 * c0;
    const bool odd_tail = (U::kChunks & 1) != 0 && c0 == 1;  // lanes of chunk 1, 3, ... of an odd count
    const int64_t left = U::kMayOverrun ? w_end - base : int64_t{1} << 40;
    if (left >= 32 * (kRowCopies - 1) + 16) {  // every chunk inside the tensor: all but the last row's last unit
PFX_HD_UNROLL
      for (int j = 0; j < kRowCopies; ++j)
        if (j < kRowCopies - 1 || !odd_tail) copy(dst_w + 32 * j, base + 32 * j, 16u);
    } else {
PFX_HD_UNROLL
      for (int j = 0; j < kRowCopies; ++j) {
        const int64_t in = left - 32 * j;
        const uint32_t bytes = in >= 16 ? 16u : (in > 0 ? static_cast<uint32_t>(in) : 0u);
        if (j < kRowCopies - 1 || !odd_tail) copy(dst_w + 32 * j, base + 32 * j, bytes);
      }
    }
    const int k_left = K - kGemvUnitK * u;
    const uint16_t* xu = x + static_cast<int64_t>(kGemvUnitK) * u;
PFX_HD_UNROLL
    for (int j = 0; j < kT; ++j)
      if (!U::kPartial || x_k0[j] < k_left) copy(dst_x + 512 * j, xu + x_off[j], 16u);
  }
};

// The MMAs of one staged unit for lane `lane`: mma(a[4], b0, b1) is one m16n8k16 with this lane's
// fragments; m_lo / m_hi are the misalignments of rows g and g+8.
#ifdef __CUDACC__
#pragma nv_exec_check_disable
#endif
template <class W, int kT, class Mma>
PFX_HD void gemv_unit_mmas(const uint8_t* stage, int m_lo, int m_hi, int lane, int pairs, Mma&& mma) {
  using U = GemvUnit<W>;
  const int g = lane >> 2, tq = lane & 3;
  const auto lo = U::prepare(stage + g * U::kRowStride, m_lo, tq);
  const auto hi = U::prepare(stage + (g + 8) * U::kRowStride, m_hi, tq);
  const uint8_t* xs = stage + kGemvWeightBytes<W>;
PFX_HD_UNROLL
  for (int p = 0; p < kGemvPairs; ++p) {
    if (U::kPartial && p >= pairs) break;  // warp-uniform
    uint4 b = make_uint4(0u, 0u, 0u, 0u);   // tokens >= kT: zero columns, never stored
    if (g < kT) b = *reinterpret_cast<const uint4*>(xs + 16 * ((p * kT + g) * 4 + tq));
    const uint4 wl = U::pair(lo, tq, p), wh = U::pair(hi, tq, p);
    const uint32_t a0[4] = {wl.x, wh.x, wl.y, wh.y};
    const uint32_t a1[4] = {wl.z, wh.z, wl.w, wh.w};
    mma(a0, b.x, b.y);
    mma(a1, b.z, b.w);
  }
}

}  // namespace pfx::kernels::dev

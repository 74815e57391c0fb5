// Lane building blocks of the decode mat-vec's direct kernel (k_gemv_direct, kernels/gemm_fast_gemv.cu):
// each lane loads the raw bytes of its own weights straight from global memory into registers
// (no shared-memory ring, no cp.async wait), and turns them into exact fp16 A fragments of
// mma.sync m16n8k16 with the same decoders and the same lane -> k maps as the staged kernel
// (kernels/gemm_fast_gemv_tile.cuh: lane (g, tq) owns rows g and g + 8 and, for pair p, the 8
// consecutive k0(p, tq) .. +7 of the unit). One unit = one 256-weight super-block of a row.
//
// Per type, a `Direct*` struct with
//   Raw  fetch(blk, tq)        the loads of one row's unit (blk = its super-block), issued a unit
//                              ahead of use so that they are in flight while the lane decodes;
//   Ctx  prepare(raw, tq)      the per-row scales and quants, once per unit;
//   uint4 pair(ctx, tq, p)     8 fp16 weights (k0(p, tq) .. +7) as four half2 words.
// q4_K and q6_K also have a one-FMA decode (kFastDecode: fast_prepare / fast_pair; the same fp16
// bits, but for q6_K's zeros, which may be +0 where ggml's are -0: kFastZeroSigns), valid where
// fast_ok(raw) holds for every lane of the warp (the kernel votes once per unit):
// a quant byte placed in bits 16..23 of a float's bits, all higher bits zero, is the float
// byte·2^-133 exactly (every bit pattern below 2^24 is its value times 2^-149, subnormal or not;
// FFMA takes subnormal operands at full rate), so fma(placed quant, scale·2^133, offset) forms the
// scaled quant exactly and rounds once, where the exact decode above needs a second FMA (q4_K) or
// a subtraction (q6_K) to remove the 2^23 of the byte's float. fast_ok bounds d so that the
// scaled scale is finite; blocks with larger scales (never made by llama.cpp's quantizers for
// weights under ~7 in magnitude) take the exact decode.
// Everything is __host__ __device__ (ldg_ro is a plain load on the host): the CPU tests run these
// very functions against quant::dequantize_row (tests/kernels/gemm/gemm_fast_gemv_host_test.cu).
//
// q4_K (144-byte blocks) and q5_K (176) are 16-byte aligned in every row: 16-byte loads. q6_K
// blocks (210 bytes) are 2-byte aligned: a lane's three 16-byte pieces of a row (ql, ql + 32, qh)
// all sit at the same offset s = address % 8 (they are 16-byte multiples apart), so each piece is
// three aligned 8-byte loads and a shift by s bytes (one word select, four funnel shifts).
#pragma once
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <cstdint>

#include "kernels/gemm_fast_gemv_tile.cuh"
#include "kernels/gemm_fast_weights.cuh"
#include "quant/types.h"

namespace pfx::kernels::dev {

// ---- q4_K: the staged kernel's decoder (GemvUnit<WeightQ4K>) on registers ------------------------
struct DirectQ4K {
  static constexpr uint32_t kGgmlType = static_cast<uint32_t>(quant::Type::Q4_K);
  static constexpr int kBlockBytes = 144;
  static constexpr int kMaxWarps = 16;  // 128 registers at 512 threads (ptxas: no spills)
  static constexpr int kMinBlocks = 1;
  using U = GemvUnit<WeightQ4K>;
  using Ctx = U::Ctx;
  struct Raw {
    uint4 hdr, q0, q1;  // d, dmin, scales[12]; qs bytes [32tq, 32tq + 32)
  };
  PFX_HD static int k0(int p, int tq) { return U::k0(p, tq); }
  PFX_HD static Raw fetch(const uint8_t* blk, int tq) {
    return Raw{ldg_ro(reinterpret_cast<const uint4*>(blk)), ldg_ro(reinterpret_cast<const uint4*>(blk + 16 + 32 * tq)),
               ldg_ro(reinterpret_cast<const uint4*>(blk + 32 + 32 * tq))};
  }
  // Fast decode: both nibbles moved to bits 4..7 of their byte (16·q), read as q·2^-129; with
  // d[s] = d1·2^129 (signed: the sign and zero rules follow from the one FMA, as in ggml).
  // |d| <= 2^-7 keeps |d1·2^129| <= 63·2^122, finite.
  static constexpr bool kFastDecode = true;
  static constexpr bool kFastZeroSigns = true;  // the signs of zeros too: RN(d1·q - m1) is one FMA
  PFX_HD static bool fast_ok(const Raw& r) { return placed_q4k_scale_ok(r.hdr.x); }
  PFX_HD static Ctx prepare(const Raw& r, int tq) { return U::prepare_regs(r.hdr, r.q0, r.q1, tq); }
  PFX_HD static uint4 pair(const Ctx& c, int tq, int p) { return U::pair(c, tq, p); }
  // d1·2^129 as (d·2^129)·sc: both products exact (d·2^129 <= 2^122 by fast_ok; d·sc has at most 17
  // significant bits), and the sign of a zero is d's, as ggml's d·sc. Only q, d and m are set: the
  // exact decode's fields are not read by fast_pair. (Session 17: fewer instructions than the
  // exact decode's scales() and two more multiplies; its own share of the measured gain was
  // within noise on the H200, docs/gemm-fast.md.)
  PFX_HD static Ctx fast_prepare(const Raw& r, int tq) {
    Ctx c{};
    c.q[0] = r.q0.x, c.q[1] = r.q0.y, c.q[2] = r.q0.z, c.q[3] = r.q0.w;
    c.q[4] = r.q1.x, c.q[5] = r.q1.y, c.q[6] = r.q1.z, c.q[7] = r.q1.w;
    uint32_t sc2, mn2;
    U::scale_bytes(r.hdr, tq, sc2, mn2);
    const float d129 = fmul_rn(fmul_rn(half_bits_to_float(r.hdr.x), 0x1p64f), 0x1p65f);
    const float dmin = half_bits_to_float(r.hdr.x >> 16);
PFX_HD_UNROLL
    for (int s = 0; s < 2; ++s) {
      c.d[s] = fmul_rn(d129, byte_float(sc2, s));
      c.m[s] = fmul_rn(dmin, byte_float(mn2, s));
    }
    return c;
  }
  PFX_HD static uint4 fast_pair(const Ctx& c, int /*tq*/, int p) {
    const int h = p >> 2, s = (p >> 1) & 1, w2 = p & 1;
    const uint32_t w0 = c.q[4 * h + 2 * w2], w1 = c.q[4 * h + 2 * w2 + 1];
    uint4 o;
    // Bytes 16·q: fp16(RN(d1·q - m1)) with c.d[s] = d1·2^129.
    placed_fma4(s == 0 ? (w0 << 4) & 0xF0F0F0F0u : w0 & 0xF0F0F0F0u, c.d[s], -c.m[s], o.x, o.y);
    placed_fma4(s == 0 ? (w1 << 4) & 0xF0F0F0F0u : w1 & 0xF0F0F0F0u, c.d[s], -c.m[s], o.z, o.w);
    return o;
  }
};

// ---- q5_K: q4_K's layout and arithmetic plus a fifth bit ----------------------------------------
// Block: d, dmin, scales[12] (bytes 0..15, as q4_K), qh[32] (16..47), qs[128] (48..175). Lane tq
// takes qs bytes [32tq, 32tq + 32) as in q4_K (low nibbles: sub-block 2tq, high: 2tq + 1) and all
// of qh: element l of those sub-blocks has its fifth bit at bit 2tq (low) / 2tq + 1 (high) of qh[l].
// A rotate by 4 - 2tq (3 - 2tq) brings that bit to bit 4 of its byte without crossing bytes; then
// q = nibble | bit is 0..31 and y = RN(d1·q - m1) exactly as q4_K (d1·q has <= 22 significant bits).
// Per 4 weights: rotate, and, lop3 (low; a shift more for high) before q4_K's four instructions.
struct DirectQ5K {
  static constexpr uint32_t kGgmlType = static_cast<uint32_t>(quant::Type::Q5_K);
  static constexpr int kBlockBytes = 176;
  static constexpr int kMaxWarps = 8;  // more registers per lane than q4_K
  static constexpr int kMinBlocks = 1;  // (2, i.e. a 128-register cap, spills)
  static constexpr bool kFastDecode = false;
  using U = GemvUnit<WeightQ4K>;
  struct Raw {
    uint4 hdr, h0, h1, q0, q1;  // header; qh[0..15], qh[16..31]; qs bytes [32tq, 32tq + 32)
  };
  struct Ctx {
    U::Ctx k4;      // quants q[8] and the scales of sub-blocks 2tq, 2tq + 1 (no 1/16 on the high one)
    uint32_t h[8];  // qh bytes 4i .. 4i + 3 (the fifth bits of q[i]'s elements)
  };
  PFX_HD static int k0(int p, int tq) { return U::k0(p, tq); }
  PFX_HD static Raw fetch(const uint8_t* blk, int tq) {
    const auto at = [&](int off) { return ldg_ro(reinterpret_cast<const uint4*>(blk + off)); };
    return Raw{at(0), at(16), at(32), at(48 + 32 * tq), at(64 + 32 * tq)};
  }
  PFX_HD static Ctx prepare(const Raw& r, int tq) {
    Ctx c;
    c.k4.q[0] = r.q0.x, c.k4.q[1] = r.q0.y, c.k4.q[2] = r.q0.z, c.k4.q[3] = r.q0.w;
    c.k4.q[4] = r.q1.x, c.k4.q[5] = r.q1.y, c.k4.q[6] = r.q1.z, c.k4.q[7] = r.q1.w;
    c.h[0] = r.h0.x, c.h[1] = r.h0.y, c.h[2] = r.h0.z, c.h[3] = r.h0.w;
    c.h[4] = r.h1.x, c.h[5] = r.h1.y, c.h[6] = r.h1.z, c.h[7] = r.h1.w;
    U::scales(r.hdr, tq, 1.0f, c.k4);
    return c;
  }
  // Four 5-bit quants (one per byte) of word i, sub-block 2tq + s.
  PFX_HD static uint32_t quants(const Ctx& c, int tq, int s, int i) {
    const uint32_t rot = static_cast<uint32_t>(4 - s - 2 * tq) & 31u;
    const uint32_t bit = funnel_l(c.h[i], c.h[i], rot) & 0x10101010u;
    const uint32_t nib = (s == 0 ? c.k4.q[i] : c.k4.q[i] >> 4) & 0x0F0F0F0Fu;
    return nib | bit;
  }
  PFX_HD static uint4 pair(const Ctx& c, int tq, int p) {
    const int h = p >> 2, s = (p >> 1) & 1, w2 = p & 1;
    const int i = 4 * h + 2 * w2;
    uint4 o;
    U::nibbles4(quants(c, tq, s, i), c.k4.d[s], c.k4.nd[s], c.k4.sgn, c.k4.m[s], o.x, o.y);
    U::nibbles4(quants(c, tq, s, i + 1), c.k4.d[s], c.k4.nd[s], c.k4.sgn, c.k4.m[s], o.z, o.w);
    return o;
  }
};

// ---- q6_K: the staged kernel's decoder (GemvUnit<WeightQ6K>) on registers ------------------------
// Lane tq: half hh = tq / 2, positions l0 = 16(tq % 2): pieces ql[64hh + l0 ..], ql[64hh + 32 + l0 ..],
// qh[32hh + l0 ..] (16 bytes each), scales sc[8hh + tq % 2 + 2r] (r = 0..3) and d. Every 8-byte load
// lies inside the tensor: a piece's window [floor8(a), floor8(a) + 24) ends at most at block byte
// 200 (< 210), and starts at most 6 bytes before its block (never before the tensor: the tensor is
// 16-byte aligned, so its first block has s = 0).
struct DirectQ6K {
  static constexpr uint32_t kGgmlType = static_cast<uint32_t>(quant::Type::Q6_K);
  static constexpr int kBlockBytes = 210;
  static constexpr int kMaxWarps = 8;
  static constexpr int kMinBlocks = 1;  // (2, i.e. a 128-register cap, spills)
  using U = GemvUnit<WeightQ6K>;
  using Ctx = U::Ctx;
  struct Raw {
    uint2 w[3][3];  // pieces la, lb, h: the aligned 24-byte windows around them
    int8_t sc[4];
    uint16_t d;
    uint16_t s;  // block address % 8: where the pieces start in their windows
  };
  PFX_HD static int k0(int p, int tq) { return U::k0(p, tq); }
  PFX_HD static Raw fetch(const uint8_t* blk, int tq) {
    const int hh = tq >> 1, l0 = 16 * (tq & 1);
    const int off[3] = {64 * hh + l0, 64 * hh + 32 + l0, 128 + 32 * hh + l0};
    const uintptr_t a = reinterpret_cast<uintptr_t>(blk);
    Raw r;
    r.s = static_cast<uint16_t>(a & 7u);
PFX_HD_UNROLL
    for (int j = 0; j < 3; ++j) {
      const uint2* w = reinterpret_cast<const uint2*>((a + static_cast<uintptr_t>(off[j])) & ~static_cast<uintptr_t>(7));
PFX_HD_UNROLL
      for (int i = 0; i < 3; ++i) r.w[j][i] = ldg_ro(w + i);
    }
    const int8_t* sc = reinterpret_cast<const int8_t*>(blk + 192 + 8 * hh + (tq & 1));
PFX_HD_UNROLL
    for (int q = 0; q < 4; ++q) r.sc[q] = ldg_ro(sc + 2 * q);
    r.d = ldg_ro(reinterpret_cast<const uint16_t*>(blk + 208));
    return r;
  }
  // Bytes [s, s + 16) of a 24-byte window (s even, < 8) as four words.
  PFX_HD static void align16(const uint2 (&w)[3], uint32_t s, uint32_t (&out)[4]) {
    const uint32_t v[6] = {w[0].x, w[0].y, w[1].x, w[1].y, w[2].x, w[2].y};
    const bool up = s >= 4;
    uint32_t t[5];
PFX_HD_UNROLL
    for (int i = 0; i < 5; ++i) t[i] = up ? v[i + 1] : v[i];
    const uint32_t sh = (s & 3u) * 8u;
PFX_HD_UNROLL
    for (int i = 0; i < 4; ++i) out[i] = funnel_r(t[i], t[i + 1], sh);
  }
  // Fast decode: quants as bytes 4q, read as q·2^-131; ds[r] = d·sc·2^131. |d| < 2^-10 keeps
  // |d·sc·2^131| < 2^128 (|sc| <= 128), finite.
  // A zero weight may come out +0 where ggml's d·sc·(q - 32) is -0 (q = 32 with d·sc < 0, or
  // d·sc = ±0): the fma's exact cancellation rounds to +0. No MMA output sees the sign of a zero
  // weight: its product is a zero, and the accumulators start at +0, so a sum of zeros is +0.
  static constexpr bool kFastDecode = true;
  static constexpr bool kFastZeroSigns = false;
  PFX_HD static bool fast_ok(const Raw& r) { return placed_q6k_scale_ok(r.d); }
  template <bool kFast = false>
  PFX_HD static Ctx prepare_scaled(const Raw& r) {
    Ctx c;
    align16(r.w[0], r.s, c.la);
    align16(r.w[1], r.s, c.lb);
    align16(r.w[2], r.s, c.h);
    const float d = half_bits_to_float(r.d);
    // kFast: d·2^131 (as d·2^66·2^65, each exact: |d| < 2^-10 keeps it below 2^121), then ·sc, exact
    // (at most 19 significant bits); once per row rather than the 2^65 once per scale.
    const float dd = kFast ? fmul_rn(fmul_rn(d, 0x1p66f), 0x1p65f) : d;
PFX_HD_UNROLL
    for (int q = 0; q < 4; ++q) c.ds[q] = fmul_rn(dd, static_cast<float>(r.sc[q]));
    return c;
  }
  PFX_HD static Ctx prepare(const Raw& r, int /*tq*/) { return prepare_scaled<false>(r); }
  PFX_HD static uint4 pair(const Ctx& c, int tq, int p) { return U::pair(c, tq, p); }
  PFX_HD static Ctx fast_prepare(const Raw& r, int /*tq*/) { return prepare_scaled<true>(r); }
  PFX_HD static uint4 fast_pair(const Ctx& c, int /*tq*/, int p) {
    const int r = p >> 1, w = 2 * (p & 1);
    const uint32_t* l = (r & 1) ? c.lb : c.la;
    const uint32_t q0 = quants4x4(l[w], c.h[w], r), q1 = quants4x4(l[w + 1], c.h[w + 1], r);
    const float ds = c.ds[r], off = fmul_rn(ds, -0x1p-126f);  // ·(-2^-126): -32·d·sc, exact
    // (4q)·2^-133 · ds·2^131 - 32·ds = ds·(q - 32), exact
    uint4 o;
    placed_fma4(q0, ds, off, o.x, o.y);
    placed_fma4(q1, ds, off, o.z, o.w);
    return o;
  }
  // Group r's four 6-bit quants of a word pair as bytes 4q (bits 2..7): the low four bits from
  // l (low nibbles for r < 2, high for r >= 2), the top two from bits 2r, 2r + 1 of h's bytes.
  PFX_HD static uint32_t quants4x4(uint32_t l, uint32_t h, int r) {
    const uint32_t lo = r < 2 ? l << 2 : l >> 2;
    const uint32_t hi = r == 0 ? h << 6 : r == 1 ? h << 4 : r == 2 ? h << 2 : h;
    return (lo & 0x3C3C3C3Cu) | (hi & 0xC0C0C0C0u);
  }
};

// Whether the warp's unit may take the one-FMA decode: every lane's two rows pass fast_ok.
template <class D>
PFX_HD bool gemv_direct_fast_ok(const typename D::Raw& lo, const typename D::Raw& hi) {
  if constexpr (D::kFastDecode) {
    return D::fast_ok(lo) && D::fast_ok(hi);
  } else {
    return false;
  }
}

// ---- one unit of one lane --------------------------------------------------------------------
// The B fragments of unit u: for pair p, x[g][256u + k0(p, tq) .. +7] (one 16-byte load; tokens
// g >= kT are zero columns whose results are never stored). xg = row g of X (any row for g >= kT).
// Any finite B would do for those columns (an MMA's output column reads its own B column only), but
// loading every lane's B from row 0 instead (no zeros, no predicate: 16 instructions fewer per
// unit at T = 1) made the q4_K GEMVs slower on the H200 (session 17: gate+up +5.5% per decode
// step, tg128 0.99x; docs/gemm-fast.md): the predicated form stays.
template <class D, int kT>
PFX_HD void gemv_direct_x(const uint16_t* xg, int u, int g, int tq, uint4 (&b)[kGemvPairs]) {
PFX_HD_UNROLL
  for (int p = 0; p < kGemvPairs; ++p)
    b[p] = g < kT ? ldg_ro(reinterpret_cast<const uint4*>(xg + kGemvUnitK * u + D::k0(p, tq))) : make_uint4(0u, 0u, 0u, 0u);
}

// The 16 MMAs of a unit: mma(j, a[4], b0, b1) is one m16n8k16 into accumulator j = 0 (the first
// MMA of each pair) or 1 (the second): two independent chains of 8, summed once at the end.
// kFast: lo and hi come from fast_prepare (the one-FMA decode).
#ifdef __CUDACC__
#pragma nv_exec_check_disable
#endif
template <class D, bool kFast = false, class Mma>
PFX_HD void gemv_direct_mmas(const typename D::Ctx& lo, const typename D::Ctx& hi, const uint4 (&b)[kGemvPairs], int tq,
                             Mma&& mma) {
PFX_HD_UNROLL
  for (int p = 0; p < kGemvPairs; ++p) {
    uint4 wl, wh;
    if constexpr (kFast) {
      wl = D::fast_pair(lo, tq, p), wh = D::fast_pair(hi, tq, p);
    } else {
      wl = D::pair(lo, tq, p), wh = D::pair(hi, tq, p);
    }
    const uint32_t a0[4] = {wl.x, wh.x, wl.y, wh.y};
    const uint32_t a1[4] = {wl.z, wh.z, wl.w, wh.w};
    mma(0, a0, b[p].x, b[p].y);
    mma(1, a1, b[p].z, b[p].w);
  }
}

}  // namespace pfx::kernels::dev

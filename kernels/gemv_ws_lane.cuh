// Lane building blocks of the decode mat-vec on gemm_ws's repacked weights (k_gemv_ws,
// kernels/gemv_ws.cu): where a 16-row tile's bytes lie in the repacked matrix, and one lane's loads
// of one k-group (the K-quants' 256-wide super-block: four 64-wide k-tiles) straight from global
// memory into registers, issued a group ahead of use. The fragments themselves come from the fused
// GEMM's own decoders (WsDecode*, kernels/gemm_ws_layout.cuh), fed from these registers instead of
// a shared-memory stage: the same fp16 bits as every other path.
//
// Why this layout serves a mat-vec: a 16-row tile of the repack is one warp's share of a 64-row
// panel (warp w of the panel's warpgroup), so lane l of the mat-vec's warp plays consumer thread
// t = 32w + l, and its A fragments of a k-tile are one 16-byte load (q6_K: and one 8-byte load),
// each k16 step's fragment at its natural mma.sync m16n8k16 position (wgmma's per-warp A layout is
// mma.sync's): a chain of MMAs over the steps in k order sums in the generic GEMM's order.
// Everything is __host__ __device__ (ldg_ro is a plain load on the host): the CPU tests run these
// very functions against quant::dequantize_row (tests/kernels/gemm/gemv_ws_host_test.cu).
#pragma once
#include <cstdint>

#include "kernels/gemm_ws_layout.cuh"
#include "kernels/hd_ops.cuh"

namespace pfx::kernels::dev {

// The 16-row tile at row n0 (a multiple of 16) of a repacked matrix with n_groups k-groups: its
// panel pair's first chunk, its panel, and the consumer thread index of lane 0 (32w).
struct GemvWsTile {
  const uint8_t* pair_chunks;  // chunk (pair, group 0); group g at + g·group bytes
  int panel;                   // 0, 1: the 64-row panel of the pair
  int t0;                      // 32 · (the tile's 16-row slice of the panel)
};
template <class L>
PFX_HD GemvWsTile gemv_ws_tile(const uint8_t* base, int64_t n_groups, int n0) {
  return {base + static_cast<int64_t>(n0 >> 7) * n_groups * ws_group_bytes<L>(), (n0 >> 6) & 1, 32 * ((n0 >> 4) & 3)};
}

// Per type: Raw fetch(chunk, panel, t) = one lane's loads of a group; Scales scales_of(raw) = the
// group's fp16 block scales as floats, already times the decoder's power of two, once per group
// (a k-tile's scale share is then one multiply, where the powers of two took two more per
// k-tile); lane_scales(raw, scales, t, kt, v0, v1) = its share of its quad's scales of k-tile kt
// (WsDecode*::lane_scales from registers, the same bits: see each type; the kernels exchange the
// quad's shares); load(dec, raw, kt) = k-tile kt's quants into the decoder.
template <int kType>
struct GemvWsLane;

// q4_K: per k-tile 16 bytes of quants; the scale record (20 bytes) of the lane's row half: d/dmin
// and the k-tile's (sc, m) bytes. 4 × 16-byte and 5 × 4-byte loads per lane and group.
template <>
struct GemvWsLane<kWsQ4K> {
  using L = WsLayout<kWsQ4K>;
  using Decode = WsDecodeQ4K;
  struct Raw {
    uint4 q[L::kTiles];
    uint32_t dd, sm[L::kTiles];
  };
  PFX_HD static Raw fetch(const uint8_t* chunk, int panel, int t) {
    Raw r;
    const uint8_t* quants = chunk + panel * L::kQuantBytes + 16 * t;
PFX_HD_UNROLL
    for (int kt = 0; kt < L::kTiles; ++kt) r.q[kt] = ldg_ro(reinterpret_cast<const uint4*>(quants + kt * 2 * L::kQuantBytes));
    const uint8_t* rec = chunk + L::kTiles * 2 * L::kQuantBytes + panel * L::kScaleBytes + 20 * ws_row(t, (t & 3) >> 1);
    r.dd = ldg_ro(reinterpret_cast<const uint32_t*>(rec));
PFX_HD_UNROLL
    for (int kt = 0; kt < L::kTiles; ++kt) r.sm[kt] = ldg_ro(reinterpret_cast<const uint32_t*>(rec + 4 + 4 * kt));
    return r;
  }
  // d·2^129 and dmin of the lane's row half. d·2^129·sc is the decoder's (d·sc)·2^64·2^65 bit for
  // bit: every product is exact while d is in the repack's range (|d| <= 2^-7, sc <= 63: below 2^128).
  struct Scales {
    float d129, dmin;
  };
  PFX_HD static Scales scales_of(const Raw& r) {
    return {fmul_rn(fmul_rn(half_bits_to_float(r.dd), 0x1p64f), 0x1p65f), half_bits_to_float(r.dd >> 16)};
  }
  PFX_HD static void lane_scales(const Raw& r, const Scales& s, int t, int kt, float& v0, float& v1) {
    const int b = 2 * (t & 1);  // the lane's sub-block of the k-tile: its (sc, m) bytes
    v0 = fmul_rn(s.d129, byte_float(r.sm[kt], b));
    v1 = fmul_rn(s.dmin, byte_float(r.sm[kt], b + 1));
  }
  PFX_HD static void load(Decode& d, const Raw& r, int kt) { d.q = r.q[kt]; }
};

// q6_K: per k-tile 16 bytes of low nibbles and 8 of high bits; the row half's 16 int8 scales (one
// per k16 step of the group) and its d. 5 × 16-byte, 4 × 8-byte and one 2-byte load per lane and group.
template <>
struct GemvWsLane<kWsQ6K> {
  using L = WsLayout<kWsQ6K>;
  using Decode = WsDecodeQ6K;
  struct Raw {
    uint4 lo[L::kTiles];
    uint2 hi[L::kTiles];
    uint4 sc;  // word kt: k-tile kt's four scales
    uint32_t d;
  };
  PFX_HD static Raw fetch(const uint8_t* chunk, int panel, int t) {
    Raw r;
    const uint8_t* quants = chunk + panel * L::kQuantBytes;
PFX_HD_UNROLL
    for (int kt = 0; kt < L::kTiles; ++kt) {
      const uint8_t* q = quants + kt * 2 * L::kQuantBytes;
      r.lo[kt] = ldg_ro(reinterpret_cast<const uint4*>(q + 16 * t));
      r.hi[kt] = ldg_ro(reinterpret_cast<const uint2*>(q + 2048 + 8 * t));
    }
    const uint8_t* scales = chunk + L::kTiles * 2 * L::kQuantBytes + panel * L::kScaleBytes;
    const int row = ws_row(t, (t & 3) >> 1);
    r.sc = ldg_ro(reinterpret_cast<const uint4*>(scales + 16 * row));
    r.d = ldg_ro(reinterpret_cast<const uint16_t*>(scales + 1024 + 2 * row));
    return r;
  }
  // d·2^131 of the lane's row half. d·2^131·sc is the decoder's (d·2^66·sc)·2^65 bit for bit: every
  // product is exact while d is in the repack's range (|d| < 2^-10, |sc| <= 128: below 2^128).
  struct Scales {
    float d131;
  };
  PFX_HD static Scales scales_of(const Raw& r) { return {fmul_rn(fmul_rn(half_bits_to_float(r.d), 0x1p66f), 0x1p65f)}; }
  PFX_HD static void lane_scales(const Raw& r, const Scales& s, int t, int kt, float& v0, float& v1) {
    const uint32_t w = (kt == 0 ? r.sc.x : kt == 1 ? r.sc.y : kt == 2 ? r.sc.z : r.sc.w) ^ 0x80808080u;
    const int b = 2 * (t & 1);  // the lane's two steps of the k-tile: their int8 scales
    v0 = fmul_rn(s.d131, ws_int8_float(w, b));
    v1 = fmul_rn(s.d131, ws_int8_float(w, b + 1));
  }
  PFX_HD static void load(Decode& d, const Raw& r, int kt) { d.lo = r.lo[kt], d.hi = r.hi[kt]; }
};

// The chain kernel's stage (k_gemv_ws_chain, kernels/gemv_ws.cu): each lane copies exactly the
// bytes of its Raw into a shared-memory stage (16-, 8- and 4-byte copies, lane-major per piece so a
// warp's reads are conflict-free) and reads them back, so a lane waits only on its own copies.
// copy(dst byte offset in the stage, source, bytes) issues one copy (cp.async on the device, memcpy
// in the host tests); read(stage, lane, t) gives the Raw fetch() would have loaded.
template <int kType>
struct GemvWsStage;
template <>
struct GemvWsStage<kWsQ4K> {
  using Lane = GemvWsLane<kWsQ4K>;
  using L = Lane::L;
  // [k-tile][lane] 16-byte quants, then [dd, sm 0..3][lane] 4-byte scale words.
  static constexpr int kBytes = 32 * (16 * L::kTiles + 4 * (1 + L::kTiles));
  template <class Copy>
  PFX_HD static void copy(const uint8_t* chunk, int panel, int t, int lane, Copy&& copy) {
    const uint8_t* quants = chunk + panel * L::kQuantBytes + 16 * t;
PFX_HD_UNROLL
    for (int kt = 0; kt < L::kTiles; ++kt) copy(512 * kt + 16 * lane, quants + kt * 2 * L::kQuantBytes, 16);
    const uint8_t* rec = chunk + L::kTiles * 2 * L::kQuantBytes + panel * L::kScaleBytes + 20 * ws_row(t, (t & 3) >> 1);
PFX_HD_UNROLL
    for (int j = 0; j <= L::kTiles; ++j) copy(2048 + 128 * j + 4 * lane, rec + 4 * j, 4);
  }
  PFX_HD static Lane::Raw read(const uint8_t* stage, int lane, int /*t*/) {
    Lane::Raw r;
PFX_HD_UNROLL
    for (int kt = 0; kt < L::kTiles; ++kt) r.q[kt] = *reinterpret_cast<const uint4*>(stage + 512 * kt + 16 * lane);
    r.dd = *reinterpret_cast<const uint32_t*>(stage + 2048 + 4 * lane);
PFX_HD_UNROLL
    for (int kt = 0; kt < L::kTiles; ++kt) r.sm[kt] = *reinterpret_cast<const uint32_t*>(stage + 2048 + 128 * (1 + kt) + 4 * lane);
    return r;
  }
};
template <>
struct GemvWsStage<kWsQ6K> {
  using Lane = GemvWsLane<kWsQ6K>;
  using L = Lane::L;
  // [k-tile][lane] 16-byte low nibbles, [k-tile][lane] 8-byte high bits, [lane] 16-byte scales,
  // [lane] the 4-byte word holding d (2-byte aligned in the repack: the aligned word around it).
  static constexpr int kBytes = 32 * (24 * L::kTiles + 16 + 4);
  template <class Copy>
  PFX_HD static void copy(const uint8_t* chunk, int panel, int t, int lane, Copy&& copy) {
    const uint8_t* quants = chunk + panel * L::kQuantBytes;
PFX_HD_UNROLL
    for (int kt = 0; kt < L::kTiles; ++kt) {
      copy(512 * kt + 16 * lane, quants + kt * 2 * L::kQuantBytes + 16 * t, 16);
      copy(2048 + 256 * kt + 8 * lane, quants + kt * 2 * L::kQuantBytes + 2048 + 8 * t, 8);
    }
    const uint8_t* scales = chunk + L::kTiles * 2 * L::kQuantBytes + panel * L::kScaleBytes;
    const int row = ws_row(t, (t & 3) >> 1);
    copy(3072 + 16 * lane, scales + 16 * row, 16);
    copy(3584 + 4 * lane, scales + ((1024 + 2 * row) & ~3), 4);
  }
  PFX_HD static Lane::Raw read(const uint8_t* stage, int lane, int t) {
    Lane::Raw r;
PFX_HD_UNROLL
    for (int kt = 0; kt < L::kTiles; ++kt) {
      r.lo[kt] = *reinterpret_cast<const uint4*>(stage + 512 * kt + 16 * lane);
      r.hi[kt] = *reinterpret_cast<const uint2*>(stage + 2048 + 256 * kt + 8 * lane);
    }
    r.sc = *reinterpret_cast<const uint4*>(stage + 3072 + 16 * lane);
    const uint32_t dw = *reinterpret_cast<const uint32_t*>(stage + 3584 + 4 * lane);
    r.d = (ws_row(t, (t & 3) >> 1) & 1) ? dw >> 16 : dw & 0xFFFFu;
    return r;
  }
};

}  // namespace pfx::kernels::dev

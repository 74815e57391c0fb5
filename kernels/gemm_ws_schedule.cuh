// Which (tile, k-tiles) a persistent gemm_ws CTA runs, host and device (the producer and the
// consumers of a CTA walk the same list; tests/kernels/gemm checks it on the CPU).
//
// Whole tiles (chunk 0): CTA c takes tiles c, c + ctas, ... — each output tile one serial k chain
// on one SM, so a shape with a few more tiles than SMs runs nearly two rounds for little more than
// one round's work (the SwiGLU GEMM at T = 512: 344 tiles of 128 × 256 on 132 SMs, 3 rounds for
// 2.6 rounds of work).
//
// Split chains (chunk > 0): the tile-major space of (tile, k-tile) iterations is cut into ranges of
// `chunk` iterations, one per CTA. A range may start inside one tile (its *tail*: k-tiles s..nk)
// and end inside another (its *head*: 0..r). The head's accumulators go to a workspace slot and
// the CTA that owns the tail continues from them, so each output is still one fp32 sum over k in
// increasing order, the same wgmma steps on the same accumulator values as one CTA would run:
// bitwise equal to whole tiles (not split-K, whose partial sums are added in another order).
// For the tail to find its head done, each CTA runs its head first and its tail last; the head of
// CTA c's tail is CTA c-1's head (a lower block index: already resident when c waits, since blocks
// start in index order and the grid fits the SMs). With chunk >= nk a head of r k-tiles ends by
// time ≈ r, and the tail that continues it starts at ≈ chunk − (nk − r) >= r: nobody waits long.
#pragma once
#include "kernels/hd_ops.cuh"

namespace pfx::kernels::dev {

enum WsUnitKind : int { kWsWholeTile = 0, kWsHeadPiece = 1, kWsTailPiece = 2 };

struct WsUnit {
  int tile, k0, k1;  // k-tiles [k0, k1) of output tile `tile`
  int kind;          // WsUnitKind: a head stores its accumulators (slot = its CTA), a tail loads slot cta - 1
};

struct WsSchedule {
  int tiles;  // output tiles
  int nk;     // k-tiles per tile
  int chunk;  // iterations per CTA (split chains), 0: whole tiles round robin

  // The grid that covers the work: one CTA per range (split) or min(tiles, slots) (whole).
  PFX_HD int ctas(int slots) const {
    if (chunk == 0) return tiles < slots ? tiles : slots;
    const long long work = static_cast<long long>(tiles) * nk;
    return static_cast<int>((work + chunk - 1) / chunk);
  }

  // Units of CTA c of a grid of `ctas`, in the order it runs them.
  PFX_HD int units(int c, int ctas) const {
    if (chunk == 0) return c < tiles ? (tiles - c + ctas - 1) / ctas : 0;
    const Range r = range(c);
    if (r.b >= r.e) return 0;
    return (r.s > 0) + (r.r > 0) + (r.t1 - r.first_whole);
  }

  PFX_HD WsUnit unit(int c, int ctas, int i) const {
    if (chunk == 0) return {c + i * ctas, 0, nk, kWsWholeTile};
    const Range r = range(c);
    if (r.r > 0) {
      if (i == 0) return {r.t1, 0, r.r, kWsHeadPiece};
      --i;
    }
    if (i < r.t1 - r.first_whole) return {r.first_whole + i, 0, nk, kWsWholeTile};
    return {r.t0, r.s, nk, kWsTailPiece};
  }

 private:
  struct Range {
    long long b, e;   // iterations [b, e)
    int t0, s;        // tile and k-tile of b (s > 0: a tail of t0)
    int t1, r;        // tile and k-tile of e (r > 0: a head of t1)
    int first_whole;  // first tile wholly inside [b, e)
  };
  PFX_HD Range range(int c) const {
    const long long work = static_cast<long long>(tiles) * nk;
    Range g{};
    g.b = static_cast<long long>(c) * chunk;
    g.e = g.b + chunk < work ? g.b + chunk : work;
    if (g.b >= g.e) return g;
    g.t0 = static_cast<int>(g.b / nk), g.s = static_cast<int>(g.b % nk);
    g.t1 = static_cast<int>(g.e / nk), g.r = static_cast<int>(g.e % nk);
    g.first_whole = g.s > 0 ? g.t0 + 1 : g.t0;
    return g;
  }
};

// The chunk for `tiles` tiles of nk k-tiles on `slots` CTAs: split only where whole tiles would
// leave SMs idle in the last round and each range is at least one tile long (chunk >= nk), so a
// range holds at most one head and one tail.
PFX_HD bool ws_split_balances(long long tiles, int slots) { return tiles > slots && tiles % slots != 0; }
PFX_HD int ws_split_chunk(long long tiles, int nk, int slots) {
  if (!ws_split_balances(tiles, slots)) return 0;
  const long long work = tiles * nk;
  return static_cast<int>((work + slots - 1) / slots);
}

}  // namespace pfx::kernels::dev

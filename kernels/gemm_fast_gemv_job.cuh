// What one launch of the decode mat-vec's direct kernel (k_gemv_direct, kernels/gemm_fast_gemv.cu)
// computes: one to three weight matrices of one type and one K against the same activations, each
// into its own output (the attention's Q, K and V projections in one launch), or a SwiGLU pair
// (gate and up, equal N) whose output is fp16(silu(gate·x) · (up·x)).
//
// The work is cut into 16-row tiles numbered across the parts ("virtual tiles" v): part 0's tiles
// first, then part 1's, ... For a SwiGLU pair the tiles alternate, gate tile i at v = 2i and up
// tile i at v = 2i + 1, and a block always takes both (its gate sums wait in shared memory for the
// up sums). Block b takes v = S·b, then the next: v + 1 inside a group of S (S = 2 for SwiGLU, else
// 1), v + S·gridDim.x - (S - 1) after a group's last tile.
#pragma once
#include <cuda_runtime.h>

#include <cstdint>

#include "kernels/gemm_fast.h"
#include "kernels/gemm_fast_gemv_tile.cuh"
#include "util/error.h"

namespace pfx::kernels::dev {

using ::pfx::kernels::kGemvMaxParts;

// A part whose outputs are the attention's inputs (gemv_fast_group_heads): fp16 pairs (2i, 2i+1)
// of each head, rotated (RoPE) or not, into rows [T, N] or the KV-cache layout.
inline constexpr int kGemvHeadRotate = 1, kGemvHeadCache = 2;

struct GemvPart {
  const uint8_t* w;      // row n starts at w + n·row_bytes
  const uint8_t* w_end;  // one past the matrix's last byte
  int64_t row_bytes;
  void* y;    // [T, N]: fp32, or fp16 (a SwiGLU pair's part 0: its a16; a heads part)
  int N;
  int mode;   // EpilogueMode of this part (unused in a SwiGLU pair and a heads part)
  int tile0;  // the part's first virtual tile
  int heads;  // 0, or kGemvHeadRotate | kGemvHeadCache bits: the part stores heads (GemvHeads)
};

// Where heads parts store and the rotation they apply (kernels::GemvRopeTarget).
struct GemvHeads {
  const float2* cos_sin;  // [T][head_dim / 2] (kernels::rope_table)
  const int* p0_dev;      // the first token's position in device memory, or null: p0
  int p0, head_dim, max_ctx;
};

struct GemvJob {
  GemvPart part[kGemvMaxParts];
  const uint16_t* x;  // [T, K] fp16, 16-byte aligned
  int K;
  int parts;   // 1 .. kGemvMaxParts (2 for a SwiGLU pair)
  int tiles;   // virtual tiles of the launch
  int swiglu;  // 1: parts 0 and 1 are gate and up
  // 1: part 0 is gate and up interleaved in one repacked matrix (k_gemv_ws on gemm_ws_repack_swiglu):
  // each 16-row tile v holds gate rows 8v .. 8v+7 then the up rows of the same outputs; N = gate's rows.
  int interleaved;
  GemvHeads heads;
};

// The part and first row of virtual tile v.
struct GemvTileAt {
  int part, n0;
};
PFX_HD GemvTileAt gemv_locate(const GemvJob& j, int v) {
  if (j.swiglu) return {v & 1, (v >> 1) * kGemvRows};
  int p = 0;
  if (j.parts > 1 && v >= j.part[1].tile0) p = 1;
  if (j.parts > 2 && v >= j.part[2].tile0) p = 2;
  return {p, (v - j.part[p].tile0) * kGemvRows};
}

// Tiles per group: a block takes a whole group before it moves on.
PFX_HD int gemv_group(const GemvJob& j) { return j.swiglu ? 2 : 1; }

// The virtual tile a block takes after v, with `blocks` blocks in the grid.
// (Written without v % gemv_group(j): a modulo by a runtime value is an integer division, ~25
// instructions per warp and tile in the kernel's SASS.)
PFX_HD int gemv_next_tile(const GemvJob& j, int v, int blocks) {
  if (!j.swiglu) return v + blocks;
  return (v & 1) ? v + 2 * blocks - 1 : v + 1;
}

// Row n of a part (clamped into the matrix: a ragged last tile reads its last row again; those
// outputs are never stored).
PFX_HD const uint8_t* gemv_part_row(const GemvPart& q, int n) {
  return q.w + static_cast<int64_t>(n < q.N ? n : q.N - 1) * q.row_bytes;
}

// fn.template operator()<kT>() for the runtime token count T in 1..kGemvMaxT: one kernel
// instantiation per T (the decode kernels keep T tokens' fragments in registers).
template <class Fn>
void with_token_count(int T, Fn&& fn) {
  static_assert(kGemvMaxT == 8, "one instantiation per T in 1..kGemvMaxT");
  switch (T) {
    case 1: return fn.template operator()<1>();
    case 2: return fn.template operator()<2>();
    case 3: return fn.template operator()<3>();
    case 4: return fn.template operator()<4>();
    case 5: return fn.template operator()<5>();
    case 6: return fn.template operator()<6>();
    case 7: return fn.template operator()<7>();
    case 8: return fn.template operator()<8>();
    default: fail("decode mat-vec: T = ", T, " outside 1..", kGemvMaxT);
  }
}

}  // namespace pfx::kernels::dev

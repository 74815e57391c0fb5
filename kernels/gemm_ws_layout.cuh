// Weight layout of the warp-specialized fused GEMM (kernels/gemm_ws.h): a load-time repack of a
// q4_K / q5_K / q6_K / q8_0 / f16 matrix that keeps every bit of its GGUF blocks (reordered; the
// 6-bit scales and mins of q4_K and q5_K each get a byte of their own) so that a consumer thread's
// A fragments of a 64-wide k-tile come from one or two 16-byte shared-memory loads (q5_K: and one
// 4-byte load), plus its rows' scales; and the exact decoders from those words to the fragments.
// __host__ __device__ throughout: the host tests run this very code against quant::dequantize_row.
//
// Geometry. The CTA's M side is 128 weight rows = two 64-row panels, one per consumer warpgroup;
// thread t (0..127) of a warpgroup holds, per 16-wide k step s of a k-tile, the wgmma A fragment
// of rows ws_row(t, 0|1) at k = ws_k(t, s, e) (e = 0..3; kernels/ptx.cuh gives the fragment).
// Rows are padded with zeros to a multiple of 128. K is cut into groups (K-quants: a 256-wide
// super-block = 4 k-tiles; q8_0/f16: one 64-wide k-tile). For panel pair P and group G the
// repacked bytes are one contiguous chunk:
//   [k-tile 0: quants of panel 0 (kQuantBytes), of panel 1] ... [k-tile kTiles-1: ...]
//   [scales of panel 0 (kScaleBytes), of panel 1]
// chunks ordered P-major, then G. One pipeline stage (one k-tile) is then two bulk copies: the
// k-tile's quants of both panels and the group's scales of both panels.
//
// Per panel and k-tile, the quants of thread t (w = t / 32, g = lane / 4, c = lane % 4):
//  q4_K  16 B at 16t: word s = step s; byte b: low nibble = q(row 0, e = b), high = q(row 1, b).
//  q5_K  16 B at 16t: the low 4 bits of q, as q4_K; 4 B at 2048 + 4t: byte b, bit 2s + h = the
//        fifth bit (q >> 4) of (row half h, step s) at e = b.
//  q6_K  16 B at 16t: the low 4 bits of q, as q4_K; 8 B at 2048 + 8t: word h = steps 2h, 2h+1;
//        byte b: bits 0-1 / 2-3 / 4-5 / 6-7 = q >> 4 of (row 0, step 2h), (row 1, 2h), (row 0, 2h+1),
//        (row 1, 2h+1) at e = b.
//  q8_0  16 B at 16t (steps 0, 1) and 16 B at 2048 + 16t (steps 2, 3): words (s row 0, s row 1,
//        s+1 row 0, s+1 row 1); byte b = the int8 q at e = b.
//  f16   16 B at 2048s + 16t per step s: the four A registers as the fragment orders them.
// Scales per panel, rows r = 0..63 of the panel:
//  q4_K  20 B at 20r: d, dmin (fp16 bits as in the block), then for k-tile j of the super-block
//        the bytes sc(2j), m(2j), sc(2j+1), m(2j+1) (ggml's get_scale_min_k4 values, 0..63).
//  q5_K  as q4_K (the same d, dmin and 12 scale bytes lead both blocks).
//  q6_K  16 B at 16r: the int8 scales in k order (the scale of k 16u .. 16u+15 of the super-block
//        at byte u), then d (fp16) at 1024 + 2r.
//  q8_0  4 B at 4r: d of the k-tile's two 32-blocks.
//
// Exactness (same contract as kernels/gemm_fast_weights.cuh): every weight is fp16_rn of ggml's
// fp32 value, every fp32 step rounded where ggml rounds it (the _rn helpers), signed zeros
// included but for q6_K's (below):
//  q4_K  y = fma(q·2^-129, d·sc·2^129, −dmin·m): the quant is read in place from its byte (a float
//        bit pattern below 2^24 is its value times 2^-149: placed_byte), the product is exact, so
//        the one rounding is ggml's subtraction. Needs |d| <= 2^-7 (d·sc·2^129 finite): the
//        repack refuses other matrices (ws_scale_in_range), which then take another path;
//  q5_K  y = fma(q, d·sc, −dmin·m) with q = 0..31 from 2^23 + q: q·(d·sc) has at most 22 bits;
//  q6_K  y = fma(q·2^-131, d·sc·2^131, −32·d·sc) = (d·sc)·(q − 32), exact in fp32 (≤ 23
//        significant bits), rounded once to fp16; needs |d| < 2^-10. A zero may be +0 where
//        ggml's is −0: no wgmma sum sees a zero weight's sign (accumulators start at +0);
//  q8_0  y = fp16_rn(q·d) as one half2 multiply (q·d is exact in fp32);
//  f16   the bits as stored.
#pragma once
#include <cstdint>
#include <type_traits>

#include "kernels/gemm_fast_weights.cuh"
#include "quant/types.h"

namespace pfx::kernels::dev {

// The weight types, as ggml type ids (base/quant/types.h): the template argument of everything here.
inline constexpr int kWsQ4K = static_cast<int>(quant::Type::Q4_K), kWsQ5K = static_cast<int>(quant::Type::Q5_K),
                     kWsQ6K = static_cast<int>(quant::Type::Q6_K), kWsQ8_0 = static_cast<int>(quant::Type::Q8_0),
                     kWsF16 = static_cast<int>(quant::Type::F16);

// Row (within the warpgroup's 64-row panel) and k (within the 64-wide k-tile) of element e
// (0..3) of thread t's A fragment at step s; half 0/1 = fragment rows g / g+8.
PFX_HD int ws_row(int t, int half) { return 16 * (t >> 5) + ((t & 31) >> 2) + 8 * half; }
PFX_HD int ws_k(int t, int s, int e) { return 16 * s + 2 * (t & 3) + (e & 1) + 8 * (e >> 1); }

// Byte `b` of `word_x80` (an int8 with its sign bit flipped) as a float, exactly.
PFX_HD float ws_int8_float(uint32_t word_x80, int b) { return fsub_rn(byte_plus_2p23(word_x80, b), 8388736.0f); }

// Whether a GGUF block's scale d (fp16 bits) is inside the range the decoders below take: the
// one-FMA decode's (placed_q4k_scale_ok / placed_q6k_scale_ok) for q4_K and q6_K, any d otherwise.
PFX_HD bool ws_scale_in_range(int type, uint32_t d_bits) {
  return type == kWsQ4K ? placed_q4k_scale_ok(d_bits) : type == kWsQ6K ? placed_q6k_scale_ok(d_bits) : true;
}
// Where a block keeps that d: q4_K at byte 0, q6_K at byte 208 (-1: no range to check).
PFX_HD int ws_scale_offset_in_block(int type) { return type == kWsQ4K ? 0 : type == kWsQ6K ? 208 : -1; }

// ---- GGUF source: one weight's quant and its block's scale fields ---------------------------
struct WsSourceQ4K {
  PFX_HD static int q(const uint8_t* row, int64_t k) {
    const uint8_t* blk = row + (k >> 8) * 144;
    const int i = static_cast<int>(k & 255);
    const uint8_t byte = blk[16 + 32 * (i >> 6) + (i & 31)];
    return ((i >> 5) & 1) ? byte >> 4 : byte & 15;
  }
};
// q5_K: q4_K's nibbles (at byte 48) plus bit 2·chunk + high of qh[l] (at byte 16) as bit 4,
// kernels/dequant_decode.cuh's DecodeK4<BlockQ5_K> element for element.
struct WsSourceQ5K {
  PFX_HD static int q(const uint8_t* row, int64_t k) {  // 0..31
    const uint8_t* blk = row + (k >> 8) * 176;
    const int i = static_cast<int>(k & 255), sub = i >> 5, l = i & 31;
    const uint8_t byte = blk[48 + 32 * (i >> 6) + l];
    const int lo = (sub & 1) ? byte >> 4 : byte & 15;
    return lo | (((blk[16 + l] >> sub) & 1) << 4);
  }
};
struct WsSourceQ6K {
  PFX_HD static int q(const uint8_t* row, int64_t k) {  // 0..63 (ggml subtracts 32)
    const uint8_t* blk = row + (k >> 8) * 210;
    const int i = static_cast<int>(k & 255), h = i >> 7, e = i & 127, r = e >> 5, l = e & 31;
    const int lo = (blk[64 * h + l + 32 * (r & 1)] >> (4 * (r >> 1))) & 15;
    const int hi = (blk[128 + 32 * h + l] >> (2 * r)) & 3;
    return lo | (hi << 4);
  }
  // The scale byte of k 16u .. 16u+15 of the super-block (u = 0..15).
  PFX_HD static uint8_t scale(const uint8_t* blk, int u) {
    const int h = u >> 3, r = (u & 7) >> 1, l16 = u & 1;
    return blk[192 + 8 * h + l16 + 2 * r];
  }
};

// ---- the repacked layout ----------------------------------------------------------------------
// A layout's shape: K per group, k-tiles per group, quant and scale bytes per panel, and the GGUF
// source block (elements, bytes).
template <int kGroup, int kTilesPerGroup, int kPanelQuantBytes, int kPanelScaleBytes, int64_t kBlockElems,
          int64_t kBlockBytes>
struct WsShape {
  static constexpr int kGroupK = kGroup, kTiles = kTilesPerGroup, kQuantBytes = kPanelQuantBytes,
                       kScaleBytes = kPanelScaleBytes;
  static constexpr int64_t kSrcBlockElems = kBlockElems, kSrcBlockBytes = kBlockBytes;
};

template <int kType>
struct WsLayout;
template <>
struct WsLayout<kWsQ4K> : WsShape<256, 4, 2048, 64 * 20, 256, 144> {};
template <>
struct WsLayout<kWsQ5K> : WsShape<256, 4, 2560, 64 * 20, 256, 176> {};
template <>
struct WsLayout<kWsQ6K> : WsShape<256, 4, 3072, 64 * 18, 256, 210> {};
template <>
struct WsLayout<kWsQ8_0> : WsShape<64, 1, 4096, 64 * 4, 32, 34> {};
template <>
struct WsLayout<kWsF16> : WsShape<64, 1, 8192, 0, 1, 2> {};

template <class L>
PFX_HD constexpr int64_t ws_group_bytes() {
  return int64_t{2} * (L::kTiles * L::kQuantBytes + L::kScaleBytes);
}
PFX_HD int64_t ws_pairs(int64_t rows) { return (rows + 127) / 128; }
template <class L>
PFX_HD int64_t ws_repacked_bytes(int64_t rows, int64_t cols) {
  return ws_pairs(rows) * (cols / L::kGroupK) * ws_group_bytes<L>();
}
// Byte offsets of k-tile kt's quants (both panels) and of its group's scales (both panels).
template <class L>
PFX_HD int64_t ws_quant_offset(int64_t pair, int64_t kt, int64_t n_groups) {
  const int64_t g = kt / L::kTiles;
  return (pair * n_groups + g) * ws_group_bytes<L>() + (kt % L::kTiles) * 2 * L::kQuantBytes;
}
template <class L>
PFX_HD int64_t ws_scale_offset(int64_t pair, int64_t kt, int64_t n_groups) {
  const int64_t g = kt / L::kTiles;
  return (pair * n_groups + g) * ws_group_bytes<L>() + L::kTiles * 2 * L::kQuantBytes;
}

// Where the rows of the repacked matrix come from: row R of a plain repack is row R of `a`; an
// interleaved (SwiGLU) repack of gate `a` and up `b` puts, in each 16-row block G, gate rows
// 8G .. 8G+7 then up rows 8G .. 8G+7, so one thread's fragment rows g and g+8 are gate and up of
// the same output column. Rows past the source are zeros (nullptr).
struct WsRowSource {
  const uint8_t* a;
  const uint8_t* b;  // nullptr: plain
  int64_t rows;      // source rows (each of a and b)
  int64_t row_bytes;
  PFX_HD const uint8_t* row(int64_t R) const {
    if (b == nullptr) return R < rows ? a + R * row_bytes : nullptr;
    const int64_t n = 8 * (R >> 4) + (R & 7);
    if (n >= rows) return nullptr;
    return ((R & 8) ? b : a) + n * row_bytes;
  }
  PFX_HD int64_t out_rows() const { return b == nullptr ? rows : 2 * rows; }
};

// The 32-bit word at byte offset `in` (a multiple of 4) of the chunk of panel pair `pair` and
// k-group `group` (the device repack: one block per chunk, no 64-bit divisions per word).
template <int kType>
PFX_HD uint32_t ws_repacked_word_at(const WsRowSource& src, int64_t pair, int64_t group, int in);

// The 32-bit word at byte offset `off` (a multiple of 4) of the repacked matrix with K = cols.
template <int kType>
PFX_HD uint32_t ws_repacked_word(const WsRowSource& src, int64_t cols, int64_t off) {
  using L = WsLayout<kType>;
  const int64_t gb = ws_group_bytes<L>(), n_groups = cols / L::kGroupK, chunk = off / gb;
  return ws_repacked_word_at<kType>(src, chunk / n_groups, chunk % n_groups, static_cast<int>(off % gb));
}

namespace ws_detail {
struct Place {
  int64_t pair, group;
  int in;  // byte offset inside the group chunk
};
PFX_HD uint16_t u16(const uint8_t* p) { return static_cast<uint16_t>(p[0] | (p[1] << 8)); }

// Byte `in` of a chunk that lies in the quant region of layout L (two panels of kQuantBytes per
// k-tile): k-tile kt of the group, panel (0/1), offset o inside the panel, the panel's first row r0.
struct QuantSpot {
  int kt, panel, o;
  int64_t r0;
};
template <class L>
PFX_HD QuantSpot quant_spot(const Place& p) {
  const int kt = static_cast<int>(p.in / (2 * L::kQuantBytes));
  const int rem = static_cast<int>(p.in % (2 * L::kQuantBytes));
  const int panel = rem / L::kQuantBytes;
  return QuantSpot{kt, panel, rem % L::kQuantBytes, p.pair * 128 + panel * 64};
}

// The word of nibble pairs at quant offset o < 2048 (t = o / 16, step s = (o % 16) / 4): byte b
// packs quant(row, k) & 15 of the thread's two rows at k = k0 + ws_k(t, s, b), low nibble row 0.
template <class Quant>
PFX_HD uint32_t nibble_pair_word(const WsRowSource& src, int64_t r0, int64_t k0, int o, Quant quant) {
  const int t = o / 16, s = (o % 16) / 4;
  const uint8_t* row0 = src.row(r0 + ws_row(t, 0));
  const uint8_t* row1 = src.row(r0 + ws_row(t, 1));
  uint32_t word = 0;
  for (int b = 0; b < 4; ++b) {
    const int64_t k = k0 + ws_k(t, s, b);
    const int lo = row0 ? quant(row0, k) : 0, hi = row1 ? quant(row1, k) : 0;
    word |= static_cast<uint32_t>(lo | (hi << 4)) << (8 * b);
  }
  return word;
}

// A word of the scale region of the K4 types (q4_K, q5_K; scale offset `rem` of the group's
// chunk): 20 B per row, d and dmin, then per k-tile the four sc / m bytes of its two sub-blocks.
// Both block formats open with d, dmin and ggml's 12 packed scale bytes.
template <class L>
PFX_HD uint32_t k4_scale_word(const WsRowSource& src, const Place& p, int rem) {
  const int panel = rem / L::kScaleBytes, o = rem % L::kScaleBytes;
  const int r = o / 20, f = (o % 20) / 4;
  const uint8_t* row = src.row(p.pair * 128 + panel * 64 + r);
  if (row == nullptr) return 0;
  const uint8_t* blk = row + p.group * L::kSrcBlockBytes;
  if (f == 0) return static_cast<uint32_t>(u16(blk)) | (static_cast<uint32_t>(u16(blk + 2)) << 16);
  const int j = f - 1;
  int sc0, m0, sc1, m1;
  scale_min_k4(2 * j, blk + 4, sc0, m0);
  scale_min_k4(2 * j + 1, blk + 4, sc1, m1);
  return static_cast<uint32_t>(sc0) | (static_cast<uint32_t>(m0) << 8) | (static_cast<uint32_t>(sc1) << 16) |
         (static_cast<uint32_t>(m1) << 24);
}
}  // namespace ws_detail

template <>
PFX_HD uint32_t ws_repacked_word_at<kWsQ4K>(const WsRowSource& src, int64_t pair, int64_t group, int in) {
  using L = WsLayout<kWsQ4K>;
  const ws_detail::Place p{pair, group, in};
  const int64_t quant_end = L::kTiles * 2 * L::kQuantBytes;
  if (p.in < quant_end) {
    const ws_detail::QuantSpot q = ws_detail::quant_spot<L>(p);
    return ws_detail::nibble_pair_word(src, q.r0, p.group * L::kGroupK + q.kt * 64, q.o,
                                       [](const uint8_t* row, int64_t k) { return WsSourceQ4K::q(row, k); });
  }
  return ws_detail::k4_scale_word<L>(src, p, static_cast<int>(p.in - quant_end));
}

template <>
PFX_HD uint32_t ws_repacked_word_at<kWsQ5K>(const WsRowSource& src, int64_t pair, int64_t group, int in) {
  using L = WsLayout<kWsQ5K>;
  const ws_detail::Place p{pair, group, in};
  const int64_t quant_end = L::kTiles * 2 * L::kQuantBytes;
  if (p.in >= quant_end) return ws_detail::k4_scale_word<L>(src, p, static_cast<int>(p.in - quant_end));
  const ws_detail::QuantSpot q = ws_detail::quant_spot<L>(p);
  const int64_t k0 = p.group * L::kGroupK + q.kt * 64;
  if (q.o < 2048)  // low nibbles
    return ws_detail::nibble_pair_word(src, q.r0, k0, q.o,
                                       [](const uint8_t* row, int64_t k) { return WsSourceQ5K::q(row, k) & 15; });
  const int t = (q.o - 2048) / 4;  // fifth bits: byte b, bit 2s + h
  const uint8_t* rows[2] = {src.row(q.r0 + ws_row(t, 0)), src.row(q.r0 + ws_row(t, 1))};
  uint32_t word = 0;
  for (int b = 0; b < 4; ++b)
    for (int s = 0; s < 4; ++s)
      for (int h = 0; h < 2; ++h)
        if (rows[h] != nullptr)
          word |= static_cast<uint32_t>(WsSourceQ5K::q(rows[h], k0 + ws_k(t, s, b)) >> 4) << (8 * b + 2 * s + h);
  return word;
}

template <>
PFX_HD uint32_t ws_repacked_word_at<kWsQ6K>(const WsRowSource& src, int64_t pair, int64_t group, int in) {
  using L = WsLayout<kWsQ6K>;
  const ws_detail::Place p{pair, group, in};
  const int64_t quant_end = L::kTiles * 2 * L::kQuantBytes;
  uint32_t word = 0;
  if (p.in < quant_end) {
    const ws_detail::QuantSpot q = ws_detail::quant_spot<L>(p);
    const int64_t r0 = q.r0, k0 = p.group * L::kGroupK + q.kt * 64;
    const int o = q.o;
    if (o < 2048) {  // low nibbles
      word = ws_detail::nibble_pair_word(src, r0, k0, o,
                                         [](const uint8_t* row, int64_t k) { return WsSourceQ6K::q(row, k) & 15; });
    } else {  // high 2 bits
      const int t = (o - 2048) / 8, h = ((o - 2048) % 8) / 4;
      const uint8_t* rows[2] = {src.row(r0 + ws_row(t, 0)), src.row(r0 + ws_row(t, 1))};
      for (int b = 0; b < 4; ++b) {
        uint32_t byte = 0;
        for (int f = 0; f < 4; ++f) {  // field f: (row f % 2, step 2h + f / 2)
          const uint8_t* row = rows[f & 1];
          const int64_t k = k0 + ws_k(t, 2 * h + (f >> 1), b);
          byte |= static_cast<uint32_t>(row ? WsSourceQ6K::q(row, k) >> 4 : 0) << (2 * f);
        }
        word |= byte << (8 * b);
      }
    }
    return word;
  }
  const int rem = static_cast<int>(p.in - quant_end);
  const int panel = rem / L::kScaleBytes, o = rem % L::kScaleBytes;
  const int64_t r0 = p.pair * 128 + panel * 64;
  if (o < 1024) {
    const uint8_t* row = src.row(r0 + o / 16);
    if (row == nullptr) return 0;
    const uint8_t* blk = row + p.group * L::kSrcBlockBytes;
    const int u0 = o % 16;
    for (int b = 0; b < 4; ++b) word |= static_cast<uint32_t>(WsSourceQ6K::scale(blk, u0 + b)) << (8 * b);
    return word;
  }
  const int r = (o - 1024) / 2;  // two rows' d per word
  for (int i = 0; i < 2; ++i) {
    const uint8_t* row = src.row(r0 + r + i);
    if (row != nullptr) word |= static_cast<uint32_t>(ws_detail::u16(row + p.group * L::kSrcBlockBytes + 208)) << (16 * i);
  }
  return word;
}

template <>
PFX_HD uint32_t ws_repacked_word_at<kWsQ8_0>(const WsRowSource& src, int64_t pair, int64_t group, int in) {
  using L = WsLayout<kWsQ8_0>;
  const ws_detail::Place p{pair, group, in};
  const int64_t quant_end = 2 * L::kQuantBytes;
  uint32_t word = 0;
  const int64_t k0 = p.group * 64;
  if (p.in < quant_end) {
    const int panel = static_cast<int>(p.in / L::kQuantBytes), o = static_cast<int>(p.in % L::kQuantBytes);
    const int region = o / 2048, t = (o % 2048) / 16, wi = (o % 16) / 4;
    const int s = 2 * region + (wi >> 1), half = wi & 1;
    const uint8_t* row = src.row(p.pair * 128 + panel * 64 + ws_row(t, half));
    if (row == nullptr) return 0;
    for (int b = 0; b < 4; ++b) {
      const int64_t k = k0 + ws_k(t, s, b);
      word |= static_cast<uint32_t>(row[(k >> 5) * 34 + 2 + (k & 31)]) << (8 * b);
    }
    return word;
  }
  const int rem = static_cast<int>(p.in - quant_end);
  const int panel = rem / L::kScaleBytes, r = (rem % L::kScaleBytes) / 4;
  const uint8_t* row = src.row(p.pair * 128 + panel * 64 + r);
  if (row == nullptr) return 0;
  const uint8_t* blk = row + (k0 >> 5) * 34;
  return static_cast<uint32_t>(ws_detail::u16(blk)) | (static_cast<uint32_t>(ws_detail::u16(blk + 34)) << 16);
}

template <>
PFX_HD uint32_t ws_repacked_word_at<kWsF16>(const WsRowSource& src, int64_t pair, int64_t group, int in) {
  using L = WsLayout<kWsF16>;
  const ws_detail::Place p{pair, group, in};
  const int panel = static_cast<int>(p.in / L::kQuantBytes), o = static_cast<int>(p.in % L::kQuantBytes);
  const int s = o / 2048, t = (o % 2048) / 16, wi = (o % 16) / 4;
  const int half = wi & 1, e0 = 2 * (wi >> 1);  // registers: (row 0, e 0/1), (row 1, e 0/1), (row 0, e 2/3), (row 1, e 2/3)
  const uint8_t* row = src.row(p.pair * 128 + panel * 64 + ws_row(t, half));
  if (row == nullptr) return 0;
  const int64_t k = p.group * 64 + ws_k(t, s, e0);  // e0 and e0+1 are adjacent in k
  return static_cast<uint32_t>(ws_detail::u16(row + 2 * k)) | (static_cast<uint32_t>(ws_detail::u16(row + 2 * k + 2)) << 16);
}

// ---- decoders: a thread's k-tile words -> A fragments ---------------------------------------
// Per k-tile a consumer thread t (a) computes its share of its quad's scales, lane_scales(): the
// four lanes of a quad (t / 4 equal) hold the same two fragment rows, so each lane computes two
// of the quad's eight scale values and the quad exchanges them (the kernel with shuffles, the
// host tests by calling every lane): value v of lane c goes to set_scale(c, v, ...); (b) loads its
// quants, load(); (c) per k16 step s, step() writes the 4 A registers. `quants` and `scales`
// point at the stage's block of the thread's panel (shared memory on the device, any memory on
// the host); kt is the k-tile's index inside its group.

// q4_K / q5_K: lane c's pair of a quad, row half c / 2 and sub-block c % 2 of the k-tile ->
// (d·sc, dmin·m), exact.
// From the words of the row's record: dd = (d, dmin), sm = the k-tile's (sc, m, sc, m) bytes.
PFX_HD void ws_k4_lane_scales_of(uint32_t dd, uint32_t sm, int t, float& v0, float& v1) {
  const int b = 2 * (t & 1);
  v0 = fmul_rn(half_bits_to_float(dd), byte_float(sm, b));
  v1 = fmul_rn(half_bits_to_float(dd >> 16), byte_float(sm, b + 1));
}
// The record words of thread t's row half for k-tile kt (scales: the panel's scale block).
PFX_HD void ws_k4_record_words(const uint8_t* scales, int t, int kt, uint32_t& dd, uint32_t& sm) {
  const uint8_t* rec = scales + 20 * ws_row(t, (t & 3) >> 1);
  dd = *reinterpret_cast<const uint32_t*>(rec);
  sm = *reinterpret_cast<const uint32_t*>(rec + 4 + 4 * kt);
}

struct WsDecodeQ4K {
  static constexpr int kType = kWsQ4K;
  static constexpr bool kQuadScales = true;
  uint4 q;
  float d1[2][2], m1[2][2];  // [fragment row half][sub-block of the k-tile]: d·sc·2^129, dmin·m (exact)
  // Lane c's pair: (d·sc·2^129, dmin·m). The two power-of-two products are exact while the
  // repack's scales are in range (|d| <= 2^-7: ws_scale_in_range).
  PFX_HD static void lane_scales(const uint8_t* scales, int t, int kt, float& v0, float& v1) {
    uint32_t dd, sm;
    ws_k4_record_words(scales, t, kt, dd, sm);
    lane_scales_of(dd, sm, t, v0, v1);
  }
  // The same from the record's words (the decode mat-vec, kernels/gemv_ws_lane.cuh).
  PFX_HD static void lane_scales_of(uint32_t dd, uint32_t sm, int t, float& v0, float& v1) {
    ws_k4_lane_scales_of(dd, sm, t, v0, v1);
    v0 = fmul_rn(fmul_rn(v0, 0x1p64f), 0x1p65f);
  }
  PFX_HD void set_scale(int c, float v0, float v1) { d1[c >> 1][c & 1] = v0, m1[c >> 1][c & 1] = v1; }
  PFX_HD void load(const uint8_t* quants, const uint8_t* /*scales*/, int t, int /*kt*/) {
    q = *reinterpret_cast<const uint4*>(quants + 16 * t);
  }
  // Four weights of one row from bytes 16·q (v, the other bits zero) and d1z = d·sc·2^129: each
  // byte read in place as the float q·2^-129 (placed_byte), so one FMA gives RN(d·sc·q - dmin·m),
  // ggml's value with its one rounding (zeros signed as ggml's), where the byte's 2^23 + q form
  // needed a subtraction first.
  PFX_HD static void row4(uint32_t v, float d1z, float m1, uint32_t& e01, uint32_t& e23) {
    placed_fma4(v, d1z, -m1, e01, e23);
  }
  PFX_HD void step(int s, uint32_t (&a)[4]) const {
    const uint32_t w = s == 0 ? q.x : s == 1 ? q.y : s == 2 ? q.z : q.w;
    const int sb = s >> 1;
    row4((w << 4) & 0xF0F0F0F0u, d1[0][sb], m1[0][sb], a[0], a[2]);  // row 0: low nibbles, moved up
    row4(w & 0xF0F0F0F0u, d1[1][sb], m1[1][sb], a[1], a[3]);         // row 1: high nibbles, in place
  }
};

// q5_K: q4_K's scales and the byte's 2^23 + q form (q = 0..31: d·sc·q may need 22 bits, and its
// fast form's range would be half q4_K's), each quant's fifth bit or'ed into bit 4 of its byte
// before the byte is read as a float: row half h of step s has its bits at 2s + h of the bytes of
// `hb`, shifted to bit 4 by a constant per (step, half) once the step loop is unrolled.
struct WsDecodeQ5K {
  static constexpr int kType = kWsQ5K;
  static constexpr bool kQuadScales = true;
  uint4 q;
  uint32_t hb;
  float d1[2][2], m1[2][2];  // [fragment row half][sub-block of the k-tile]: d·sc, dmin·m (exact)
  PFX_HD static void lane_scales(const uint8_t* scales, int t, int kt, float& v0, float& v1) {
    uint32_t dd, sm;
    ws_k4_record_words(scales, t, kt, dd, sm);
    ws_k4_lane_scales_of(dd, sm, t, v0, v1);
  }
  PFX_HD void set_scale(int c, float v0, float v1) { d1[c >> 1][c & 1] = v0, m1[c >> 1][c & 1] = v1; }
  PFX_HD void load(const uint8_t* quants, const uint8_t* /*scales*/, int t, int /*kt*/) {
    q = *reinterpret_cast<const uint4*>(quants + 16 * t);
    hb = *reinterpret_cast<const uint32_t*>(quants + 2048 + 4 * t);
  }
  // Four weights of one row from whole bytes q (0..31): y = fma(q, d·sc, -dmin·m).
  PFX_HD static void row4_bytes(uint32_t v, float d1, float m1, uint32_t& e01, uint32_t& e23) {
    float y[4];
PFX_HD_UNROLL
    for (int b = 0; b < 4; ++b) y[b] = fma_rn(byte_float(v, b), d1, -m1);
    e01 = pack_half2_rn(y[0], y[1]);
    e23 = pack_half2_rn(y[2], y[3]);
  }
  // Bit `from` of each byte of v moved to bit 4 (the other bits are masked off by the caller).
  PFX_HD static uint32_t to_bit4(uint32_t v, int from) { return from <= 4 ? v << (4 - from) : v >> (from - 4); }
  PFX_HD void step(int s, uint32_t (&a)[4]) const {
    const uint32_t w = s == 0 ? q.x : s == 1 ? q.y : s == 2 ? q.z : q.w;
    const int sb = s >> 1;
    const uint32_t q0 = (w & 0x0F0F0F0Fu) | (to_bit4(hb, 2 * s) & 0x10101010u);
    const uint32_t q1 = ((w >> 4) & 0x0F0F0F0Fu) | (to_bit4(hb, 2 * s + 1) & 0x10101010u);
    row4_bytes(q0, d1[0][sb], m1[0][sb], a[0], a[2]);
    row4_bytes(q1, d1[1][sb], m1[1][sb], a[1], a[3]);
  }
};

struct WsDecodeQ6K {
  static constexpr int kType = kWsQ6K;
  static constexpr bool kQuadScales = true;
  uint4 lo;
  uint2 hi;
  float ds[2][4];  // [row half][step]: d·sc·2^131 (exact while |d| < 2^-10: ws_scale_in_range)
  // Lane c's pair: row half c / 2, steps 2(c % 2) and 2(c % 2) + 1.
  PFX_HD static void lane_scales(const uint8_t* scales, int t, int kt, float& v0, float& v1) {
    const int r = ws_row(t, (t & 3) >> 1);
    lane_scales_of(*reinterpret_cast<const uint32_t*>(scales + 16 * r + 4 * kt),
                   *reinterpret_cast<const uint16_t*>(scales + 1024 + 2 * r), t, v0, v1);
  }
  // From the row's words: sc4 = the k-tile's four int8 scales, d_bits = d (fp16).
  PFX_HD static void lane_scales_of(uint32_t sc4, uint32_t d_bits, int t, float& v0, float& v1) {
    const int c = t & 3;
    const uint32_t sw = sc4 ^ 0x80808080u;
    const float d = fmul_rn(half_bits_to_float(d_bits), 0x1p66f);
    v0 = fmul_rn(fmul_rn(d, ws_int8_float(sw, 2 * (c & 1))), 0x1p65f);
    v1 = fmul_rn(fmul_rn(d, ws_int8_float(sw, 2 * (c & 1) + 1)), 0x1p65f);
  }
  PFX_HD void set_scale(int c, float v0, float v1) {
    ds[c >> 1][2 * (c & 1)] = v0, ds[c >> 1][2 * (c & 1) + 1] = v1;
  }
  PFX_HD void load(const uint8_t* quants, const uint8_t* /*scales*/, int t, int /*kt*/) {
    lo = *reinterpret_cast<const uint4*>(quants + 16 * t);
    hi = *reinterpret_cast<const uint2*>(quants + 2048 + 8 * t);
  }
  // Four weights from bytes 4·q (q = 0..63) and dsz = d·sc·2^131: the byte read in place is
  // q·2^-131, and fma(q·2^-131, dsz, -32·d·sc) = d·sc·(q - 32) exactly (<= 23 significant bits).
  // A zero comes out +0 where ggml's product is -0 (q = 32 with d·sc < 0, or d·sc = ±0); no
  // wgmma sum sees the sign of a zero weight (its products are zeros, accumulators start at +0).
  PFX_HD static void row4(uint32_t q6x4, float dsz, uint32_t& e01, uint32_t& e23) {
    placed_fma4(q6x4, dsz, fmul_rn(dsz, -0x1p-126f) /* -32·d·sc, exact */, e01, e23);
  }
  PFX_HD void step(int s, uint32_t (&a)[4]) const {
    const uint32_t l = s == 0 ? lo.x : s == 1 ? lo.y : s == 2 ? lo.z : lo.w;
    const uint32_t h = (s >> 1) ? hi.y : hi.x;
    const uint32_t hsh = (s & 1) ? h >> 4 : h;  // fields of this step at bits 0-1 (row 0), 2-3 (row 1)
    const uint32_t q0 = ((l << 2) & 0x3C3C3C3Cu) | ((hsh << 6) & 0xC0C0C0C0u);  // 4·q
    const uint32_t q1 = ((l >> 2) & 0x3C3C3C3Cu) | ((hsh << 4) & 0xC0C0C0C0u);
    row4(q0, ds[0][s], a[0], a[2]);
    row4(q1, ds[1][s], a[1], a[3]);
  }
};

struct WsDecodeQ8_0 {
  static constexpr int kType = kWsQ8_0;
  static constexpr bool kQuadScales = false;  // one byte permute per scale: cheaper than shuffles
  uint4 qa, qb;       // steps 0-1, 2-3
  uint32_t d2[2][2];  // [row half][block]: (d, d)
  PFX_HD static void lane_scales(const uint8_t*, int, int, float&, float&) {}
  PFX_HD void set_scale(int, float, float) {}
  PFX_HD void load(const uint8_t* quants, const uint8_t* scales, int t, int /*kt*/) {
    qa = *reinterpret_cast<const uint4*>(quants + 16 * t);
    qb = *reinterpret_cast<const uint4*>(quants + 2048 + 16 * t);
PFX_HD_UNROLL
    for (int h = 0; h < 2; ++h) {
      const uint32_t dw = *reinterpret_cast<const uint32_t*>(scales + 4 * ws_row(t, h));
      d2[h][0] = byte_perm(dw, 0, 0x1010);
      d2[h][1] = byte_perm(dw, 0, 0x3232);
    }
  }
  // Four int8 -> fp16_rn(q·d), two half2 words.
  PFX_HD static void row4(uint32_t w, uint32_t d2, uint32_t& e01, uint32_t& e23) {
    const uint32_t u = w ^ 0x80808080u;  // q + 128 as unsigned bytes
    const uint32_t bias = 0x64806480u;   // (1152, 1152): 0x64XX is 1024 + XX
    e01 = hmul2_rn(hsub2(byte_perm(u, 0x64646464u, 0x4140u), bias), d2);
    e23 = hmul2_rn(hsub2(byte_perm(u, 0x64646464u, 0x4342u), bias), d2);
  }
  PFX_HD void step(int s, uint32_t (&a)[4]) const {
    const uint4& q = s < 2 ? qa : qb;
    const uint32_t w0 = (s & 1) ? q.z : q.x, w1 = (s & 1) ? q.w : q.y;
    row4(w0, d2[0][s >> 1], a[0], a[2]);
    row4(w1, d2[1][s >> 1], a[1], a[3]);
  }
};

struct WsDecodeF16 {
  static constexpr int kType = kWsF16;
  static constexpr bool kQuadScales = false;
  const uint8_t* quants;
  int t;
  PFX_HD static void lane_scales(const uint8_t*, int, int, float&, float&) {}
  PFX_HD void set_scale(int, float, float) {}
  PFX_HD void load(const uint8_t* q, const uint8_t* /*scales*/, int thread, int /*kt*/) {
    quants = q;
    t = thread;
  }
  PFX_HD void step(int s, uint32_t (&a)[4]) const {
    const uint4 v = *reinterpret_cast<const uint4*>(quants + 2048 * s + 16 * t);
    a[0] = v.x, a[1] = v.y, a[2] = v.z, a[3] = v.w;
  }
};

// The decoder of each type id: the one of the list whose kType it is.
template <int kType, class... Decoders>
struct WsDecoderOf;
template <int kType, class First, class... Rest>
struct WsDecoderOf<kType, First, Rest...> {
  using type = std::conditional_t<First::kType == kType, First, typename WsDecoderOf<kType, Rest...>::type>;
};
template <int kType>
struct WsDecoderOf<kType> {
  using type = void;  // no decoder: a use fails to compile
};
template <int kType>
struct WsDecoder : WsDecoderOf<kType, WsDecodeQ4K, WsDecodeQ5K, WsDecodeQ6K, WsDecodeQ8_0, WsDecodeF16> {};

}  // namespace pfx::kernels::dev

// CPU checks of the decode mat-vec's staging and MMA fragments (kernels/gemm_fast_gemv_tile.cuh),
// label cpu: the kernel's own __host__ __device__ functions run here with the cp.async copies and
// the mma.sync emulated.
//  - every copy stays inside its stage, no two copies overlap, weight sources lie inside the tensor
//    (clamped to zero-fill at its end) and activation sources inside X;
//  - every weight a lane puts in an A fragment is bit-identical to fp16_rn(dequantize_row) of the
//    k it claims (k0(p, tq) + e), and the k of a unit are covered exactly once;
//  - the whole mat-vec assembled from the emulated m16n8k16 (PTX ISA fragment layouts) matches a
//    float64 reference: a weight or activation in the wrong fragment slot cannot pass.
// Shapes: N not a multiple of 16 (rows past N), q6_K / q8_0 rows at every misalignment, partial last
// units (q8_0 / f16 with K % 256 != 0), T = 1, 3 and 8.
// The direct kernel (kernels/gemm_fast_gemv_direct.cuh: q4_K, q5_K, q6_K) the same way: its lanes'
// loads straight from "global memory" (every byte read must lie inside the tensor), fragments
// exact, emulated MMAs into its two accumulators vs float64.
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <new>
#include <random>
#include <set>
#include <vector>

#include "gemm_reference.h"
#include "kernels/gemm_fast_gemv_direct.cuh"
#include "kernels/gemm_fast_gemv_job.cuh"
#include "kernels/gemm_fast_gemv_tile.cuh"
#include "quant/fp16.h"

namespace pfx::kernels::test {
namespace {

using namespace dev;

// 64-byte-aligned bytes with guard bytes after the payload (a read past the end shows up as garbage).
struct Aligned {
  explicit Aligned(size_t bytes) : n(bytes), p(new (std::align_val_t(64)) uint8_t[bytes + 64]) {
    std::memset(p, 0, n);
    std::memset(p + n, 0xA5, 64);
  }
  ~Aligned() { operator delete[](p, std::align_val_t(64)); }
  Aligned(const Aligned&) = delete;  // owns the allocation
  Aligned& operator=(const Aligned&) = delete;
  size_t n;
  uint8_t* p;
};

// One m16n8k16 MMA of a warp as 32 lanes' registers.
struct MmaRegs {
  std::array<std::array<uint32_t, 4>, 32> a{};
  std::array<std::array<uint32_t, 2>, 32> b{};
};

double half_at(uint32_t reg, int which) { return quant::fp16_to_fp32(static_cast<uint16_t>(reg >> (16 * which))); }

// D[16][8] += A[16][16] · B[16][8], fragments as in the PTX ISA (mma.m16n8k16, .f16 A row / B col):
// A element (row, k): lane 4·(row % 8) + (k % 8) / 2, register (row / 8) + 2·(k / 8), half k % 2;
// B element (k, col): lane 4·col + (k % 8) / 2, register k / 8, half k % 2.
void emulate_mma(const MmaRegs& m, double (&d)[16][8]) {
  for (int row = 0; row < 16; ++row)
    for (int col = 0; col < 8; ++col) {
      double s = 0;
      for (int k = 0; k < 16; ++k) {
        const double a = half_at(m.a[static_cast<size_t>(4 * (row % 8) + (k % 8) / 2)][static_cast<size_t>(row / 8 + 2 * (k / 8))], k % 2);
        const double b = half_at(m.b[static_cast<size_t>(4 * col + (k % 8) / 2)][static_cast<size_t>(k / 8)], k % 2);
        s += a * b;
      }
      d[row][col] += s;
    }
}

// The weights one MMA's A fragment `a` of a lane claims: rows n_lo (regs 0, 2) and n_lo + 8 (1, 3)
// at k .. k + 3, each against fp16_rn(dequantize_row); rows past N are not checked.
void check_claimed(const uint32_t (&a)[4], const std::vector<uint16_t>& w16, int64_t N, int64_t K, int64_t n_lo, int64_t k,
                   int64_t& checked, int64_t& bad, const char* what) {
  for (int h = 0; h < 2; ++h) {
    const int64_t n = n_lo + 8 * h;
    if (n >= N) continue;
    for (int e = 0; e < 4; ++e) {
      const uint16_t got = static_cast<uint16_t>(a[h + 2 * (e / 2)] >> (16 * (e % 2)));
      const uint16_t want = w16[static_cast<size_t>(n * K + k + e)];
      ++checked;
      if (got != want && ++bad <= 8)
        ADD_FAILURE() << what << " row " << n << " k " << k + e << ": 0x" << std::hex << got << ", want 0x" << want << std::dec;
    }
  }
}

// y [T, N] assembled from emulated MMAs against the float64 reference (only the order of exact
// products' additions differs: 1e-12 of Σ|x·w|).
void expect_matches_float64(const std::vector<double>& y, const std::vector<uint16_t>& xh, const std::vector<uint16_t>& w16,
                            int64_t T, int64_t N, int64_t K, const char* what) {
  const Reference ref = reference_gemm(xh, w16, T, N, K);
  int64_t bad_y = 0;
  for (size_t i = 0; i < y.size(); ++i)
    if (std::fabs(y[i] - ref.y[i]) > 1e-12 * ref.abssum[i] + 1e-300 && ++bad_y <= 8)
      ADD_FAILURE() << what << " T=" << T << " y[" << i / static_cast<size_t>(N) << "][" << i % static_cast<size_t>(N)
                    << "] = " << y[i] << ", want " << ref.y[i];
  EXPECT_EQ(bad_y, 0);
}

// What the staged and the direct kernel's checks share: random blocks of a type, their fp16
// reference, X, the "device" copies (with guard bytes), and per (row block n0, unit u) the MMAs of
// all 32 lanes recorded in issue order, every weight a lane claims checked against the reference,
// the MMAs emulated into y; finish() compares y with float64.
template <int kT>
struct WarpEmulation {
  WarpEmulation(uint32_t t, int64_t n, int64_t k, uint64_t seed)
      : type(t), N(n), K(k), rng(seed), raw(random_weights(t, n, k, rng)), w16(reference_weights_f16(t, raw, n, k)),
        xh(random_activations(kT * k, rng)), wdev(raw.size()), xdev(xh.size() * 2),
        src{wdev.p, wdev.p + wdev.n, row_bytes(t, k), reinterpret_cast<const uint16_t*>(xdev.p), static_cast<int>(n),
            static_cast<int>(k)},
        y(static_cast<size_t>(kT * n), 0.0) {
    std::memcpy(wdev.p, raw.data(), raw.size());
    std::memcpy(xdev.p, xh.data(), xh.size() * 2);
  }
  // lane_mmas(lane, mma): lane `lane` issues its n_mmas MMAs of unit u, mma(a[4], b0, b1) each; MMA
  // j is pair j / 2, half j % 2 of the kernel's k map k0(p, tq).
  template <class K0, class LaneMmas>
  void unit(int n0, int u, int n_mmas, K0&& k0, LaneMmas&& lane_mmas) {
    std::vector<MmaRegs> mmas(static_cast<size_t>(n_mmas));
    for (int lane = 0; lane < 32; ++lane) {
      const int g = lane >> 2, tq = lane & 3;
      int j = 0;
      lane_mmas(lane, [&](const uint32_t (&a)[4], uint32_t b0, uint32_t b1) {
        ASSERT_LT(j, n_mmas);
        auto& m = mmas[static_cast<size_t>(j)];
        for (int i = 0; i < 4; ++i) m.a[static_cast<size_t>(lane)][static_cast<size_t>(i)] = a[i];
        m.b[static_cast<size_t>(lane)] = {b0, b1};
        check_claimed(a, w16, N, K, n0 + g, kGemvUnitK * u + k0(j / 2, tq) + 4 * (j % 2), checked, bad, type_name(type));
        ++j;
      });
      ASSERT_EQ(j, n_mmas) << "MMAs of lane " << lane << ", unit " << u;
    }
    double d[16][8] = {};
    for (const MmaRegs& m : mmas) emulate_mma(m, d);
    for (int r = 0; r < 16 && n0 + r < N; ++r)
      for (int t = 0; t < kT; ++t) y[static_cast<size_t>(t * N + n0 + r)] += d[r][t];
  }
  void finish() {
    EXPECT_EQ(bad, 0) << bad << " of " << checked << " weights differ";
    EXPECT_EQ(checked, N * K) << "every weight appears in exactly one A fragment slot";
    expect_matches_float64(y, xh, w16, kT, N, K, type_name(type));
  }

  uint32_t type;
  int64_t N, K;
  std::mt19937_64 rng;
  std::vector<uint8_t> raw;
  std::vector<uint16_t> w16, xh;
  Aligned wdev, xdev;
  GemvSrc src;
  std::vector<double> y;
  int64_t checked = 0, bad = 0;
};

template <class W>
void check_k_map() {
  using U = GemvUnit<W>;
  std::vector<int> seen(kGemvUnitK, 0);
  for (int p = 0; p < kGemvPairs; ++p)
    for (int tq = 0; tq < 4; ++tq) {
      const int k0 = U::k0(p, tq);
      ASSERT_EQ(k0 % 8, 0) << "x chunk of pair " << p << " lane " << tq << " is not 16-byte aligned";
      for (int e = 0; e < 8; ++e) ++seen[static_cast<size_t>(k0 + e)];
      if (U::kPartial) {  // partial units keep whole pairs: pair p covers k in [32p, 32p + 32)
        EXPECT_EQ(k0 / 32, p);
      }
    }
  for (int k = 0; k < kGemvUnitK; ++k) ASSERT_EQ(seen[static_cast<size_t>(k)], 1) << "k " << k << " of a unit";
}

template <class W, int kT>
void check_gemv_tiles(int64_t N, int64_t K, uint64_t seed) {
  using U = GemvUnit<W>;
  WarpEmulation<kT> e(W::kGgmlType, N, K, seed);
  constexpr int kStage = kGemvStageBytes<W, kT>;
  Aligned stage(kStage);
  const int units = static_cast<int>((K + kGemvUnitK - 1) / kGemvUnitK);
  std::set<int> misalignments;
  int64_t bad_copies = 0;
  for (int n0 = 0; n0 < N; n0 += kGemvRows) {
    for (int u = 0; u < units; ++u) {
      // Staging, as the warp's 32 lanes issue it.
      std::memset(stage.p, 0xCC, kStage);
      std::vector<int> written(static_cast<size_t>(kStage), 0);
      for (int lane = 0; lane < 32; ++lane) {
        const GemvCopier<W, kT> copier(e.src, n0, lane);
        copier.stage(u, [&](int off, const void* from, uint32_t bytes) {
          const auto* f = static_cast<const uint8_t*>(from);
          const bool is_x = off >= kGemvWeightBytes<W>;
          const uint8_t* lo = is_x ? e.xdev.p : e.wdev.p;
          const uint8_t* hi = is_x ? e.xdev.p + e.xdev.n : e.wdev.p + e.wdev.n;
          const bool ok = off >= 0 && off + 16 <= kStage && off % 16 == 0 && bytes <= 16 &&
                          reinterpret_cast<uintptr_t>(f) % 16 == 0 && f >= lo && (bytes == 0 || f + bytes <= hi);
          if (!ok) {
            if (++bad_copies <= 4) ADD_FAILURE() << "bad copy: stage offset " << off << ", " << bytes << " bytes";
            return;
          }
          for (int i = 0; i < 16; ++i)
            if (written[static_cast<size_t>(off + i)]++ != 0 && ++bad_copies <= 4) ADD_FAILURE() << "overlapping copies at " << off + i;
          std::memset(stage.p + off, 0, 16);
          std::memcpy(stage.p + off, f, bytes);
        });
      }
      // Fragments of every lane.
      const int pairs = gemv_pairs_in_unit(static_cast<int>(K), u);
      e.unit(n0, u, 2 * (U::kPartial ? pairs : kGemvPairs), U::k0, [&](int lane, auto&& mma) {
        const int g = lane >> 2;
        const int m_lo = U::misalign(gemv_row(e.src, n0 + g), u), m_hi = U::misalign(gemv_row(e.src, n0 + g + 8), u);
        misalignments.insert(m_lo);
        gemv_unit_mmas<W, kT>(stage.p, m_lo, m_hi, lane, pairs, mma);
      });
    }
  }
  EXPECT_EQ(bad_copies, 0);
  e.finish();
  if (U::kMayOverrun && W::kGgmlType != kF16) EXPECT_EQ(misalignments.size(), W::kGgmlType == kQ6K ? 8u : 4u);
  std::printf("  %s T=%d [%lld x %lld]: %lld fragment weights exact, emulated MMAs match float64, %zu misalignments\n",
              type_name(W::kGgmlType), kT, static_cast<long long>(N), static_cast<long long>(K),
              static_cast<long long>(e.checked - e.bad), misalignments.size());
}

TEST(GemvTiles, KMapsCoverEachUnitOnce) {
  check_k_map<WeightQ4K>();
  check_k_map<WeightQ6K>();
  check_k_map<WeightQ8_0>();
  check_k_map<WeightF16>();
}

// N = 264: 16 full row groups and one of 8 rows (rows past N re-read row N-1).
TEST(GemvTiles, Q4K) {
  check_gemv_tiles<WeightQ4K, 1>(264, 1024, 21);
  check_gemv_tiles<WeightQ4K, 8>(40, 2048, 22);
}
// K = 1280: 1050-byte rows start at every even offset mod 16; K = 11008 (43 units).
TEST(GemvTiles, Q6K) {
  check_gemv_tiles<WeightQ6K, 1>(264, 1280, 23);
  check_gemv_tiles<WeightQ6K, 3>(24, 11008, 24);
  check_gemv_tiles<WeightQ6K, 8>(40, 1280, 25);
}
// K = 1088 = 4·256 + 64: a partial last unit of 2 pairs; 1156-byte rows.
TEST(GemvTiles, Q8_0) {
  check_gemv_tiles<WeightQ8_0, 1>(264, 1088, 26);
  check_gemv_tiles<WeightQ8_0, 8>(40, 1216, 27);  // 4·256 + 192
}
TEST(GemvTiles, F16) {
  check_gemv_tiles<WeightF16, 1>(40, 1088, 28);
  check_gemv_tiles<WeightF16, 8>(24, 1152, 29);  // 4·256 + 128
}

// ---- the direct kernel -----------------------------------------------------------------------
// The fast decode's A registers against the exact decode's: the same fp16 bits, except that where
// D::kFastZeroSigns is false a zero may have the other sign (counted in zero_signs).
template <class D>
void expect_fast_fragment(const std::array<uint32_t, 4>& fast, const uint32_t (&exact)[4], int64_t& zero_signs, int lane,
                          int mma) {
  for (int r = 0; r < 4; ++r)
    for (int h = 0; h < 2; ++h) {
      const uint32_t f = (fast[static_cast<size_t>(r)] >> (16 * h)) & 0xFFFFu, e = (exact[r] >> (16 * h)) & 0xFFFFu;
      if (f == e) continue;
      if (!D::kFastZeroSigns && (f & 0x7FFFu) == 0 && (e & 0x7FFFu) == 0) {
        ++zero_signs;
        continue;
      }
      ADD_FAILURE() << "fast decode, lane " << lane << " MMA " << mma << " register " << r << ": 0x" << std::hex << f
                    << ", exact 0x" << e;
    }
}

// Every lane of every (row block, unit) as k_gemv_direct runs it: fetch (each load checked to lie
// inside the tensor or X), the warp's vote on the fast decode, prepare, the B fragments, the 16
// MMAs into two accumulators. Where the vote passes, the fast decode's fragments must be those of
// the exact decode (bit for bit, or up to the sign of a zero where the type says so).
template <class D, int kT>
void check_gemv_direct(int64_t N, int64_t K, uint64_t seed, float scale_factor = 1.0f) {
  WarpEmulation<kT> e(D::kGgmlType, N, K, seed);
  const bool small_scales = scale_factor < 1.0f;
  if (scale_factor != 1.0f) {
    scale_block_scales(D::kGgmlType, e.raw, scale_factor);
    e.w16 = reference_weights_f16(D::kGgmlType, e.raw, N, K);
    std::memcpy(e.wdev.p, e.raw.data(), e.raw.size());
  }
  std::set<uintptr_t> block_offsets_mod8;
  int64_t fast_units = 0, units = 0, zero_signs = 0;
  const auto blk = [&](int n, int u) { return gemv_row(e.src, n) + static_cast<int64_t>(u) * D::kBlockBytes; };
  for (int n0 = 0; n0 < N; n0 += kGemvRows)
    for (int u = 0; u < static_cast<int>(K / kGemvUnitK); ++u) {
      bool fast = D::kFastDecode;  // the kernel's __all_sync over the 32 lanes
      for (int lane = 0; lane < 32; ++lane) {
        const int g = lane >> 2, tq = lane & 3;
        fast = fast && gemv_direct_fast_ok<D>(D::fetch(blk(n0 + g, u), tq), D::fetch(blk(n0 + g + 8, u), tq));
      }
      fast_units += fast ? 1 : 0;
      ++units;
      e.unit(n0, u, 2 * kGemvPairs, D::k0, [&](int lane, auto&& mma) {
        const int g = lane >> 2, tq = lane & 3;
        block_offsets_mod8.insert(reinterpret_cast<uintptr_t>(blk(n0 + g, u)) & 7u);
        const typename D::Raw r_lo = D::fetch(blk(n0 + g, u), tq), r_hi = D::fetch(blk(n0 + g + 8, u), tq);
        const typename D::Ctx lo = D::prepare(r_lo, tq), hi = D::prepare(r_hi, tq);
        uint4 b[kGemvPairs];
        gemv_direct_x<D, kT>(e.src.x + static_cast<int64_t>(g < kT ? g : 0) * K, u, g, tq, b);
        std::vector<std::array<uint32_t, 4>> fast_a;
        if constexpr (D::kFastDecode) {
          if (fast) {
            const typename D::Ctx flo = D::fast_prepare(r_lo, tq), fhi = D::fast_prepare(r_hi, tq);
            gemv_direct_mmas<D, true>(flo, fhi, b, tq, [&](int, const uint32_t (&a)[4], uint32_t, uint32_t) {
              fast_a.push_back({a[0], a[1], a[2], a[3]});
            });
          }
        }
        int j = 0;
        gemv_direct_mmas<D>(lo, hi, b, tq, [&](int acc, const uint32_t (&a)[4], uint32_t b0, uint32_t b1) {
          EXPECT_EQ(acc, j++ % 2) << "the first MMA of a pair goes to accumulator 0, the second to 1";
          if constexpr (D::kFastDecode) {
            if (fast) expect_fast_fragment<D>(fast_a[static_cast<size_t>(j - 1)], a, zero_signs, lane, j - 1);
          }
          mma(a, b0, b1);
        });
      });
    }
  e.finish();
  if (D::kGgmlType == kQ6K) EXPECT_EQ(block_offsets_mod8.size(), 4u) << "q6_K blocks at every offset % 8";
  if (small_scales) EXPECT_EQ(fast_units, units) << "every unit in the fast decode's range";
  if (scale_factor > 1.0f) EXPECT_LT(fast_units, units) << "units outside the fast decode's range";
  if (!D::kFastDecode) EXPECT_EQ(fast_units, 0);
  if constexpr (D::kFastDecode) {
    if (D::kFastZeroSigns) EXPECT_EQ(zero_signs, 0);
  }
  std::printf("  %s direct T=%d [%lld x %lld]: %lld fragment weights exact, emulated MMAs match float64, %zu block offsets "
              "mod 8, %lld of %lld units by the fast decode (%lld zeros of the other sign)\n",
              type_name(D::kGgmlType), kT, static_cast<long long>(N), static_cast<long long>(K),
              static_cast<long long>(e.checked - e.bad), block_offsets_mod8.size(), static_cast<long long>(fast_units),
              static_cast<long long>(units), static_cast<long long>(zero_signs));
}

// The loads of one lane's fetch stay inside the tensor: k_gemv_direct's q6_K windows reach up to 6
// bytes before a block and 8 past a piece (kernels/gemm_fast_gemv_direct.cuh). Checked here by
// address arithmetic on the last block of the last row and the first of the first.
TEST(GemvDirect, Q6KWindowsStayInsideTheTensor) {
  for (int64_t K : {256, 1280, 4096, 11008}) {
    const int64_t rb = row_bytes(kQ6K, K), N = 6;
    for (int64_t n = 0; n < N; ++n)
      for (int64_t u = 0; u < K / 256; ++u) {
        const int64_t blk = n * rb + 210 * u;  // tensor base 16-byte aligned: address % 8 = blk % 8
        const int64_t s = blk & 7;
        for (int tq = 0; tq < 4; ++tq) {
          const int64_t hh = tq >> 1, l0 = 16 * (tq & 1);
          for (int64_t off : {64 * hh + l0, 64 * hh + 32 + l0, 128 + 32 * hh + l0}) {
            const int64_t w0 = (blk + off) & ~int64_t{7};
            EXPECT_GE(w0, 0);
            EXPECT_LE(w0 + 24, N * rb) << "K " << K << " row " << n << " unit " << u;
            EXPECT_LE(w0 + 24, blk + 210) << "a window passes its block";
            EXPECT_EQ((blk + off) & 7, s) << "pieces of a lane share their offset mod 8";
          }
        }
      }
  }
}

// q4_K and q5_K with a ragged last row group (N = 264), q6_K at K = 1280 (1050-byte rows: blocks
// at every offset mod 8) and K = 11008 (43 units); T = 1, 3 and 8 for each.
TEST(GemvDirect, LanesOfQ4KQ5KQ6K) {
  check_gemv_direct<DirectQ4K, 1>(264, 1024, 41);
  check_gemv_direct<DirectQ4K, 3>(40, 2048, 42);
  check_gemv_direct<DirectQ4K, 8>(24, 1024, 43);
  check_gemv_direct<DirectQ5K, 1>(264, 1024, 44);
  check_gemv_direct<DirectQ5K, 3>(40, 2048, 45);
  check_gemv_direct<DirectQ5K, 8>(24, 1024, 46);
  check_gemv_direct<DirectQ6K, 1>(264, 1280, 47);
  check_gemv_direct<DirectQ6K, 3>(24, 11008, 48);
  check_gemv_direct<DirectQ6K, 8>(40, 1280, 49);
}

// The one-FMA decode on every unit (scales moved well into its range: random_weights' d are all
// inside it, so the checks above take it too), and the exact decode where scales 16 times larger
// put most units outside it (a unit takes the exact decode if any of its 16 rows is outside).
TEST(GemvDirect, FastDecodeEqualsExactDecode) {
  check_gemv_direct<DirectQ4K, 1>(264, 1024, 51, 0x1p-6f);
  check_gemv_direct<DirectQ4K, 8>(24, 2048, 52, 0x1p-6f);
  check_gemv_direct<DirectQ6K, 1>(264, 1280, 53, 0x1p-6f);
  check_gemv_direct<DirectQ6K, 3>(24, 11008, 54, 0x1p-6f);
  check_gemv_direct<DirectQ4K, 1>(264, 1024, 55, 16.0f);
  check_gemv_direct<DirectQ4K, 8>(24, 2048, 56, 16.0f);
  check_gemv_direct<DirectQ6K, 1>(264, 1280, 57, 16.0f);
  check_gemv_direct<DirectQ6K, 3>(24, 11008, 58, 16.0f);
}

// The direct kernel's walk over a job's virtual tiles (gemm_fast_gemv_job.cuh): for every grid size
// the blocks take every tile exactly once, each part's tiles map to its rows 0, 16, ..., and a
// SwiGLU pair's gate and up tiles of the same rows go to one block, gate first.
TEST(GemvJobWalk, EveryTileOnceAndSwigluPairsInOneBlock) {
  for (int swiglu = 0; swiglu < 2; ++swiglu) {
    dev::GemvJob job{};
    const std::vector<int> Ns = swiglu ? std::vector<int>{11008, 11008} : std::vector<int>{4096, 1024, 1000};
    job.parts = static_cast<int>(Ns.size());
    job.swiglu = swiglu;
    for (int i = 0, t = 0; i < job.parts; ++i) {
      job.part[i].N = Ns[static_cast<size_t>(i)];
      job.part[i].tile0 = t;
      t += (Ns[static_cast<size_t>(i)] + 15) / 16;
      job.tiles = t;
    }
    const int groups = job.tiles / dev::gemv_group(job);
    for (int blocks : {1, 7, 132, groups - 1, groups}) {
      std::vector<int> owner(static_cast<size_t>(job.tiles), -1);
      for (int b = 0; b < blocks; ++b) {
        int last_part = -1, last_n0 = -1;
        for (int v = dev::gemv_group(job) * b; v < job.tiles; v = dev::gemv_next_tile(job, v, blocks)) {
          ASSERT_EQ(owner[static_cast<size_t>(v)], -1) << "tile " << v << " taken twice, grid " << blocks;
          owner[static_cast<size_t>(v)] = b;
          const dev::GemvTileAt at = dev::gemv_locate(job, v);
          ASSERT_LT(at.n0, Ns[static_cast<size_t>(at.part)]);
          ASSERT_EQ(at.n0 % 16, 0);
          if (swiglu && at.part == 1) {
            EXPECT_EQ(last_part, 0) << "up tile " << v << " without its gate tile before it";
            EXPECT_EQ(last_n0, at.n0);
          }
          last_part = at.part;
          last_n0 = at.n0;
        }
      }
      EXPECT_EQ(std::count(owner.begin(), owner.end(), -1), 0) << "grid " << blocks << " leaves tiles";
    }
    // Part p's rows 0, 16, ... are its tiles tile0 .. tile0 + ceil(N/16) - 1 (non-SwiGLU).
    if (!swiglu)
      for (int i = 0; i < job.parts; ++i) {
        const dev::GemvTileAt first = dev::gemv_locate(job, job.part[i].tile0);
        EXPECT_EQ(first.part, i);
        EXPECT_EQ(first.n0, 0);
      }
  }
}

}  // namespace
}  // namespace pfx::kernels::test

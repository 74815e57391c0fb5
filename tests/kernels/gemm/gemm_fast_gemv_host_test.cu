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
  std::mt19937_64 rng(seed);
  const std::vector<uint8_t> raw = random_weights(W::kGgmlType, N, K, rng);
  const std::vector<uint16_t> w16 = reference_weights_f16(W::kGgmlType, raw, N, K);
  const std::vector<uint16_t> xh = random_activations(kT * K, rng);
  const int64_t rb = row_bytes(W::kGgmlType, K);
  Aligned wdev(raw.size()), xdev(xh.size() * 2);
  std::memcpy(wdev.p, raw.data(), raw.size());
  std::memcpy(xdev.p, xh.data(), xh.size() * 2);
  const GemvSrc src{wdev.p, wdev.p + wdev.n, rb, reinterpret_cast<const uint16_t*>(xdev.p), static_cast<int>(N),
                    static_cast<int>(K)};
  constexpr int kStage = kGemvStageBytes<W, kT>;
  Aligned stage(kStage);
  const int units = static_cast<int>((K + kGemvUnitK - 1) / kGemvUnitK);
  std::vector<double> y(static_cast<size_t>(kT * N), 0.0);
  std::set<int> misalignments;
  int64_t bad_weights = 0, checked = 0, bad_copies = 0;
  for (int n0 = 0; n0 < N; n0 += kGemvRows) {
    for (int u = 0; u < units; ++u) {
      // Staging, as the warp's 32 lanes issue it.
      std::memset(stage.p, 0xCC, kStage);
      std::vector<int> written(static_cast<size_t>(kStage), 0);
      for (int lane = 0; lane < 32; ++lane) {
        const GemvCopier<W, kT> copier(src, n0, lane);
        copier.stage(u, [&](int off, const void* from, uint32_t bytes) {
          const auto* f = static_cast<const uint8_t*>(from);
          const bool is_x = off >= kGemvWeightBytes<W>;
          const uint8_t* lo = is_x ? xdev.p : wdev.p;
          const uint8_t* hi = is_x ? xdev.p + xdev.n : wdev.p + wdev.n;
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
      std::vector<MmaRegs> mmas(static_cast<size_t>(2 * kGemvPairs));
      for (int lane = 0; lane < 32; ++lane) {
        const int g = lane >> 2, tq = lane & 3;
        const int m_lo = U::misalign(gemv_row(src, n0 + g), u), m_hi = U::misalign(gemv_row(src, n0 + g + 8), u);
        misalignments.insert(m_lo);
        int j = 0;
        gemv_unit_mmas<W, kT>(stage.p, m_lo, m_hi, lane, pairs, [&](const uint32_t (&a)[4], uint32_t b0, uint32_t b1) {
          ASSERT_LT(j, 2 * kGemvPairs);
          auto& m = mmas[static_cast<size_t>(j)];
          for (int i = 0; i < 4; ++i) m.a[static_cast<size_t>(lane)][static_cast<size_t>(i)] = a[i];
          m.b[static_cast<size_t>(lane)] = {b0, b1};
          // The weights this lane claims: rows g (regs 0, 2) and g + 8 (1, 3), k0 + 4·(j % 2) + 0..3.
          const int k = kGemvUnitK * u + U::k0(j / 2, tq) + 4 * (j % 2);
          for (int h = 0; h < 2; ++h) {
            const int64_t n = n0 + g + 8 * h;
            if (n >= N) continue;
            for (int e = 0; e < 4; ++e) {
              const uint16_t got = static_cast<uint16_t>(a[h + 2 * (e / 2)] >> (16 * (e % 2)));
              const uint16_t want = w16[static_cast<size_t>(n * K + k + e)];
              ++checked;
              if (got != want && ++bad_weights <= 8)
                ADD_FAILURE() << type_name(W::kGgmlType) << " T=" << kT << " row " << n << " k " << k + e << ": 0x" << std::hex
                              << got << ", want 0x" << want << std::dec;
            }
          }
          ++j;
        });
        ASSERT_EQ(j, 2 * (U::kPartial ? pairs : kGemvPairs)) << "MMAs of lane " << lane << ", unit " << u;
      }
      double d[16][8] = {};
      for (int j = 0; j < 2 * (U::kPartial ? pairs : kGemvPairs); ++j) emulate_mma(mmas[static_cast<size_t>(j)], d);
      for (int r = 0; r < 16 && n0 + r < N; ++r)
        for (int t = 0; t < kT; ++t) y[static_cast<size_t>(t * N + n0 + r)] += d[r][t];
    }
  }
  EXPECT_EQ(bad_copies, 0);
  EXPECT_EQ(bad_weights, 0) << bad_weights << " of " << checked << " weights differ";
  EXPECT_EQ(checked, N * K) << "every weight appears in exactly one A fragment slot";
  const Reference ref = reference_gemm(xh, w16, kT, N, K);
  int64_t bad_y = 0;
  for (size_t i = 0; i < y.size(); ++i)
    if (std::fabs(y[i] - ref.y[i]) > 1e-12 * ref.abssum[i] + 1e-300 && ++bad_y <= 8)
      ADD_FAILURE() << type_name(W::kGgmlType) << " T=" << kT << " y[" << i / static_cast<size_t>(N) << "]["
                    << i % static_cast<size_t>(N) << "] = " << y[i] << ", want " << ref.y[i];
  EXPECT_EQ(bad_y, 0);
  if (U::kMayOverrun && W::kGgmlType != kF16) EXPECT_EQ(misalignments.size(), W::kGgmlType == kQ6K ? 8u : 4u);
  std::printf("  %s T=%d [%lld x %lld]: %lld fragment weights exact, emulated MMAs match float64, %zu misalignments\n",
              type_name(W::kGgmlType), kT, static_cast<long long>(N), static_cast<long long>(K),
              static_cast<long long>(checked - bad_weights), misalignments.size());
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

}  // namespace
}  // namespace pfx::kernels::test

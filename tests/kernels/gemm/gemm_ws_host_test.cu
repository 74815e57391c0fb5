// CPU checks of the warp-specialized fused GEMM's weight path (label cpu, no GPU needed): the
// repack (kernels/gemm_ws_layout.cuh, the very __host__ __device__ code the device repack kernel
// runs) and the consumer's decoders, emulated thread by thread: for every panel, k-tile, thread
// and k16 step, each half of the four A registers must carry the fp16 bits of fp16_rn(ggml's
// dequantized value) of exactly the (row, k) the wgmma fragment layout assigns it (kernels/ptx.cuh)
// — signed zeros included (but q6_K's, whose one-FMA decode may give +0 for -0), rows past the
// matrix ±0; for plain and SwiGLU-interleaved repacks.
// Also: sizes (the same bytes as GGUF, q4_K / q5_K +4 per super-block row for their unpacked scales), the
// host API's reasons, and the variant table.
#include <cuda_runtime_api.h>
#include <gtest/gtest.h>

#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "gemm_reference.h"
#include "kernels/gemm_ws.h"
#include "kernels/gemm_ws_layout.cuh"
#include "kernels/gemm_ws_schedule.cuh"
#include "kernels/gemv_ws_lane.cuh"
#include "kernels/sm90.h"
#include "util/error.h"

namespace pfx::kernels::test {
namespace {

using namespace dev;

// The repacked matrix, built on the host word by word.
template <int kType>
std::vector<uint8_t> repack_on_host(const std::vector<uint8_t>& a, const std::vector<uint8_t>* b, int64_t rows,
                                    int64_t cols) {
  using L = WsLayout<kType>;
  const WsRowSource src{a.data(), b ? b->data() : nullptr, rows, row_bytes(kType, cols)};
  std::vector<uint8_t> out(static_cast<size_t>(ws_repacked_bytes<L>(src.out_rows(), cols)));
  for (size_t off = 0; off < out.size(); off += 4) {
    const uint32_t w = ws_repacked_word<kType>(src, cols, static_cast<int64_t>(off));
    std::memcpy(out.data() + off, &w, 4);
  }
  return out;
}

// Emulates every consumer thread's decode of the repacked matrix and compares each fragment
// element with want(row, k) (fp16 bits; rows at or past out_rows must be +0).
template <int kType, class Want>
int64_t check_fragments(const std::vector<uint8_t>& packed, int64_t out_rows, int64_t cols, const Want& want,
                        const std::string& what) {
  using L = WsLayout<kType>;
  using Decode = typename WsDecoder<kType>::type;
  const int64_t n_groups = cols / L::kGroupK, nk = cols / 64;
  int64_t bad = 0, zero_signs = 0;
  for (int64_t pair = 0; pair < ws_pairs(out_rows); ++pair)
    for (int64_t kt = 0; kt < nk; ++kt)
      for (int panel = 0; panel < 2; ++panel) {
        const uint8_t* q = packed.data() + ws_quant_offset<L>(pair, kt, n_groups) + panel * L::kQuantBytes;
        const uint8_t* sc = packed.data() + ws_scale_offset<L>(pair, kt, n_groups) + panel * L::kScaleBytes;
        for (int t = 0; t < 128; ++t) {
          const int kt_in = static_cast<int>(kt % L::kTiles);
          Decode dec;
          // The quad's exchange of scale values, as the kernel's shuffles do it.
          for (int c = 0; c < 4; ++c) {
            float v0 = 0, v1 = 0;
            Decode::lane_scales(sc, (t & ~3) | c, kt_in, v0, v1);
            dec.set_scale(c, v0, v1);
          }
          dec.load(q, sc, t, kt_in);
          for (int s = 0; s < 4; ++s) {
            uint32_t a[4];
            dec.step(s, a);
            for (int i = 0; i < 4; ++i)
              for (int j = 0; j < 2; ++j) {
                const int64_t row = pair * 128 + panel * 64 + ws_row(t, i & 1);
                const int64_t k = kt * 64 + ws_k(t, s, 2 * (i >> 1) + j);
                const uint16_t got = static_cast<uint16_t>(a[i] >> (16 * j));
                // Padding rows (never stored) decode to a zero; q6_K's is -0 ((0 - 32)·0). q6_K's
                // one-FMA decode may give +0 for ggml's -0 (kernels/gemm_ws_layout.cuh): a zero of
                // either sign passes there, and zero_signs counts them.
                const bool pad = row >= out_rows;
                const uint16_t exp = pad ? 0 : want(row, k);
                const bool zeros = (got & 0x7FFF) == 0 && (exp & 0x7FFF) == 0;
                if (!pad && got != exp && zeros && kType == kWsQ6K) {
                  ++zero_signs;
                  continue;
                }
                if ((pad ? (got & 0x7FFF) != 0 : got != exp) && ++bad <= 8)
                  ADD_FAILURE() << what << ": row " << row << " k " << k << " (pair " << pair << " k-tile " << kt
                                << " panel " << panel << " thread " << t << " step " << s << " reg " << i << "." << j
                                << "): want 0x" << std::hex << exp << " got 0x" << got << std::dec;
              }
          }
        }
      }
  if (zero_signs > 0) std::printf("  %s: %lld zeros of the other sign (q6_K's one-FMA decode)\n", what.c_str(),
                                  static_cast<long long>(zero_signs));
  return bad;
}

template <int kType>
void check_type(int64_t rows, int64_t cols, uint64_t seed) {
  std::mt19937_64 rng(seed);
  const std::vector<uint8_t> raw = random_weights(kType, rows, cols, rng);
  const std::vector<uint16_t> ref = reference_weights_f16(kType, raw, rows, cols);
  const std::vector<uint8_t> packed = repack_on_host<kType>(raw, nullptr, rows, cols);
  const std::string what = std::string(type_name(kType)) + " " + std::to_string(rows) + "x" + std::to_string(cols);
  const int64_t bad = check_fragments<kType>(packed, rows, cols,
                                             [&](int64_t r, int64_t k) { return ref[static_cast<size_t>(r * cols + k)]; }, what);
  EXPECT_EQ(bad, 0) << what;

  // SwiGLU: rows 16G .. 16G+7 of the repack are gate rows 8G .., rows 16G+8 .. are up rows 8G ..
  const std::vector<uint8_t> raw_up = random_weights(kType, rows, cols, rng);
  const std::vector<uint16_t> ref_up = reference_weights_f16(kType, raw_up, rows, cols);
  const std::vector<uint8_t> both = repack_on_host<kType>(raw, &raw_up, rows, cols);
  const int64_t bad_swiglu = check_fragments<kType>(
      both, 2 * rows, cols,
      [&](int64_t R, int64_t k) {
        const int64_t n = 8 * (R / 16) + R % 8;
        return (R & 8 ? ref_up : ref)[static_cast<size_t>(n * cols + k)];
      },
      what + " swiglu");
  EXPECT_EQ(bad_swiglu, 0) << what << " swiglu";

  // Same bytes as the GGUF rows (per 128 rows), q4_K / q5_K plus 4 bytes per row and super-block.
  const int64_t gguf = ws_pairs(rows) * 128 * row_bytes(kType, cols);
  const int64_t extra = kType == kWsQ4K || kType == kWsQ5K ? ws_pairs(rows) * 128 * (cols / 256) * 4 : 0;
  EXPECT_EQ(static_cast<int64_t>(packed.size()), gguf + extra) << what;
  EXPECT_EQ(static_cast<int64_t>(packed.size()), gemm_ws_repacked_bytes(kType, rows, cols)) << what;
  if (bad == 0 && bad_swiglu == 0)
    std::printf("  %s: every fragment element of %lld rows (and %lld interleaved) bit-exact\n", what.c_str(),
                static_cast<long long>(rows), static_cast<long long>(2 * rows));
}

// 192 rows: one full panel pair and one half-filled (padding rows must decode to zeros); two
// super-blocks (or k-groups) at least, so the group offsets are exercised.
TEST(GemmWsLayout, Q4KFragmentsAreExact) { check_type<kWsQ4K>(192, 768, 31); }
TEST(GemmWsLayout, Q5KFragmentsAreExact) { check_type<kWsQ5K>(192, 768, 35); }
TEST(GemmWsLayout, Q6KFragmentsAreExact) { check_type<kWsQ6K>(192, 768, 32); }
TEST(GemmWsLayout, Q8_0FragmentsAreExact) { check_type<kWsQ8_0>(192, 320, 33); }
TEST(GemmWsLayout, F16FragmentsAreExact) { check_type<kWsF16>(192, 256, 34); }

// Every bit pattern of a q4_K / q5_K scale field and of q8_0's int8 and q6_K's 6-bit quants (and
// q5_K's fifth bit, half of them set) comes up in 192 random rows; signed zeros come from the
// negative scales random_weights draws. The K-quant checks above would miss a decoder that is
// right only for non-negative d: assert such blocks exist.
TEST(GemmWsLayout, RandomWeightsIncludeNegativeScales) {
  for (const auto& [type, block_bytes] : {std::pair{kQ4K, 144}, std::pair{kQ5K, 176}}) {
    std::mt19937_64 rng(31);
    const std::vector<uint8_t> raw = random_weights(type, 192, 768, rng);
    int negative = 0;
    for (size_t b = 0; b < raw.size(); b += block_bytes) negative += (raw[b + 1] & 0x80) != 0;
    EXPECT_GT(negative, 10) << type_name(type);
  }
}

// The range the one-FMA decodes take (fp16 bits of d): q4_K |d| <= 2^-7, q6_K |d| < 2^-10, either
// sign; infinities and NaN outside; every d for the other types.
TEST(GemmWsLayout, ScaleRangeOfTheOneFmaDecodes) {
  EXPECT_TRUE(ws_scale_in_range(kWsQ4K, 0x2000));   // 2^-7
  EXPECT_TRUE(ws_scale_in_range(kWsQ4K, 0xA000));   // -2^-7
  EXPECT_FALSE(ws_scale_in_range(kWsQ4K, 0x2001));  // just above
  EXPECT_TRUE(ws_scale_in_range(kWsQ6K, 0x13FF));   // just below 2^-10
  EXPECT_FALSE(ws_scale_in_range(kWsQ6K, 0x1400));  // 2^-10
  EXPECT_FALSE(ws_scale_in_range(kWsQ6K, 0x9400));  // -2^-10
  for (int t : {kWsQ4K, kWsQ6K}) {
    EXPECT_FALSE(ws_scale_in_range(t, 0x7C00)) << t;  // inf
    EXPECT_FALSE(ws_scale_in_range(t, 0x7E00)) << t;  // NaN
    EXPECT_TRUE(ws_scale_in_range(t, 0x0000)) << t;
    EXPECT_TRUE(ws_scale_in_range(t, 0x8001)) << t;   // a negative subnormal
  }
  for (int t : {kWsQ5K, kWsQ8_0, kWsF16}) EXPECT_TRUE(ws_scale_in_range(t, 0x7C00)) << t;
}

TEST(GemmWsHost, UnsupportedReasonsAndArgumentChecks) {
  EXPECT_EQ(gemm_ws_unsupported_reason(kQ4K, 4096, 4096), "");
  EXPECT_EQ(gemm_ws_unsupported_reason(kF16, 64, 64), "");
  EXPECT_EQ(gemm_ws_unsupported_reason(kQ5K, 11008, 4096), "");  // q5_K: the Q5_K_M mix's type
  EXPECT_NE(gemm_ws_unsupported_reason(static_cast<uint32_t>(quant::Type::Q5_0), 4096, 4096), "");       // q5_0: no kernel
  EXPECT_NE(gemm_ws_unsupported_reason(kQ5K, 4096, 4096 + 64), "");  // q5_K: cols of 256
  EXPECT_NE(gemm_ws_unsupported_reason(kQ4K, 4096 + 32, 4096), "");  // rows not a multiple of 64
  EXPECT_NE(gemm_ws_unsupported_reason(kQ4K, 4096, 4096 + 64), "");  // cols not a multiple of 256
  EXPECT_NE(gemm_ws_unsupported_reason(kQ8_0, 4096, 4096 + 32), "");   // q8_0: of 64
  EXPECT_THROW(gemm_ws_repacked_bytes(static_cast<uint32_t>(quant::Type::Q5_0), 64, 256), Error);
  const WsMatrixView plain{nullptr, kQ4K, 4096, 4096, false};
  uint16_t x[8];
  float y[8];
  EXPECT_THROW(gemm_ws(plain, x, 8, y, GemmEpilogue::StoreF32, nullptr), Error);  // null weights
  const WsMatrixView odd{reinterpret_cast<const void*>(uintptr_t{256}), kQ4K, 4096 + 32, 4096, false};
  EXPECT_THROW(gemm_ws(odd, x, 8, y, GemmEpilogue::StoreF32, nullptr), Error);
  EXPECT_THROW(gemm_ws_swiglu(plain, x, 8, reinterpret_cast<uint16_t*>(y), nullptr), Error);  // not interleaved
}

TEST(GemmWsHost, VariantTableFitsTheChip) {
  for (uint32_t t : kWsTypes) {
    const auto& vs = gemm_ws_variants(t);
    ASSERT_FALSE(vs.empty());
    for (const auto& v : vs) {
      EXPECT_LE(v.smem_bytes, sm90::kMaxSmemPerBlock) << v.name;
      EXPECT_GE(v.stages, 2) << v.name;
      EXPECT_LE(v.ctas_per_sm * (v.smem_bytes + 1024), sm90::kSmemPerSm) << v.name;
    }
    // The pick is a valid index for every shape the engine runs.
    for (int64_t T : {1, 9, 512, 2048})
      for (int64_t rows : {4096, 11008, 22016, 32000}) {
        const int v = gemm_ws_pick_variant(t, T, rows);
        EXPECT_GE(v, 0);
        EXPECT_LT(v, static_cast<int>(vs.size()));
      }
  }
}


// The split-chain schedule (kernels/gemm_ws_schedule.cuh), walked as the kernel walks it: every
// (tile, k-tile) iteration exactly once; per CTA the head first and the tail last; each tail
// continues the head of CTA c-1 (the same tile, k0 = that head's k1); each range at least a
// tile's chain long. Whole-tile schedules cover each tile once as well.
TEST(GemmWsSchedule, SplitChainsCoverEveryIterationOnceInKOrder) {
  struct Case {
    int tiles, nk, slots;
  };
  const Case cases[] = {{344, 64, 132}, {172, 64, 132}, {688, 64, 132}, {192, 64, 132}, {500, 64, 132},
                        {9, 12, 4},     {9, 12, 5},     {9, 12, 7},     {9, 3, 8},      {133, 172, 132},
                        {128, 64, 132}, {264, 64, 132}, {7, 1, 3}};
  for (const Case& c : cases) {
    for (const bool split : {false, true}) {
      const int chunk = split ? dev::ws_split_chunk(c.tiles, c.nk, c.slots) : 0;
      const dev::WsSchedule s{c.tiles, c.nk, chunk};
      const int ctas = s.ctas(c.slots);
      const std::string what = "tiles " + std::to_string(c.tiles) + " nk " + std::to_string(c.nk) + " slots " +
                               std::to_string(c.slots) + " chunk " + std::to_string(chunk);
      ASSERT_LE(ctas, c.slots) << what;
      if (chunk > 0) ASSERT_GE(chunk, c.nk) << what;
      std::vector<int> seen(static_cast<size_t>(c.tiles) * c.nk, 0);
      std::vector<int> head_tile(static_cast<size_t>(ctas), -1), head_end(static_cast<size_t>(ctas), -1);
      for (int cta = 0; cta < ctas; ++cta) {
        const int n = s.units(cta, ctas);
        int iterations = 0;
        for (int i = 0; i < n; ++i) iterations += s.unit(cta, ctas, i).k1 - s.unit(cta, ctas, i).k0;
        if (chunk > 0 && cta + 1 < ctas) EXPECT_EQ(iterations, chunk) << what << ": CTA " << cta;
        for (int i = 0; i < n; ++i) {
          const dev::WsUnit u = s.unit(cta, ctas, i);
          ASSERT_TRUE(u.tile >= 0 && u.tile < c.tiles && u.k0 >= 0 && u.k0 < u.k1 && u.k1 <= c.nk) << what;
          for (int k = u.k0; k < u.k1; ++k) ++seen[static_cast<size_t>(u.tile) * c.nk + k];
          if (u.kind == dev::kWsHeadPiece) {
            EXPECT_EQ(i, 0) << what << ": a head runs first";
            EXPECT_EQ(u.k0, 0) << what;
            EXPECT_LT(u.k1, c.nk) << what;
            head_tile[static_cast<size_t>(cta)] = u.tile, head_end[static_cast<size_t>(cta)] = u.k1;
          } else if (u.kind == dev::kWsTailPiece) {
            EXPECT_EQ(i, n - 1) << what << ": a tail runs last";
            ASSERT_GT(cta, 0) << what;
            EXPECT_EQ(u.k1, c.nk) << what;
            EXPECT_EQ(head_tile[static_cast<size_t>(cta - 1)], u.tile) << what << ": CTA " << cta;
            EXPECT_EQ(head_end[static_cast<size_t>(cta - 1)], u.k0) << what << ": CTA " << cta;
          } else {
            EXPECT_EQ(u.k0, 0) << what;
            EXPECT_EQ(u.k1, c.nk) << what;
          }
        }
      }
      for (size_t i = 0; i < seen.size(); ++i) ASSERT_EQ(seen[i], 1) << what << ": iteration " << i;
    }
  }
}

// The pick splits chains where whole tiles leave much of a last round idle (the SwiGLU GEMM at
// T = 512: 344 tiles of 128 × 256 on 132 SMs), not where the last round is nearly full (most
// shapes at T = 2048), and keeps one round of 128 × 128 tiles where that covers the SMs (a
// 4096-row matrix at T = 512).
TEST(GemmWsHost, PickSplitsChainsWhereTheLastRoundIsMostlyIdle) {
  const auto& vs = gemm_ws_variants(kQ4K);
  const auto name = [&](int64_t T, int64_t rows) { return std::string(vs[static_cast<size_t>(gemm_ws_pick_variant(kQ4K, T, rows))].name); };
  // The pick counts an H200's 132 SMs where no device answers (CI), else the device's.
  int sms = 132;
  if (int n = 0; cudaGetDeviceCount(&n) == cudaSuccess && n > 0)
    (void)cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0);
  (void)cudaGetLastError();
  if (sms != 132) GTEST_SKIP() << "the expectations are an H200's (132 SMs); this device has " << sms;
  EXPECT_EQ(name(512, 22016), "ws_sk_n256");  // gate + up, interleaved: 2.6 rounds of work
  EXPECT_EQ(name(512, 12288), "ws_sk_n256");  // Q + K + V of one type: 1.45
  EXPECT_EQ(name(512, 8192), "ws_n256");      // Q + K: 128 tiles, one round
  EXPECT_EQ(name(512, 4096), "ws_n128");
  EXPECT_EQ(name(512, 32000), "ws_n256");     // 3.79 rounds: the split's cost exceeds the idle 0.21
  EXPECT_EQ(name(2048, 4096), "ws_n256");     // 1.94
  EXPECT_EQ(name(2048, 22016), "ws_n256");    // 10.4
  EXPECT_EQ(name(2048, 12288), "ws_n256");    // 5.8
}


// The decode mat-vec on the repack (kernels/gemv_ws_lane.cuh): for every 16-row tile, k-group and
// lane, the decoder fed from the lane's own loads (gemv_ws_tile addressing, GemvWsLane::fetch, its
// quad's scale shares as the kernel's shuffles exchange them) and from the chain kernel's ring
// (GemvWsStage's copies — in bounds, aligned — read back) gives the very A registers the fused
// GEMM's consumer thread gets from the stage — whose fragments the tests above check against ggml.
template <int kType>
void check_gemv_lanes(int64_t rows, int64_t cols, uint64_t seed) {
  using L = WsLayout<kType>;
  using Lane = GemvWsLane<kType>;
  using Decode = typename Lane::Decode;
  std::mt19937_64 rng(seed);
  const std::vector<uint8_t> packed = repack_on_host<kType>(random_weights(kType, rows, cols, rng), nullptr, rows, cols);
  const int64_t n_groups = cols / L::kGroupK;
  int64_t bad = 0, checked = 0;
  for (int n0 = 0; n0 < ws_pairs(rows) * 128; n0 += 16) {
    const GemvWsTile tile = gemv_ws_tile<L>(packed.data(), n_groups, n0);
    const int64_t pair = n0 / 128;
    for (int64_t gi = 0; gi < n_groups; ++gi) {
      std::vector<typename Lane::Raw> raw(32), staged(32);
      const uint8_t* chunk = tile.pair_chunks + gi * ws_group_bytes<L>();
      std::vector<uint8_t> stage(GemvWsStage<kType>::kBytes, 0xEE);
      for (int lane = 0; lane < 32; ++lane) {
        raw[static_cast<size_t>(lane)] = Lane::fetch(chunk, tile.panel, tile.t0 + lane);
        GemvWsStage<kType>::copy(chunk, tile.panel, tile.t0 + lane, lane, [&](int off, const uint8_t* src, int bytes) {
          ASSERT_LE(off + bytes, GemvWsStage<kType>::kBytes);
          ASSERT_EQ(off % bytes, 0);
          ASSERT_EQ(reinterpret_cast<uintptr_t>(src) % static_cast<uintptr_t>(bytes), reinterpret_cast<uintptr_t>(packed.data()) % 16 % static_cast<uintptr_t>(bytes));
          std::memcpy(stage.data() + off, src, static_cast<size_t>(bytes));
        });
      }
      for (int lane = 0; lane < 32; ++lane) staged[static_cast<size_t>(lane)] = GemvWsStage<kType>::read(stage.data(), lane, tile.t0 + lane);
      for (int kt = 0; kt < L::kTiles; ++kt) {
        const int64_t kt_all = gi * L::kTiles + kt;
        const uint8_t* q = packed.data() + ws_quant_offset<L>(pair, kt_all, n_groups) + tile.panel * L::kQuantBytes;
        const uint8_t* sc = packed.data() + ws_scale_offset<L>(pair, kt_all, n_groups) + tile.panel * L::kScaleBytes;
        for (int lane = 0; lane < 32; ++lane) {
          const int t = tile.t0 + lane;
          Decode mine, ring, stage;
          for (int c = 0; c < 4; ++c) {
            float v0 = 0, v1 = 0, w0 = 0, w1 = 0, r0 = 0, r1 = 0;
            const auto& from = raw[static_cast<size_t>((lane & ~3) | c)];
            const auto& from_ring = staged[static_cast<size_t>((lane & ~3) | c)];
            Lane::lane_scales(from, Lane::scales_of(from), (t & ~3) | c, kt, v0, v1);
            Lane::lane_scales(from_ring, Lane::scales_of(from_ring), (t & ~3) | c, kt, r0, r1);
            Decode::lane_scales(sc, (t & ~3) | c, kt, w0, w1);
            mine.set_scale(c, v0, v1);
            ring.set_scale(c, r0, r1);
            stage.set_scale(c, w0, w1);
          }
          Lane::load(mine, raw[static_cast<size_t>(lane)], kt);
          Lane::load(ring, staged[static_cast<size_t>(lane)], kt);
          stage.load(q, sc, t, kt);
          for (int s = 0; s < 4; ++s) {
            uint32_t a[4], b[4], r[4];
            mine.step(s, a);
            ring.step(s, r);
            stage.step(s, b);
            for (int i = 0; i < 4; ++i, ++checked)
              if ((a[i] != b[i] || r[i] != b[i]) && ++bad <= 8)
                ADD_FAILURE() << type_name(kType) << " tile " << n0 << " group " << gi << " k-tile " << kt << " lane "
                              << lane << " step " << s << " reg " << i << ": loads 0x" << std::hex << a[i] << ", ring 0x"
                              << r[i] << " vs the fused GEMM stage's 0x" << b[i] << std::dec;
          }
        }
      }
    }
  }
  EXPECT_EQ(bad, 0);
  EXPECT_EQ(checked, ws_pairs(rows) * 8 * n_groups * L::kTiles * 32 * 4 * 4);
}

TEST(GemvWsLane, Q4KLanesDecodeAsTheFusedGemmsConsumers) { check_gemv_lanes<kWsQ4K>(320, 768, 41); }
TEST(GemvWsLane, Q6KLanesDecodeAsTheFusedGemmsConsumers) { check_gemv_lanes<kWsQ6K>(320, 768, 42); }

// The mat-vec's scale shares (d times the decoder's power of two once per group, then one multiply
// per k-tile) against the fused GEMM decoder's lane_scales_of, bit for bit, for every d the repack
// takes (ws_scale_in_range: both signs, zeros, subnormals, the range's edge) and every scale byte.
TEST(GemvWsLane, GroupScalesEqualTheDecodersOverTheWholeRange) {
  int64_t bad = 0, checked = 0;
  const auto same = [](float a, float b) { return std::memcmp(&a, &b, sizeof a) == 0; };
  for (uint32_t d = 0; d < 0x10000u; ++d) {
    if (ws_scale_in_range(kWsQ4K, d)) {
      for (uint32_t sc = 0; sc < 64; ++sc) {
        const uint32_t m = (sc * 37 + d) & 63, sm = sc | (m << 8) | ((63 - sc) << 16) | (m << 24);
        GemvWsLane<kWsQ4K>::Raw r{};
        r.dd = d | (((d * 7919u) & 0x7FFFu) << 16);  // dmin: any finite value
        r.sm[1] = sm;
        for (int t = 0; t < 4; ++t, ++checked) {
          float v0, v1, w0, w1;
          GemvWsLane<kWsQ4K>::lane_scales(r, GemvWsLane<kWsQ4K>::scales_of(r), t, 1, v0, v1);
          WsDecodeQ4K::lane_scales_of(r.dd, sm, t, w0, w1);
          if ((!same(v0, w0) || !same(v1, w1)) && ++bad <= 8)
            ADD_FAILURE() << "q4_K d 0x" << std::hex << d << " sm 0x" << sm << std::dec << " t " << t << ": " << v0
                          << ", " << v1 << " vs " << w0 << ", " << w1;
        }
      }
    }
    if (ws_scale_in_range(kWsQ6K, d)) {
      for (uint32_t sc = 0; sc < 256; ++sc) {
        const uint32_t sc4 = sc | ((255 - sc) << 8) | (((sc * 73) & 255) << 16) | ((sc ^ 0x80) << 24);
        GemvWsLane<kWsQ6K>::Raw r{};
        r.d = d;
        r.sc.z = sc4;
        for (int t = 0; t < 4; ++t, ++checked) {
          float v0, v1, w0, w1;
          GemvWsLane<kWsQ6K>::lane_scales(r, GemvWsLane<kWsQ6K>::scales_of(r), t, 2, v0, v1);
          WsDecodeQ6K::lane_scales_of(sc4, d, t, w0, w1);
          if ((!same(v0, w0) || !same(v1, w1)) && ++bad <= 8)
            ADD_FAILURE() << "q6_K d 0x" << std::hex << d << " sc4 0x" << sc4 << std::dec << " t " << t << ": " << v0
                          << ", " << v1 << " vs " << w0 << ", " << w1;
        }
      }
    }
  }
  EXPECT_EQ(bad, 0);
  EXPECT_EQ(checked, 4 * (2 * 0x2001 * 64 + 2 * 0x1400 * 256));
}

TEST(GemvWsLane, TileAddressing) {
  // n0 = 128·pair + 64·panel + 16·w: the pair's chunks, the panel, consumer thread 32w.
  const auto* base = reinterpret_cast<const uint8_t*>(0x1000);
  using L = WsLayout<kWsQ4K>;
  const GemvWsTile t = gemv_ws_tile<L>(base, 3, 128 * 2 + 64 + 16 * 3);
  EXPECT_EQ(t.pair_chunks, base + 2 * 3 * ws_group_bytes<L>());
  EXPECT_EQ(t.panel, 1);
  EXPECT_EQ(t.t0, 96);
}

}  // namespace
}  // namespace pfx::kernels::test

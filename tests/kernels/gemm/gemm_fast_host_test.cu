// CPU checks of the fast GEMM (label cpu, no GPU needed):
//  - the exact weight decoders and the staging arithmetic of kernels/gemm_fast_weights.cuh, run on
//    the host (they are __host__ __device__) against quant::dequantize_row + fp16 rounding, bit for
//    bit, for every k-tile of random rows at every misalignment, including the clamp at the
//    tensor's end;
//  - the SwiGLU slot mapping against the epilogue's pairing, for every tile configuration;
//  - the host API's reasons for unsupported calls and its errors for bad arguments;
//  - the variant table (shared memory within the sm_90 limit, names unique).
// f16 weights take the same pipeline with a copy for a decoder and are checked alongside.
#include <gtest/gtest.h>

#include <cstring>
#include <memory>
#include <new>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "gemm_reference.h"
#include "kernels/gemm_fast.h"
#include "kernels/gemm_fast_launch.cuh"
#include "kernels/gemm_fast_variants.h"
#include "kernels/gemm_fast_weights.cuh"
#include "util/error.h"

namespace pfx::kernels::test {
namespace {

using namespace dev;

// A 64-byte-aligned copy of the weights whose last byte is the end of the allocation's payload,
// as on the device (cudaMalloc alignment, tensor end = data + N·row_bytes).
struct AlignedBytes {
  explicit AlignedBytes(const std::vector<uint8_t>& v)
      : n(v.size()), p(new (std::align_val_t(64)) uint8_t[v.size() + 64]) {
    std::memcpy(p, v.data(), n);
    std::memset(p + n, 0xA5, 64);  // bytes past the tensor: garbage that must never reach a weight
  }
  ~AlignedBytes() { operator delete[](p, std::align_val_t(64)); }
  AlignedBytes(const AlignedBytes&) = delete;  // owns the allocation
  AlignedBytes& operator=(const AlignedBytes&) = delete;
  size_t n;
  uint8_t* p;
};

// What one k-tile's cp.async copies leave in a shared-memory row: the chunks, zero-filled past
// the tensor's end exactly as the kernel's src-size clamp does.
template <class W>
void stage_row(const uint8_t* row, const uint8_t* end, int kt, uint8_t* smem_row) {
  std::memset(smem_row, 0xCC, W::kRowStride);
  for (int c = 0; c < W::kChunks; ++c) {
    const uint8_t* src = W::chunk_src(row, kt, c);
    const uint32_t bytes = W::kMayOverrun ? chunk_bytes_inside(src, end) : 16u;
    ASSERT_GE(src + bytes, row) << "chunk " << c << " starts before the row";
    std::memset(smem_row + 16 * c, 0, 16);
    std::memcpy(smem_row + 16 * c, src, bytes);
  }
}

// Byte offset in its row of the data a k-tile needs (q6_K: its super-block; q8_0: its two blocks;
// f16: its 64 values).
template <class W>
int64_t region_offset(int kt) {
  if constexpr (W::kBlockElems == 256)
    return static_cast<int64_t>(kt >> 2) * W::kBlockBytes;
  else
    return static_cast<int64_t>(kt) * 64 / W::kBlockElems * W::kBlockBytes;
}

template <class W>
void check_decoders(int64_t N, int64_t K, uint64_t seed) {
  std::mt19937_64 rng(seed);
  const std::vector<uint8_t> raw = random_weights(W::kGgmlType, N, K, rng);
  const std::vector<uint16_t> ref = reference_weights_f16(W::kGgmlType, raw, N, K);
  const int64_t rb = row_bytes(W::kGgmlType, K);
  AlignedBytes dev(raw);
  const uint8_t* end = dev.p + dev.n;
  alignas(16) uint8_t smem_row[W::kRowStride + 16];
  int64_t bad = 0, checked = 0;
  std::set<int> misalignments;
  for (int64_t n = 0; n < N; ++n) {
    const uint8_t* row = dev.p + n * rb;
    for (int kt = 0; kt < K / 64; ++kt) {
      stage_row<W>(row, end, kt, smem_row);
      uint16_t got[64];
      if constexpr (W::kTasksPerRow == 2) {
        for (int s = 0; s < 2; ++s) {
          uint32_t h[16];
          W::dequant32(smem_row, kt, s, h);
          std::memcpy(got + 32 * s, h, sizeof h);
        }
      } else {
        const int m = W::misalign(static_cast<int>(n), static_cast<int>(rb % 16), kt);
        const uintptr_t region = reinterpret_cast<uintptr_t>(row) + static_cast<uintptr_t>(region_offset<W>(kt));
        EXPECT_EQ(m, static_cast<int>(region % 16)) << "misalign() disagrees with the address, row " << n << " k-tile " << kt;
        misalignments.insert(m);
        for (int kc = 0; kc < 8; ++kc) {
          const uint4 v = W::dequant8(smem_row, kt, kc, m);
          std::memcpy(got + 8 * kc, &v, 16);
        }
      }
      // The same weights straight from "global memory" (the gemv / bench decoder).
      uint16_t got_global[64];
      for (int k8 = 0; k8 < 8; ++k8) {
        const uint4 v = decode8_global<W>(row, 64 * kt + 8 * k8);
        std::memcpy(got_global + 8 * k8, &v, 16);
      }
      for (int e = 0; e < 64; ++e) {
        const uint16_t want = ref[static_cast<size_t>(n * K + 64 * kt + e)];
        ++checked;
        if (got[e] != want || got_global[e] != want) {
          if (++bad <= 8)
            ADD_FAILURE() << type_name(W::kGgmlType) << " row " << n << " k " << 64 * kt + e << ": staged 0x" << std::hex
                          << got[e] << ", global 0x" << got_global[e] << ", want 0x" << want << std::dec;
        }
      }
    }
  }
  EXPECT_EQ(bad, 0) << bad << " of " << checked << " weights differ";
  std::printf("  %s [%lld x %lld]: %lld weights bit-identical to fp16(dequantize_row); misalignments seen: %zu\n",
              type_name(W::kGgmlType), static_cast<long long>(N), static_cast<long long>(K),
              static_cast<long long>(checked - bad), misalignments.size());
  // q6_K rows of 1050 bytes start at every even offset mod 16; q8_0 rows (K % 64 == 0) at every
  // multiple of 4.
  if constexpr (W::kMayOverrun) EXPECT_EQ(misalignments.size(), W::kBlockElems == 256 ? 8u : 4u);
}

TEST(GemmFastDecoders, Q4KStagedAndGlobalMatchReference) { check_decoders<WeightQ4K>(160, 1024, 11); }
// K = 1280: 1050-byte rows, so rows (and super-blocks) start at every even offset mod 16.
TEST(GemmFastDecoders, Q6KStagedAndGlobalMatchReference) { check_decoders<WeightQ6K>(160, 1280, 12); }
// K = 1088: 1156-byte rows.
TEST(GemmFastDecoders, Q8_0StagedAndGlobalMatchReference) { check_decoders<WeightQ8_0>(160, 1088, 13); }
TEST(GemmFastDecoders, F16StagedAndGlobalMatchReference) { check_decoders<WeightF16>(40, 1024, 14); }

// Every output column of a SwiGLU tile must find its gate row in accumulator tile ni and its up
// row (the same n) in ni + NI/2, at the column the epilogue writes.
template <class Cfg>
void check_swiglu_slots() {
  constexpr int kBlocks = Cfg::kWgmma ? 1 : Cfg::kWarpsAlongN;
  for (int tile_n = 0; tile_n < 3; ++tile_n) {
    std::set<int> gate_rows, up_rows;
    for (int blk = 0; blk < kBlocks; ++blk) {
      const int col0 = Cfg::kWgmma ? 0 : blk * Cfg::WN;
      for (int ni = 0; ni < Cfg::NI / 2; ++ni) {
        for (int c = 0; c < 8; ++c) {
          int mg = -1, ng = -1, mu = -1, nu = -1;
          slot_row<Cfg, true>(col0 + 8 * ni + c, tile_n, mg, ng);
          slot_row<Cfg, true>(col0 + 8 * (ni + Cfg::NI / 2) + c, tile_n, mu, nu);
          const int out_col = tile_n * (Cfg::BN / 2) + col0 / 2 + ni * 8 + c;
          ASSERT_EQ(mg, 0);
          ASSERT_EQ(mu, 1);
          ASSERT_EQ(ng, out_col);
          ASSERT_EQ(nu, out_col);
          gate_rows.insert(ng);
          up_rows.insert(nu);
        }
      }
    }
    ASSERT_EQ(static_cast<int>(gate_rows.size()), Cfg::BN / 2);
    ASSERT_EQ(*gate_rows.begin(), tile_n * Cfg::BN / 2);
    ASSERT_EQ(*gate_rows.rbegin(), tile_n * Cfg::BN / 2 + Cfg::BN / 2 - 1);
    ASSERT_EQ(gate_rows, up_rows);
  }
  // Plain tiles: slot i is row tile_n·BN + i of matrix 0.
  int m = -1, n = -1;
  slot_row<Cfg, false>(Cfg::BN - 1, 2, m, n);
  EXPECT_EQ(m, 0);
  EXPECT_EQ(n, 3 * Cfg::BN - 1);
}

TEST(GemmFastTiles, SwigluSlotsPairWithEpilogue) {
  check_swiglu_slots<CfgMmaW8S4>();
  check_swiglu_slots<CfgMmaW8S3>();
  check_swiglu_slots<CfgMmaW4S3>();
  check_swiglu_slots<CfgWgN128S3>();
  check_swiglu_slots<CfgWgN128S4>();
  check_swiglu_slots<CfgWgN256S3>();
  check_swiglu_slots<CfgPipeT128D2>();
  check_swiglu_slots<CfgPipeT256D2>();
  check_swiglu_slots<CfgPipeT128N256D2>();
}

// The dispatch table picks what run 2 on the H200 measured fastest (docs/gemm-fast.md).
TEST(GemmFastTiles, PicksMatchTheMeasuredWinners) {
  const auto name = [](uint32_t t, int64_t T, int64_t N, int64_t K) {
    return std::string(gemm_fast_variants(t)[static_cast<size_t>(gemm_fast_pick_variant(t, T, N, K))].name);
  };
  EXPECT_EQ(name(kQ4K, 512, 4096, 4096), "wgp_t128_n128_d2");
  EXPECT_EQ(name(kQ4K, 512, 4096, 11008), "wgp_t128_n128_d2");
  EXPECT_EQ(name(kQ4K, 512, 11008, 4096), "wgp_t256_n128_d2");
  EXPECT_EQ(name(kQ4K, 512, 32000, 4096), "wgp_t256_n128_d2");
  EXPECT_EQ(name(kQ4K, 2048, 4096, 4096), "wgp_t256_n128_d2");
  EXPECT_EQ(name(kQ8_0, 512, 4096, 4096), "wgmma_t128_n128_s3");
  EXPECT_EQ(name(kQ8_0, 2048, 11008, 4096), "wgp_t256_n128_d2");
  EXPECT_EQ(name(kQ6K, 2048, 4096, 11008), "wgmma_t128_n128_s3");
  EXPECT_EQ(name(kF16, 512, 4096, 4096), "wgp_t128_n128_d2");
  const auto& q4 = gemm_fast_variants(kQ4K);
  EXPECT_EQ(std::string(q4[static_cast<size_t>(gemm_fast_swiglu_pick_variant(kQ4K, 512, 11008, 4096))].name),
            "wgp_t256_n128_d2");
}

TEST(GemmFastTiles, VariantTableIsSane) {
  for (uint32_t t : kFastTypes) {
    const auto& v = gemm_fast_variants(t);
    ASSERT_FALSE(v.empty()) << type_name(t);
    std::set<std::string> names;
    for (const auto& info : v) {
      EXPECT_TRUE(names.insert(info.name).second) << "duplicate variant " << info.name;
      EXPECT_LE(info.smem_bytes, 227 * 1024) << info.name;
      EXPECT_GE(info.stages, 3) << info.name;
      EXPECT_EQ(info.threads % 128, 0) << info.name;
    }
    for (int64_t T : {9, 512, 2048})
      for (int64_t N : {4096, 11008, 32000}) {
        const int pick = gemm_fast_pick_variant(t, T, N, 4096);
        EXPECT_GE(pick, 0);
        EXPECT_LT(pick, static_cast<int>(v.size()));
        const int swi = gemm_fast_swiglu_pick_variant(t, T, N, 4096);
        EXPECT_GE(swi, 0);
        EXPECT_LT(swi, static_cast<int>(v.size()));
      }
  }
}

// A 16-byte-aligned non-null address that is never dereferenced by these host-only checks.
const void* fake_device_ptr() {
  alignas(256) static uint8_t buf[256];
  return buf;
}

TEST(GemmFastHost, ReasonsForUnsupportedCalls) {
  const void* p = fake_device_ptr();
  EXPECT_EQ(gemm_fast_unsupported_reason({p, kQ4K, 4096, 4096}, 512), "");
  EXPECT_EQ(gemm_fast_unsupported_reason({p, kQ6K, 4096, 11008}, 1), "");
  EXPECT_EQ(gemm_fast_unsupported_reason({p, kQ8_0, 264, 1088}, 7), "");
  struct Case {
    QuantMatrixView w;
    int64_t T;
    const char* expect;  // a phrase the reason must contain
  };
  const Case cases[] = {
      {{p, 0 /*F32*/, 4096, 4096}, 512, "type id 0"},
      {{p, 2 /*Q4_0*/, 4096, 4096}, 512, "no fast kernel"},
      {{p, kQ4K, 4096, 4096}, 0, "at least one token"},
      {{nullptr, kQ4K, 4096, 4096}, 512, "null"},
      {{static_cast<const uint8_t*>(p) + 2, kQ4K, 4096, 4096}, 512, "16-byte aligned"},
      {{p, kQ4K, 4096, 4000}, 512, "multiple of the block size"},
      {{p, kQ8_0, 4096, 4000}, 512, "64-wide k-tile"},
      {{p, kQ4K, 4095, 4096}, 512, "even"},
      {{p, kQ4K, 1, 4096}, 512, "at least 2 rows"},
  };
  for (const Case& c : cases) {
    const std::string why = gemm_fast_unsupported_reason(c.w, c.T);
    EXPECT_NE(why.find(c.expect), std::string::npos) << "reason '" << why << "' lacks '" << c.expect << "'";
  }
  EXPECT_EQ(gemm_fast_swiglu_unsupported_reason({p, kQ4K, 11008, 4096}, {p, kQ4K, 11008, 4096}, 512), "");
  EXPECT_NE(gemm_fast_swiglu_unsupported_reason({p, kQ4K, 11008, 4096}, {p, kQ6K, 11008, 4096}, 512).find("differ"),
            std::string::npos);
  EXPECT_NE(gemm_fast_swiglu_unsupported_reason({p, kQ4K, 11008, 4096}, {p, 0, 11008, 4096}, 512).find("up:"),
            std::string::npos);
}

TEST(GemmFastHost, BadArgumentsThrowBeforeAnyLaunch) {
  const void* p = fake_device_ptr();
  auto* x = static_cast<const uint16_t*>(p);
  void* y = const_cast<void*>(p);
  EXPECT_THROW(gemm_fast({p, 0, 4096, 4096}, x, 512, y, GemmEpilogue::StoreF32, nullptr), Error);
  EXPECT_THROW(gemm_fast({p, kQ4K, 4096, 4096}, nullptr, 512, y, GemmEpilogue::StoreF32, nullptr), Error);
  EXPECT_THROW(gemm_fast({p, kQ4K, 4096, 4096}, x + 1, 512, y, GemmEpilogue::StoreF32, nullptr), Error);
  EXPECT_THROW(gemm_fast({p, kQ4K, 4096, 4096}, x, 512, static_cast<uint8_t*>(y) + 4, GemmEpilogue::StoreF32, nullptr),
               Error);
  EXPECT_THROW(gemv_fast({p, kQ4K, 4096, 4096}, x, 9, y, GemmEpilogue::StoreF32, nullptr), Error);
  EXPECT_THROW(gemm_fast_variant(99, {p, kQ4K, 4096, 4096}, x, 512, y, GemmEpilogue::StoreF32, nullptr), Error);
  EXPECT_THROW(gemm_fast_swiglu({p, kQ4K, 11008, 4096}, {p, kQ4K, 4096, 4096}, x, 512, static_cast<uint16_t*>(y), nullptr),
               Error);
}

}  // namespace
}  // namespace pfx::kernels::test

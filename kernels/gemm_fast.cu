// Host side of the fast quantized GEMM (kernels/gemm_fast.h): precondition checks with reasons,
// the variant table, the per-shape choice of variant, and the public entry points. The kernels
// live in gemm_fast_kernel.cuh, instantiated per weight type in gemm_fast_q4k.cu / _q6k.cu /
// _q8_0.cu; the decode mat-vec in gemm_fast_gemv.cu.
#include <algorithm>
#include <cstdint>
#include <limits>
#include <string>

#include "kernels/gemm_fast.h"
#include "kernels/gemm_fast_internal.h"
#include "kernels/gemm_fast_gemv_job.cuh"
#include "kernels/gemm_fast_kernel.cuh"
#include "kernels/rope_math.cuh"
#include "quant/types.h"
#include "util/error.h"

namespace pfx::kernels {

namespace {

// ggml type ids (base/quant/types.h).
constexpr uint32_t kF16 = static_cast<uint32_t>(quant::Type::F16), kQ8_0 = static_cast<uint32_t>(quant::Type::Q8_0),
                   kQ4K = static_cast<uint32_t>(quant::Type::Q4_K), kQ6K = static_cast<uint32_t>(quant::Type::Q6_K);

// ggml's traits (name, block shape: base/quant/types.h) of a type the fast kernels take; nullptr
// for any other.
const quant::TypeTraits* fast_type(uint32_t t) {
  switch (t) {
    case kF16:
    case kQ8_0:
    case kQ4K:
    case kQ6K: return quant::traits(t);
    default: return nullptr;
  }
}

const std::vector<detail::GemmVariantEntry>& entries(uint32_t t) {
  switch (t) {
    case kQ4K: return detail::gemm_variants_q4k();
    case kQ6K: return detail::gemm_variants_q6k();
    case kQ8_0: return detail::gemm_variants_q8_0();
    case kF16: return detail::gemm_variants_f16();
    default: fail("gemm_fast: weight type id ", t, " has no fast kernel");
  }
}

// The decode mat-vec takes q5_K too (k_gemv_direct; no staged GEMM kernel for it).
constexpr uint32_t kQ5K = static_cast<uint32_t>(quant::Type::Q5_K);
const quant::TypeTraits* gemv_type(uint32_t t) { return t == kQ5K ? quant::traits(t) : fast_type(t); }

// Empty when the matrix suits the kernels. Cheap when it does (the engine asks before every GEMM):
// the message is only built for a rejection. ts: the matrix's traits if its type has a kernel.
std::string matrix_reason(const QuantMatrixView& w, const quant::TypeTraits* ts, const char* types) {
  if (ts == nullptr)
    return "weight type id " + std::to_string(w.ggml_type) + " has no fast kernel (" + types + " only)";
  const auto what = [&](const char* why) {
    return std::string(ts->name) + " matrix [" + std::to_string(w.rows) + ", " + std::to_string(w.cols) + "]: " + why;
  };
  if (w.data == nullptr) return what("data pointer is null");
  if (reinterpret_cast<uintptr_t>(w.data) % 16 != 0) return what("data is not 16-byte aligned");
  if (w.rows < 2 || w.cols < 64) return what("needs at least 2 rows and 64 columns");
  if (w.cols % ts->block_size != 0)
    return what(("columns are not a multiple of the block size " + std::to_string(ts->block_size)).c_str());
  if (w.cols % 64 != 0) return what("columns are not a multiple of the 64-wide k-tile");
  if (w.rows % 2 != 0) return what("rows (output columns) must be even: the epilogue stores pairs");
  // 32-bit index arithmetic in the kernels: K·T and N stay far below these bounds in practice.
  if (w.rows > (int64_t{1} << 24) || w.cols > (int64_t{1} << 24)) return what("dimension above 2^24");
  return {};
}

std::string matrix_reason(const QuantMatrixView& w) {
  return matrix_reason(w, fast_type(w.ggml_type), "q4_K, q6_K, q8_0, f16");
}

int64_t row_bytes(const QuantMatrixView& w) {
  const quant::TypeTraits* ts = gemv_type(w.ggml_type);
  return w.cols / ts->block_size * ts->type_size;
}

void require_ok(const std::string& why, const char* fn) {
  if (!why.empty()) fail(fn, ": ", why);
}

void require_pointers(const char* fn, const uint16_t* x16, const void* y, uint64_t y_align) {
  if (x16 == nullptr || y == nullptr) fail(fn, ": null activation or output pointer");
  if (reinterpret_cast<uintptr_t>(x16) % 16 != 0) fail(fn, ": x16 is not 16-byte aligned");
  if (reinterpret_cast<uintptr_t>(y) % y_align != 0) fail(fn, ": output is not ", y_align, "-byte aligned");
}

int mode_of(GemmEpilogue e) {
  switch (e) {
    case GemmEpilogue::StoreF32: return dev::kStoreF32;
    case GemmEpilogue::AccumulateF32: return dev::kAccumulateF32;
    case GemmEpilogue::StoreF16: return dev::kStoreF16;
  }
  fail("gemm_fast: unknown epilogue ", static_cast<int>(e));
}

int find_variant(uint32_t type, const char* name) {
  const auto& v = entries(type);
  for (size_t i = 0; i < v.size(); ++i)
    if (std::string(v[i].info.name) == name) return static_cast<int>(i);
  fail("gemm_fast: no variant ", name, " for weight type id ", type);
}

detail::GemmLaunch launch_args(const QuantMatrixView& w, const void* w1, const uint16_t* x16, int64_t T, void* y,
                               int mode, cudaStream_t stream) {
  return detail::GemmLaunch{w.data, w1, row_bytes(w), w.rows, w.cols, T, x16, y, mode, stream};
}

}  // namespace

std::string gemm_fast_unsupported_reason(const QuantMatrixView& w, int64_t T) {
  if (T < 1) return "T = " + std::to_string(T) + ": needs at least one token";
  if (T > std::numeric_limits<int32_t>::max() / 2) return "T = " + std::to_string(T) + " is too large";
  return matrix_reason(w);
}

std::string gemm_fast_swiglu_unsupported_reason(const QuantMatrixView& gate, const QuantMatrixView& up, int64_t T) {
  std::string why = gemm_fast_unsupported_reason(gate, T);
  if (!why.empty()) return "gate: " + why;
  why = matrix_reason(up);
  if (!why.empty()) return "up: " + why;
  if (gate.ggml_type != up.ggml_type || gate.rows != up.rows || gate.cols != up.cols)
    return "gate and up differ in type or shape";
  return {};
}

const std::vector<GemmVariantInfo>& gemm_fast_variants(uint32_t ggml_type) {
  static const auto build = [](uint32_t t) {
    std::vector<GemmVariantInfo> out;
    for (const auto& e : entries(t)) out.push_back(e.info);
    return out;
  };
  static const std::vector<GemmVariantInfo> q4 = build(kQ4K), q6 = build(kQ6K), q8 = build(kQ8_0), f16 = build(kF16);
  switch (ggml_type) {
    case kF16: return f16;
    case kQ4K: return q4;
    case kQ6K: return q6;
    case kQ8_0: return q8;
    default: fail("gemm_fast_variants: weight type id ", ggml_type, " has no fast kernel");
  }
}

// The choice per shape, from the H200 measurements in docs/gemm-fast.md (run 2, every
// variant validated): the 256-token pipelined tile (4 warpgroups; half the dequantization per MAC)
// wins once it fills a wave of the 132 SMs; below that a 128-token tile; q6_K, whose staging is
// heaviest, is best on the classic wgmma loop at every measured shape.
int gemm_fast_pick_variant(uint32_t ggml_type, int64_t T, int64_t N, int64_t K) {
  (void)K;
  constexpr int64_t kSms = 132;
  const bool full_wave_of_256 = ((T + 255) / 256) * ((N + 127) / 128) >= kSms;
  switch (ggml_type) {
    case kQ4K: return find_variant(ggml_type, full_wave_of_256 ? "wgp_t256_n128_d2" : "wgp_t128_n128_d2");
    case kQ8_0: return find_variant(ggml_type, full_wave_of_256 ? "wgp_t256_n128_d2" : "wgmma_t128_n128_s3");
    case kF16: return find_variant(ggml_type, full_wave_of_256 ? "wgp_t256_n128_d2" : "wgp_t128_n128_d2");
    case kQ6K: return find_variant(ggml_type, "wgmma_t128_n128_s3");
    default: fail("gemm_fast_pick_variant: weight type id ", ggml_type, " has no fast kernel");
  }
}

// SwiGLU tiles hold BN/2 output columns, so the CTA count is that of a GEMM with 2N rows.
int gemm_fast_swiglu_pick_variant(uint32_t ggml_type, int64_t T, int64_t N, int64_t K) {
  return gemm_fast_pick_variant(ggml_type, T, 2 * N, K);
}

void gemm_fast_variant(int variant, const QuantMatrixView& w, const uint16_t* x16, int64_t T, void* y,
                       GemmEpilogue epilogue, cudaStream_t stream) {
  require_ok(gemm_fast_unsupported_reason(w, T), "gemm_fast");
  require_pointers("gemm_fast", x16, y, epilogue == GemmEpilogue::StoreF16 ? 4 : 8);
  const auto& v = entries(w.ggml_type);
  if (variant < 0 || variant >= static_cast<int>(v.size()))
    fail("gemm_fast_variant: variant ", variant, " out of range [0, ", v.size(), ")");
  v[static_cast<size_t>(variant)].plain(launch_args(w, nullptr, x16, T, y, mode_of(epilogue), stream));
}

void gemm_fast_swiglu_variant(int variant, const QuantMatrixView& gate, const QuantMatrixView& up,
                              const uint16_t* x16, int64_t T, uint16_t* a16, cudaStream_t stream) {
  require_ok(gemm_fast_swiglu_unsupported_reason(gate, up, T), "gemm_fast_swiglu");
  require_pointers("gemm_fast_swiglu", x16, a16, 4);
  const auto& v = entries(gate.ggml_type);
  if (variant < 0 || variant >= static_cast<int>(v.size()))
    fail("gemm_fast_swiglu_variant: variant ", variant, " out of range [0, ", v.size(), ")");
  v[static_cast<size_t>(variant)].swiglu(launch_args(gate, up.data, x16, T, a16, dev::kSwiglu, stream));
}

void gemm_fast(const QuantMatrixView& w, const uint16_t* x16, int64_t T, void* y, GemmEpilogue epilogue,
               cudaStream_t stream) {
  gemm_fast_variant(gemm_fast_pick_variant(w.ggml_type, T, w.rows, w.cols), w, x16, T, y, epilogue, stream);
}

void gemm_fast_swiglu(const QuantMatrixView& gate, const QuantMatrixView& up, const uint16_t* x16, int64_t T,
                      uint16_t* a16, cudaStream_t stream) {
  gemm_fast_swiglu_variant(gemm_fast_swiglu_pick_variant(gate.ggml_type, T, gate.rows, gate.cols), gate, up, x16, T,
                           a16, stream);
}

std::string gemv_fast_unsupported_reason(const QuantMatrixView& w, int64_t T) {
  if (T < 1 || T > kGemvMaxT) return "T = " + std::to_string(T) + " outside 1.." + std::to_string(kGemvMaxT);
  return matrix_reason(w, gemv_type(w.ggml_type), "q4_K, q5_K, q6_K, q8_0, f16");
}

const char* gemv_kernel_name(GemvKernel k) {
  switch (k) {
    case GemvKernel::Auto: return "auto";
    case GemvKernel::Staged: return "staged";
    case GemvKernel::DirectW2: return "direct_w2";
    case GemvKernel::DirectW4: return "direct_w4";
    case GemvKernel::DirectW8: return "direct_w8";
    case GemvKernel::DirectW16: return "direct_w16";
    case GemvKernel::StreamW4: return "stream_w4";
    case GemvKernel::StreamW8: return "stream_w8";
    case GemvKernel::StreamW16: return "stream_w16";
    case GemvKernel::SeqD2: return "seq_d2";
    case GemvKernel::SeqD4: return "seq_d4";
  }
  return "?";
}

std::vector<GemvKernel> gemv_fast_kernels(uint32_t ggml_type) {
  switch (ggml_type) {
    case kQ4K:
      return {GemvKernel::Staged,    GemvKernel::DirectW2, GemvKernel::DirectW4, GemvKernel::DirectW8,
              GemvKernel::DirectW16, GemvKernel::StreamW4, GemvKernel::StreamW8, GemvKernel::StreamW16,
              GemvKernel::SeqD2,     GemvKernel::SeqD4};
    case kQ6K:
      return {GemvKernel::Staged,   GemvKernel::DirectW2, GemvKernel::DirectW4, GemvKernel::DirectW8,
              GemvKernel::StreamW4, GemvKernel::StreamW8, GemvKernel::SeqD2,    GemvKernel::SeqD4};
    case kQ5K:
      return {GemvKernel::DirectW2, GemvKernel::DirectW4, GemvKernel::DirectW8,
              GemvKernel::StreamW4, GemvKernel::StreamW8, GemvKernel::SeqD2};
    case kQ8_0:
    case kF16: return {GemvKernel::Staged};
    default: return {};
  }
}

void gemv_fast_kernel(GemvKernel kernel, const QuantMatrixView& w, const uint16_t* x16, int64_t T, void* y,
                      GemmEpilogue epilogue, cudaStream_t stream) {
  require_ok(gemv_fast_unsupported_reason(w, T), "gemv_fast");
  require_pointers("gemv_fast", x16, y, epilogue == GemmEpilogue::StoreF16 ? 2 : 4);
  if (kernel != GemvKernel::Auto) {
    const auto ks = gemv_fast_kernels(w.ggml_type);
    if (std::find(ks.begin(), ks.end(), kernel) == ks.end())
      fail("gemv_fast: kernel ", gemv_kernel_name(kernel), " does not take ", quant::traits(w.ggml_type)->name);
  }
  detail::gemv_launch(w.ggml_type, static_cast<int>(kernel), launch_args(w, nullptr, x16, T, y, mode_of(epilogue), stream));
}

void gemv_fast(const QuantMatrixView& w, const uint16_t* x16, int64_t T, void* y, GemmEpilogue epilogue,
               cudaStream_t stream) {
  gemv_fast_kernel(GemvKernel::Auto, w, x16, T, y, epilogue, stream);
}

namespace {
// The grouped launches run gemv_fast's T = 1 kernel (the direct one) on its K-quant types.
std::string direct_reason(const QuantMatrixView& w, int64_t T) {
  if (T != 1) return "T = " + std::to_string(T) + ": grouped decode launches take one token";
  if (w.ggml_type != kQ4K && w.ggml_type != kQ5K && w.ggml_type != kQ6K)
    return std::string(quant::traits(w.ggml_type) ? quant::traits(w.ggml_type)->name : "unknown type") +
           ": grouped decode launches take q4_K, q5_K, q6_K";
  return gemv_fast_unsupported_reason(w, T);
}
}  // namespace

std::string gemv_fast_group_unsupported_reason(const std::vector<GemvOutput>& parts, int64_t T) {
  if (parts.empty() || parts.size() > static_cast<size_t>(kGemvMaxParts))
    return std::to_string(parts.size()) + " matrices: a grouped launch takes 1.." + std::to_string(kGemvMaxParts);
  for (size_t i = 0; i < parts.size(); ++i) {
    if (const std::string why = direct_reason(parts[i].w, T); !why.empty()) return "part " + std::to_string(i) + ": " + why;
    const QuantMatrixView &w = parts[i].w, &w0 = parts[0].w;
    if (w.ggml_type != w0.ggml_type || w.cols != w0.cols)
      return "part " + std::to_string(i) + " differs from part 0 in type or columns";
    // One block size for the launch: it must be each part's own (it fixes the summation order).
    if (detail::gemv_direct_warps(w.ggml_type, T, w.rows, w.cols) != detail::gemv_direct_warps(w0.ggml_type, T, w0.rows, w0.cols))
      return "part " + std::to_string(i) + " (" + std::to_string(w.rows) + " rows) is summed by another block size than part 0";
  }
  return {};
}

void gemv_fast_group(const std::vector<GemvOutput>& parts, const uint16_t* x16, int64_t T, cudaStream_t stream) {
  require_ok(gemv_fast_group_unsupported_reason(parts, T), "gemv_fast_group");
  detail::GemvPartLaunch launch[kGemvMaxParts];
  for (size_t i = 0; i < parts.size(); ++i) {
    const GemvOutput& p = parts[i];
    require_pointers("gemv_fast_group", x16, p.y, p.epilogue == GemmEpilogue::StoreF16 ? 2 : 4);
    launch[i] = {p.w.data, row_bytes(p.w), p.w.rows, p.y, mode_of(p.epilogue)};
  }
  detail::gemv_group_launch(parts[0].w.ggml_type, launch, static_cast<int>(parts.size()), false, parts[0].w.cols, x16, T,
                            stream);
}

std::string gemv_fast_group_heads_unsupported_reason(const std::vector<GemvHeadOutput>& parts, int64_t T,
                                                     const GemvRopeTarget& rope) {
  std::vector<GemvOutput> plain;
  for (const GemvHeadOutput& p : parts) plain.push_back({p.w, p.y, GemmEpilogue::StoreF16});
  if (std::string why = gemv_fast_group_unsupported_reason(plain, T); !why.empty()) return why;
  std::vector<int64_t> rows;
  std::vector<bool> rotates;
  for (const GemvHeadOutput& p : parts) rows.push_back(p.w.rows), rotates.push_back(p.rotate);
  return detail::gemv_heads_reason(rows, rotates, T, rope);
}

namespace detail {

std::string gemv_heads_reason(const std::vector<int64_t>& rows, const std::vector<bool>& rotates, int64_t T,
                              const GemvRopeTarget& rope) {
  const int hd = rope.head_dim;
  // A 16-row tile of the decode kernel lies in one head (its stores read 8 consecutive pairs).
  if (hd < 16 || hd % 16 != 0) return "head dim " + std::to_string(hd) + " must be a positive multiple of 16";
  if (reinterpret_cast<uintptr_t>(rope.cos_sin) % 16 != 0) return "the cos/sin table must be 16-byte aligned";
  if (rope.max_ctx < 1) return "max_ctx " + std::to_string(rope.max_ctx) + " must be positive";
  if (!rope.p0_dev && !dev::cache_rows_fit(rope.p0, T, rope.max_ctx))
    return "positions " + std::to_string(rope.p0) + ".." + std::to_string(rope.p0 + T - 1) + " do not fit the cache (max_ctx " +
           std::to_string(rope.max_ctx) + ")";
  for (size_t i = 0; i < rows.size(); ++i) {
    if (rows[i] % hd != 0)
      return "part " + std::to_string(i) + ": " + std::to_string(rows[i]) + " rows are not whole heads of " + std::to_string(hd);
    if (rotates[i] && !rope.cos_sin) return "part " + std::to_string(i) + " rotates but there is no cos/sin table";
  }
  return {};
}

int gemv_mode_of(GemmEpilogue e) { return mode_of(e); }

void check_gemv_pointers(const char* fn, const uint16_t* x16, const void* y, uint64_t y_align) {
  require_pointers(fn, x16, y, y_align);
}

}  // namespace detail

void gemv_fast_group_heads(const std::vector<GemvHeadOutput>& parts, const GemvRopeTarget& rope, const uint16_t* x16,
                           int64_t T, cudaStream_t stream) {
  require_ok(gemv_fast_group_heads_unsupported_reason(parts, T, rope), "gemv_fast_group_heads");
  detail::GemvPartLaunch launch[kGemvMaxParts];
  for (size_t i = 0; i < parts.size(); ++i) {
    const GemvHeadOutput& p = parts[i];
    require_pointers("gemv_fast_group_heads", x16, p.y, 4);  // pairs: 4-byte stores
    launch[i] = {p.w.data, row_bytes(p.w), p.w.rows, p.y, dev::kStoreF16,
                 (p.rotate ? dev::kGemvHeadRotate : 0) | (p.kv_cache ? dev::kGemvHeadCache : 0)};
  }
  detail::gemv_group_launch(parts[0].w.ggml_type, launch, static_cast<int>(parts.size()), false, parts[0].w.cols, x16, T,
                            stream, &rope);
}

std::string gemv_fast_swiglu_unsupported_reason(const QuantMatrixView& gate, const QuantMatrixView& up, int64_t T) {
  if (std::string why = direct_reason(gate, T); !why.empty()) return "gate: " + why;
  if (std::string why = direct_reason(up, T); !why.empty()) return "up: " + why;
  if (gate.ggml_type != up.ggml_type || gate.rows != up.rows || gate.cols != up.cols)
    return "gate and up differ in type or shape";
  return {};
}

void gemv_fast_swiglu(const QuantMatrixView& gate, const QuantMatrixView& up, const uint16_t* x16, int64_t T,
                      uint16_t* a16, cudaStream_t stream) {
  require_ok(gemv_fast_swiglu_unsupported_reason(gate, up, T), "gemv_fast_swiglu");
  require_pointers("gemv_fast_swiglu", x16, a16, 2);
  const detail::GemvPartLaunch launch[2] = {{gate.data, row_bytes(gate), gate.rows, a16, dev::kStoreF16},
                                            {up.data, row_bytes(up), up.rows, a16, dev::kStoreF16}};
  detail::gemv_group_launch(gate.ggml_type, launch, 2, true, gate.cols, x16, T, stream);
}

}  // namespace pfx::kernels

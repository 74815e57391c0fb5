// Host side of the warp-specialized fused GEMM (kernels/gemm_ws.h): precondition checks with
// reasons, the repack, the per-shape choice of the token tile, and the entry points. Kernels:
// kernels/gemm_ws_kernel.cuh, instantiated per weight type in gemm_ws_q4k.cu / _q5k.cu /
// _q6k.cu / _q8_0.cu / _f16.cu.
#include <cuda_runtime_api.h>

#include <algorithm>
#include <cstdint>
#include <map>
#include <mutex>
#include <string>
#include <thread>

#include "kernels/cuda_check.h"
#include "kernels/gemm_ws.h"
#include "kernels/gemm_ws_internal.h"
#include "kernels/gemm_ws_kernel.cuh"
#include "kernels/gemm_ws_schedule.cuh"
#include "kernels/launch_info.h"
#include "quant/types.h"
#include "util/error.h"

namespace pfx::kernels {

namespace {

using quant::Type;

const detail::WsTypeEntry* type_entry(uint32_t t) {
  switch (static_cast<Type>(t)) {
    case Type::Q4_K: return &detail::ws_type_q4k();
    case Type::Q5_K: return &detail::ws_type_q5k();
    case Type::Q6_K: return &detail::ws_type_q6k();
    case Type::Q8_0: return &detail::ws_type_q8_0();
    case Type::F16: return &detail::ws_type_f16();
    default: return nullptr;
  }
}

const detail::WsTypeEntry& entry_or_fail(uint32_t t, const char* fn) {
  const detail::WsTypeEntry* e = type_entry(t);
  if (e == nullptr) fail(fn, ": weight type ", quant::describe_type_id(t), " has no gemm_ws kernel");
  return *e;
}

int mode_of(GemmEpilogue e) {
  switch (e) {
    case GemmEpilogue::StoreF32: return dev::kWsStoreF32;
    case GemmEpilogue::AccumulateF32: return dev::kWsAccumulateF32;
    case GemmEpilogue::StoreF16: return dev::kWsStoreF16;
  }
  fail("gemm_ws: unknown epilogue ", static_cast<int>(e));
}

void check_call(const char* fn, const WsMatrixView& w, const uint16_t* x16, int64_t T, const void* y, int y_align) {
  if (const std::string why = gemm_ws_unsupported_reason(w.ggml_type, w.rows, w.cols); !why.empty()) fail(fn, ": ", why);
  if (w.data == nullptr || x16 == nullptr || y == nullptr) fail(fn, ": null weight, activation or output pointer");
  if (reinterpret_cast<uintptr_t>(w.data) % 16 != 0 || reinterpret_cast<uintptr_t>(x16) % 16 != 0)
    fail(fn, ": weights and activations must be 16-byte aligned");
  if (reinterpret_cast<uintptr_t>(y) % y_align != 0) fail(fn, ": output is not ", y_align, "-byte aligned");
  if (T < 1 || T > (int64_t{1} << 30)) fail(fn, ": T = ", T, " is outside 1 .. 2^30");
}

detail::WsLaunch launch_args(const WsMatrixView& w, const uint16_t* x16, int64_t T, void* y, int mode,
                             cudaStream_t stream) {
  return {w.data, w.swiglu ? 2 * w.rows : w.rows, w.cols, T, x16, y, mode, stream};
}

// The split-chain variants' workspace on one device: per CTA (at most one per SM) the
// accumulators of one 128 × 256 tile (2 panels × 128 threads × 128 floats) and a ready flag,
// zeroed once (each tail clears the flag it consumed). The kernels do not claim slots (a claim on
// the device cost the split kernels their wgmma pipeline, kernels/gemm_ws_kernel.cuh), so the host
// keeps the launches that share it from overlapping: one stream's kernels never do (plain launches,
// kernels/gemm_ws_kernel.cuh: ws_store_head), and a launch on another stream,
// or from another host thread (cudaStreamPerThread is one handle for many streams), first waits
// for the last launch (`last_done`, recorded after every launch).
struct SplitWorkspace {
  void* partial = nullptr;
  unsigned* ready = nullptr;
  cudaEvent_t last_done = nullptr;
  cudaStream_t last_stream = nullptr;
  std::thread::id last_thread;
  bool launched = false;
};
std::mutex split_mutex;  // guards split_by_device and every launch that uses a workspace

// The current device's workspace, allocated on first use (split_mutex held).
SplitWorkspace& split_workspace_locked() {
  static std::map<int, SplitWorkspace> split_by_device;  // live for the process, as the CUDA context
  int dev = 0;
  CUDA_CHECK(cudaGetDevice(&dev));
  if (const auto it = split_by_device.find(dev); it != split_by_device.end()) return it->second;
  int sms = 0;
  CUDA_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev));
  SplitWorkspace w;
  CUDA_CHECK(cudaMalloc(&w.partial, static_cast<size_t>(sms) * 2 * 128 * 128 * sizeof(float)));
  CUDA_CHECK(cudaMalloc(reinterpret_cast<void**>(&w.ready), static_cast<size_t>(sms) * sizeof(unsigned)));
  CUDA_CHECK(cudaMemset(w.ready, 0, static_cast<size_t>(sms) * sizeof(unsigned)));
  CUDA_CHECK(cudaEventCreateWithFlags(&w.last_done, cudaEventDisableTiming));
  CUDA_CHECK(cudaDeviceSynchronize());  // the flags are zero before any launch reads them
  return split_by_device.emplace(dev, w).first->second;
}

// A split-chain launch, ordered after the previous one that used the device's workspace.
void launch_split(const detail::WsVariantEntry& v, detail::WsLaunch a) {
  const std::lock_guard<std::mutex> lock(split_mutex);
  cudaStreamCaptureStatus capture = cudaStreamCaptureStatusNone;
  CUDA_CHECK(cudaStreamIsCapturing(a.stream, &capture));
  if (capture != cudaStreamCaptureStatusNone)
    fail("gemm_ws: variant ", v.info.name, " (split chains) cannot be captured in a CUDA graph: its workspace is "
         "shared by every launch on the device, and a graph's replay would not be ordered after them; use a "
         "whole-tile variant");
  SplitWorkspace& w = split_workspace_locked();
  const std::thread::id me = std::this_thread::get_id();
  if (w.launched && (w.last_stream != a.stream || w.last_thread != me))
    CUDA_CHECK(cudaStreamWaitEvent(a.stream, w.last_done, 0));
  a.partial = w.partial, a.ready = w.ready;
  v.launch(a);
  CUDA_CHECK(cudaEventRecord(w.last_done, a.stream));
  w.last_stream = a.stream, w.last_thread = me, w.launched = true;
}

void launch_variant(const detail::WsVariantEntry& v, detail::WsLaunch a, int max_ctas) {
  a.max_ctas = max_ctas;
  if (v.info.split_chains) return launch_split(v, a);
  v.launch(a);
}

// The device's multiprocessors (the persistent grid); an H200's 132 where no device answers (host tests).
int64_t sm_count() {
  static const int64_t n = [] {
    int dev = 0, sms = 0;
    if (cudaGetDevice(&dev) != cudaSuccess || cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev) != cudaSuccess ||
        sms <= 0) {
      (void)cudaGetLastError();
      return int64_t{132};
    }
    return int64_t{sms};
  }();
  return n;
}

const detail::WsVariantEntry& variant_or_fail(uint32_t type, int v, const char* fn) {
  const auto& vs = entry_or_fail(type, fn).variants;
  if (v < 0 || v >= static_cast<int>(vs.size())) fail(fn, ": variant ", v, " out of range [0, ", vs.size(), ")");
  return vs[static_cast<size_t>(v)];
}

}  // namespace

std::string gemm_ws_unsupported_reason(uint32_t ggml_type, int64_t rows, int64_t cols) {
  const detail::WsTypeEntry* e = type_entry(ggml_type);
  if (e == nullptr) return "weight type " + quant::describe_type_id(ggml_type) + " has no gemm_ws kernel (q4_K, q5_K, q6_K, q8_0, f16)";
  const std::string shape = "[" + std::to_string(rows) + ", " + std::to_string(cols) + "]";
  if (rows < 64 || rows % 64 != 0) return shape + ": rows must be a positive multiple of 64";
  if (cols < e->group_k || cols % e->group_k != 0)
    return shape + ": columns must be a positive multiple of " + std::to_string(e->group_k);
  if (rows > (int64_t{1} << 24) || cols > (int64_t{1} << 24)) return shape + ": dimension above 2^24";
  return {};
}

int64_t gemm_ws_repacked_bytes(uint32_t ggml_type, int64_t rows, int64_t cols, bool swiglu) {
  const detail::WsTypeEntry& e = entry_or_fail(ggml_type, "gemm_ws_repacked_bytes");
  const int64_t out_rows = swiglu ? 2 * rows : rows;
  return (out_rows + 127) / 128 * (cols / e.group_k) * e.repacked_bytes_per_pair_group;
}

namespace {
constexpr int kScaleRangeThreads = 256;
}  // namespace

// Counts the blocks whose scale d lies outside the decoders' range (dev::ws_scale_in_range).
__global__ void __launch_bounds__(kScaleRangeThreads)
    k_ws_scales_out_of_range(const uint8_t* __restrict__ w, int64_t blocks, int block_bytes, int d_offset, int type,
                             unsigned long long* __restrict__ bad) {
  unsigned long long n = 0;
  for (int64_t b = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; b < blocks;
       b += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    const uint8_t* p = w + b * block_bytes + d_offset;  // q6_K blocks are 2-byte aligned: two byte loads
    n += dev::ws_scale_in_range(type, static_cast<uint32_t>(p[0]) | (static_cast<uint32_t>(p[1]) << 8)) ? 0u : 1u;
  }
  if (n) atomicAdd(bad, n);
}
PFX_KERNEL_LAUNCH_INFO("k_ws_scales_out_of_range", kScaleRangeThreads, 0);

std::string gemm_ws_scales_out_of_range(const QuantMatrixView& src, cudaStream_t stream) {
  const int d_offset = dev::ws_scale_offset_in_block(static_cast<int>(src.ggml_type));
  if (d_offset < 0) return {};
  if (src.data == nullptr) fail("gemm_ws_scales_out_of_range: null pointer");
  const quant::TypeTraits& tr = quant::traits(static_cast<Type>(src.ggml_type));
  const int64_t blocks = src.rows * (src.cols / tr.block_size);
  if (blocks == 0) return {};
  unsigned long long* bad = nullptr;
  CUDA_CHECK(cudaMallocAsync(&bad, sizeof *bad, stream));
  CUDA_CHECK(cudaMemsetAsync(bad, 0, sizeof *bad, stream));
  const int64_t grid = std::min<int64_t>((blocks + kScaleRangeThreads - 1) / kScaleRangeThreads, 1024);
  k_ws_scales_out_of_range<<<static_cast<unsigned>(grid), kScaleRangeThreads, 0, stream>>>(
      static_cast<const uint8_t*>(src.data), blocks, static_cast<int>(tr.type_size), d_offset,
      static_cast<int>(src.ggml_type), bad);
  CUDA_CHECK_LAUNCH();
  unsigned long long n = 0;
  CUDA_CHECK(cudaMemcpyAsync(&n, bad, sizeof n, cudaMemcpyDeviceToHost, stream));
  CUDA_CHECK(cudaFreeAsync(bad, stream));
  CUDA_CHECK(cudaStreamSynchronize(stream));
  if (n == 0) return {};
  const bool q4k = src.ggml_type == static_cast<uint32_t>(Type::Q4_K);
  return std::to_string(n) + " of " + std::to_string(blocks) + " " + std::string(quant::type_name(static_cast<Type>(src.ggml_type))) +
         " blocks have a scale d outside the fused decode's range (|d| " + (q4k ? "<= 2^-7" : "< 2^-10") + ")";
}

void gemm_ws_repack(const QuantMatrixView& src, void* dst, cudaStream_t stream) {
  if (const std::string why = gemm_ws_unsupported_reason(src.ggml_type, src.rows, src.cols); !why.empty())
    fail("gemm_ws_repack: ", why);
  if (src.data == nullptr || dst == nullptr) fail("gemm_ws_repack: null pointer");
  if (const std::string why = gemm_ws_scales_out_of_range(src, stream); !why.empty()) fail("gemm_ws_repack: ", why);
  entry_or_fail(src.ggml_type, "gemm_ws_repack").repack(src.data, nullptr, src.rows, src.cols, dst, stream);
}

void gemm_ws_repack_swiglu(const QuantMatrixView& gate, const QuantMatrixView& up, void* dst, cudaStream_t stream) {
  if (gate.ggml_type != up.ggml_type || gate.rows != up.rows || gate.cols != up.cols)
    fail("gemm_ws_repack_swiglu: gate and up differ in type or shape");
  if (const std::string why = gemm_ws_unsupported_reason(gate.ggml_type, gate.rows, gate.cols); !why.empty())
    fail("gemm_ws_repack_swiglu: ", why);
  if (gate.data == nullptr || up.data == nullptr || dst == nullptr) fail("gemm_ws_repack_swiglu: null pointer");
  for (const QuantMatrixView* m : {&gate, &up})
    if (const std::string why = gemm_ws_scales_out_of_range(*m, stream); !why.empty()) fail("gemm_ws_repack_swiglu: ", why);
  entry_or_fail(gate.ggml_type, "gemm_ws_repack_swiglu").repack(gate.data, up.data, gate.rows, gate.cols, dst, stream);
}

const std::vector<WsVariantInfo>& gemm_ws_variants(uint32_t ggml_type) {
  static const auto build = [](uint32_t t) {
    std::vector<WsVariantInfo> v;
    for (const auto& e : entry_or_fail(t, "gemm_ws_variants").variants) v.push_back(e.info);
    return v;
  };
  static const std::vector<WsVariantInfo> q4 = build(dev::kWsQ4K), q5 = build(dev::kWsQ5K), q6 = build(dev::kWsQ6K),
                                          q8 = build(dev::kWsQ8_0), f16 = build(dev::kWsF16);
  switch (static_cast<Type>(ggml_type)) {
    case Type::Q4_K: return q4;
    case Type::Q5_K: return q5;
    case Type::Q6_K: return q6;
    case Type::Q8_0: return q8;
    case Type::F16: return f16;
    default: fail("gemm_ws_variants: weight type ", quant::describe_type_id(ggml_type), " has no gemm_ws kernel");
  }
}

// Persistent CTAs (clusters), costs in rounds of one 128 × 256 tile's k chain, fitted to the H200
// (docs/gemm-fast.md, session 11; q4_K, T = 512, K = 4096): whole tiles take ⌈tiles / CTAs⌉ rounds,
// a 128-token tile's round 0.78 of a 256-token one (39.2 vs 50.1 µs: it issues more decode per
// MMA); split chains take 1.032 × tiles / CTAs rounds plus 11.7 µs (0.23 rounds at K = 4096,
// fewer at a longer K; fitted to 11008, 12288, 22016 and 32000 rows within 1.5%), and are taken
// only where they beat whole tiles by more than 1% (at T = 2048 most shapes fill ~97% of their
// last round: splitting there lost 5% of pp2048 in the first build). A variant's round cost is
// its WsVariantInfo::round_cost, its slots the tiles it runs at once (a cluster variant: its
// resident clusters, where the entry can say). The cluster variants and the shared-A variants
// have none: measured slower than ws_n128 / ws_n256 at every 7B shape (docs/gemm-fast.md,
// sessions 4, 9 and 13).
int gemm_ws_pick_variant(uint32_t ggml_type, int64_t T, int64_t out_rows, int64_t K) {
  const auto& vs = gemm_ws_variants(ggml_type);
  const auto& entries = entry_or_fail(ggml_type, "gemm_ws_pick_variant").variants;
  const int64_t sms = sm_count();
  constexpr double kSplitPerRound = 1.032, kSplitFixedRoundsAtK4096 = 0.23, kSplitMargin = 0.99;
  int best = 0;
  double best_cost = 1e300;
  for (int pass = 0; pass < 2; ++pass)  // whole tiles first: a split must beat the best of them
    for (size_t i = 0; i < vs.size(); ++i) {
      const WsVariantInfo& v = vs[i];
      if (v.round_cost <= 0.0 || v.split_chains != (pass == 1)) continue;
      const int64_t tiles = (out_rows + v.tile_m - 1) / v.tile_m * ((T + v.tile_n - 1) / v.tile_n);
      const int resident = entries[i].resident != nullptr ? entries[i].resident() : 0;
      const int64_t slots = resident > 0 ? resident : std::max<int64_t>(1, sms * v.ctas_per_sm / v.sms_per_tile);
      const double round = v.round_cost;
      double cost = static_cast<double>((tiles + slots - 1) / slots) * round;
      if (v.split_chains) {
        if (!dev::ws_split_balances(tiles, static_cast<int>(slots))) continue;  // it would run whole tiles
        cost = (kSplitPerRound * static_cast<double>(tiles) / static_cast<double>(slots) +
                kSplitFixedRoundsAtK4096 * 4096.0 / static_cast<double>(std::max<int64_t>(K, 64))) *
               round / kSplitMargin;
      }
      if (cost < best_cost) best = static_cast<int>(i), best_cost = cost;
    }
  return best;
}

void gemm_ws_variant(int variant, const WsMatrixView& w, const uint16_t* x16, int64_t T, void* y,
                     GemmEpilogue epilogue, cudaStream_t stream, int max_ctas) {
  if (w.swiglu) fail("gemm_ws: an interleaved SwiGLU matrix takes gemm_ws_swiglu");
  check_call("gemm_ws", w, x16, T, y, epilogue == GemmEpilogue::StoreF16 ? 4 : 8);
  launch_variant(variant_or_fail(w.ggml_type, variant, "gemm_ws"), launch_args(w, x16, T, y, mode_of(epilogue), stream),
                 max_ctas);
}

void gemm_ws_swiglu_variant(int variant, const WsMatrixView& w, const uint16_t* x16, int64_t T, uint16_t* a16,
                            cudaStream_t stream, int max_ctas) {
  if (!w.swiglu) fail("gemm_ws_swiglu: the matrix is not an interleaved gate/up repack");
  check_call("gemm_ws_swiglu", w, x16, T, a16, 4);
  launch_variant(variant_or_fail(w.ggml_type, variant, "gemm_ws_swiglu"),
                 launch_args(w, x16, T, a16, dev::kWsSwiglu, stream), max_ctas);
}

std::string gemm_ws_group_unsupported_reason(uint32_t ggml_type, const std::vector<WsGroupPart>& parts, int64_t cols) {
  if (parts.empty() || parts.size() > static_cast<size_t>(kWsMaxGroupParts))
    return std::to_string(parts.size()) + " parts (a group takes 1 to " + std::to_string(kWsMaxGroupParts) + ")";
  int64_t rows = 0;
  for (size_t i = 0; i < parts.size(); ++i) {
    if (const std::string why = gemm_ws_unsupported_reason(ggml_type, parts[i].rows, cols); !why.empty())
      return "part " + std::to_string(i) + ": " + why;
    if (i + 1 < parts.size() && parts[i].rows % 128 != 0)
      return "part " + std::to_string(i) + ": " + std::to_string(parts[i].rows) +
             " rows, not a multiple of 128 (its tiles would mix two parts)";
    rows += parts[i].rows;
  }
  return gemm_ws_unsupported_reason(ggml_type, rows, cols);
}

void gemm_ws_group_variant(int variant, const WsMatrixView& w, const std::vector<WsGroupPart>& parts,
                           const uint16_t* x16, int64_t T, GemmEpilogue epilogue, cudaStream_t stream, int max_ctas) {
  if (w.swiglu) fail("gemm_ws_group: an interleaved SwiGLU matrix takes gemm_ws_swiglu");
  if (const std::string why = gemm_ws_group_unsupported_reason(w.ggml_type, parts, w.cols); !why.empty())
    fail("gemm_ws_group: ", why);
  int64_t rows = 0;
  for (const WsGroupPart& part : parts) rows += part.rows;
  if (rows != w.rows) fail("gemm_ws_group: the parts have ", rows, " rows, the matrix ", w.rows);
  const int y_align = epilogue == GemmEpilogue::StoreF16 ? 4 : 8;
  for (const WsGroupPart& part : parts) check_call("gemm_ws_group", w, x16, T, part.y, y_align);
  const detail::WsVariantEntry& v = variant_or_fail(w.ggml_type, variant, "gemm_ws_group");
  if (!v.info.groups) fail("gemm_ws_group: variant ", v.info.name, " takes no groups");
  detail::WsLaunch a = launch_args(w, x16, T, parts.front().y, mode_of(epilogue), stream);
  a.parts = static_cast<int>(parts.size());
  for (size_t i = 0; i < parts.size(); ++i) a.part_rows[i] = parts[i].rows, a.part_y[i] = parts[i].y;
  launch_variant(v, a, max_ctas);
}

std::string gemm_ws_group_rope_unsupported_reason(uint32_t ggml_type, const std::vector<WsHeadPart>& parts, int64_t cols,
                                                  int64_t T, const WsRopeTarget& rope) {
  std::vector<WsGroupPart> rows;
  for (const WsHeadPart& part : parts) rows.push_back({part.rows, part.y});
  if (std::string why = gemm_ws_group_unsupported_reason(ggml_type, rows, cols); !why.empty()) return why;
  const int hd = rope.head_dim;
  if (hd < 2 || hd % 2 != 0) return "head dim " + std::to_string(hd) + " must be even and >= 2";
  for (size_t i = 0; i < parts.size(); ++i) {
    const std::string at = "part " + std::to_string(i) + ": ";
    if (parts[i].rows % hd != 0)
      return at + std::to_string(parts[i].rows) + " rows are not whole heads of " + std::to_string(hd);
    if (parts[i].rotate && rope.cos_sin == nullptr) return at + "rotates, but there is no cos/sin table";
    if (parts[i].kv_cache && (rope.p0 < 0 || T > rope.max_ctx - int64_t{rope.p0}))
      return at + "positions " + std::to_string(rope.p0) + " .. " + std::to_string(rope.p0 + T - 1) +
             " do not fit a cache of " + std::to_string(rope.max_ctx) + " rows";
  }
  return {};
}

void gemm_ws_group_rope_variant(int variant, const WsMatrixView& w, const std::vector<WsHeadPart>& parts,
                                const WsRopeTarget& rope, const uint16_t* x16, int64_t T, cudaStream_t stream,
                                int max_ctas) {
  if (w.swiglu) fail("gemm_ws_group_rope: an interleaved SwiGLU matrix takes gemm_ws_swiglu");
  if (const std::string why = gemm_ws_group_rope_unsupported_reason(w.ggml_type, parts, w.cols, T, rope); !why.empty())
    fail("gemm_ws_group_rope: ", why);
  int64_t rows = 0;
  for (const WsHeadPart& part : parts) rows += part.rows;
  if (rows != w.rows) fail("gemm_ws_group_rope: the parts have ", rows, " rows, the matrix ", w.rows);
  for (const WsHeadPart& part : parts) check_call("gemm_ws_group_rope", w, x16, T, part.y, 4);
  if (rope.cos_sin != nullptr && reinterpret_cast<uintptr_t>(rope.cos_sin) % 8 != 0)
    fail("gemm_ws_group_rope: the cos/sin table is not 8-byte aligned");
  const detail::WsVariantEntry& v = variant_or_fail(w.ggml_type, variant, "gemm_ws_group_rope");
  if (!v.info.groups) fail("gemm_ws_group_rope: variant ", v.info.name, " takes no groups");
  detail::WsLaunch a = launch_args(w, x16, T, parts.front().y, dev::kWsHeads, stream);
  a.parts = static_cast<int>(parts.size());
  for (size_t i = 0; i < parts.size(); ++i) {
    a.part_rows[i] = parts[i].rows, a.part_y[i] = parts[i].y;
    a.part_store[i] = (parts[i].rotate ? dev::kWsHeadRotate : 0) | (parts[i].kv_cache ? dev::kWsHeadCache : 0);
  }
  a.rope_cos_sin = rope.cos_sin;
  a.head_dim = rope.head_dim, a.p0 = rope.p0, a.max_ctx = rope.max_ctx;
  launch_variant(v, a, max_ctas);
}

void gemm_ws_group_rope(const WsMatrixView& w, const std::vector<WsHeadPart>& parts, const WsRopeTarget& rope,
                        const uint16_t* x16, int64_t T, cudaStream_t stream) {
  gemm_ws_group_rope_variant(gemm_ws_pick_variant(w.ggml_type, T, w.rows, w.cols), w, parts, rope, x16, T, stream);
}

void gemm_ws_group(const WsMatrixView& w, const std::vector<WsGroupPart>& parts, const uint16_t* x16, int64_t T,
                   GemmEpilogue epilogue, cudaStream_t stream) {
  gemm_ws_group_variant(gemm_ws_pick_variant(w.ggml_type, T, w.rows, w.cols), w, parts, x16, T, epilogue, stream);
}

void gemm_ws_reserve_workspace() {
  const std::lock_guard<std::mutex> lock(split_mutex);
  (void)split_workspace_locked();
}

void gemm_ws(const WsMatrixView& w, const uint16_t* x16, int64_t T, void* y, GemmEpilogue epilogue,
             cudaStream_t stream) {
  gemm_ws_variant(gemm_ws_pick_variant(w.ggml_type, T, w.rows, w.cols), w, x16, T, y, epilogue, stream);
}

void gemm_ws_swiglu(const WsMatrixView& w, const uint16_t* x16, int64_t T, uint16_t* a16, cudaStream_t stream) {
  gemm_ws_swiglu_variant(gemm_ws_pick_variant(w.ggml_type, T, 2 * w.rows, w.cols), w, x16, T, a16, stream);
}

}  // namespace pfx::kernels

#include "cuda/gemm_dispatch.h"

#include <cublas_v2.h>

#include <algorithm>
#include <iostream>
#include <map>
#include <set>
#include <string>

#include "cuda/nvtx_range.h"
#include "kernels/cuda_check.h"
#include "kernels/gemm_fast.h"
#include "kernels/gemm_ws.h"
#include "kernels/gemv_ws.h"
#include "kernels/kernels.h"
#include "util/error.h"

namespace pfx::cuda {

namespace {
// cuBLAS wants a workspace of its own when it runs on a user stream; 32 MiB covers Hopper's needs.
constexpr size_t kCublasWorkspaceBytes = 32u << 20;

kernels::GemmEpilogue to_fast(Epilogue e) {
  switch (e) {
    case Epilogue::StoreF32: return kernels::GemmEpilogue::StoreF32;
    case Epilogue::AccumulateF32: return kernels::GemmEpilogue::AccumulateF32;
    case Epilogue::StoreF16: return kernels::GemmEpilogue::StoreF16;
  }
  return kernels::GemmEpilogue::StoreF32;
}

// The GGUF blocks of w, which must still be on the device (reads_repack_only: the caller may have
// released them, and then nothing here may ask for them).
kernels::QuantMatrixView view(const DeviceMatrix& w) {
  if (w.buffer.as() == nullptr)
    fail("GemmDispatch: the GGUF blocks of ", w.name, " left the device (every GEMM on it was to read its repack), ",
         "yet a kernel on the blocks was asked for");
  return {w.buffer.as(), w.ggml_type, w.rows, w.cols};
}
}  // namespace

void GemmDispatch::prepare(const std::vector<const DeviceMatrix*>& matrices,
                           const std::vector<std::pair<const DeviceMatrix*, const DeviceMatrix*>>& swiglu,
                           const std::vector<std::vector<const DeviceMatrix*>>& groups) {
  if (!fast_ || variant_ != FastGemm::Fused) return;
  kernels::gemm_ws_reserve_workspace();  // now, not inside the first prefill
  // Why the fused GEMM's decode cannot take a matrix's block scales ("" if it can), once per matrix:
  // such a matrix keeps the cuBLAS path (noted below, where single matrices are repacked).
  std::map<const DeviceMatrix*, std::string> out_of_range;
  const auto scales_refused = [&](const DeviceMatrix* m) -> const std::string& {
    auto it = out_of_range.find(m);
    if (it == out_of_range.end()) it = out_of_range.emplace(m, kernels::gemm_ws_scales_out_of_range(view(*m), stream_)).first;
    return it->second;
  };
  std::set<const DeviceMatrix*> interleaved;
  for (const auto& [gate, up] : swiglu) {
    if (gate->ggml_type != up->ggml_type || gate->rows != up->rows || gate->cols != up->cols ||
        !kernels::gemm_ws_unsupported_reason(gate->ggml_type, gate->rows, gate->cols).empty() ||
        !scales_refused(gate).empty() || !scales_refused(up).empty())
      continue;  // each is then repacked (or not) on its own below
    DeviceBuffer b(static_cast<size_t>(kernels::gemm_ws_repacked_bytes(gate->ggml_type, gate->rows, gate->cols, true)));
    kernels::gemm_ws_repack_swiglu(view(*gate), view(*up), b.as(), stream_);
    packed_swiglu_.emplace(gate, b.as());
    packed_buffers_.push_back(std::move(b));
    interleaved.insert(gate);
    interleaved.insert(up);
    interleaved_.emplace(gate, std::pair{gate, up});
    interleaved_.emplace(up, std::pair{gate, up});
  }
  // Groups: the longest runs, in order, of one type and K that one gemm_ws_group launch takes.
  for (const auto& g : groups) {
    for (size_t i = 0; i < g.size();) {
      std::vector<const DeviceMatrix*> run{g[i]};
      std::vector<kernels::WsGroupPart> parts{{g[i]->rows, nullptr}};
      for (size_t j = i + 1; j < g.size() && run.size() < static_cast<size_t>(kernels::kWsMaxGroupParts); ++j) {
        if (g[j]->ggml_type != run.front()->ggml_type || g[j]->cols != run.front()->cols || !scales_refused(g[j]).empty())
          break;
        parts.push_back({g[j]->rows, nullptr});
        if (!kernels::gemm_ws_group_unsupported_reason(g[j]->ggml_type, parts, g[j]->cols).empty()) {
          parts.pop_back();
          break;
        }
        run.push_back(g[j]);
      }
      i += run.size();
      // A run of two or more passed gemm_ws_group_unsupported_reason above, part by part.
      const bool taken = std::any_of(run.begin(), run.end(), [&](const DeviceMatrix* m) { return interleaved.count(m) || packed_.count(m); });
      if (run.size() < 2 || taken || !scales_refused(run.front()).empty()) continue;  // repacked one by one below
      int64_t bytes = 0;
      for (const DeviceMatrix* m : run) bytes += kernels::gemm_ws_repacked_bytes(m->ggml_type, m->rows, m->cols);
      DeviceBuffer b(static_cast<size_t>(bytes));
      int64_t offset = 0;
      for (const DeviceMatrix* m : run) {
        void* at = static_cast<uint8_t*>(b.as()) + offset;
        kernels::gemm_ws_repack(view(*m), at, stream_);
        packed_.emplace(m, at);
        packed_group_.emplace(m, run);
        offset += kernels::gemm_ws_repacked_bytes(m->ggml_type, m->rows, m->cols);
      }
      packed_buffers_.push_back(std::move(b));
    }
  }
  for (const DeviceMatrix* w : matrices) {
    if (interleaved.count(w) || packed_.count(w)) continue;
    if (const std::string why = kernels::gemm_ws_unsupported_reason(w->ggml_type, w->rows, w->cols); !why.empty()) {
      note_fallback(w->name + ": no repack for the fused GEMM: " + why);
      continue;
    }
    if (const std::string& why = scales_refused(w); !why.empty()) {
      note_fallback(w->name + ": no repack for the fused GEMM: " + why);
      continue;
    }
    DeviceBuffer b(static_cast<size_t>(kernels::gemm_ws_repacked_bytes(w->ggml_type, w->rows, w->cols)));
    kernels::gemm_ws_repack(view(*w), b.as(), stream_);
    packed_.emplace(w, b.as());
    packed_buffers_.push_back(std::move(b));
  }
  CUDA_CHECK(cudaStreamSynchronize(stream_));
}

std::optional<kernels::WsMatrixView> GemmDispatch::decode_repack(const DeviceMatrix& w) const {
  if (!fast_ || variant_ != FastGemm::Fused) return std::nullopt;
  const auto it = packed_.find(&w);
  if (it == packed_.end()) return std::nullopt;
  const kernels::WsMatrixView v{it->second, w.ggml_type, w.rows, w.cols, false};
  if (!kernels::gemv_ws_unsupported_reason(v, 1).empty()) return std::nullopt;
  return v;
}

std::optional<kernels::WsMatrixView> GemmDispatch::decode_repack_swiglu(const DeviceMatrix& gate,
                                                                        const DeviceMatrix& up) const {
  if (!fast_ || variant_ != FastGemm::Fused) return std::nullopt;
  if (const auto m = interleaved_.find(&up); m == interleaved_.end() || m->second != std::pair{&gate, &up})
    return std::nullopt;
  const auto it = packed_swiglu_.find(&gate);
  if (it == packed_swiglu_.end()) return std::nullopt;
  // The interleaved matrix's own rows pass the plain check (gemv_ws_swiglu takes what gemv_ws takes).
  if (!kernels::gemv_ws_unsupported_reason({it->second, gate.ggml_type, 2 * gate.rows, gate.cols, false}, 1).empty())
    return std::nullopt;
  return kernels::WsMatrixView{it->second, gate.ggml_type, gate.rows, gate.cols, true};
}

bool GemmDispatch::reads_repack_only(const DeviceMatrix& w) const {
  if (decode_repack(w)) return true;
  // Gate or up of an interleaved pair: run_swiglu takes the pair at every T (gemm_ws_swiglu, and
  // gemv_ws_swiglu where the decode takes it).
  const auto m = interleaved_.find(&w);
  return m != interleaved_.end() && decode_repack_swiglu(*m->second.first, *m->second.second).has_value();
}

size_t GemmDispatch::repacked_bytes() const {
  size_t n = 0;
  for (const DeviceBuffer& b : packed_buffers_) n += b.bytes();
  return n;
}

GemmDispatch::~GemmDispatch() {
  if (handle_) cublasDestroy(handle_);
  for (int s = 0; s < 2; ++s) {
    if (ready_[s]) CUDA_CHECK_NOEXCEPT(cudaEventDestroy(ready_[s]));
    if (free_[s]) CUDA_CHECK_NOEXCEPT(cudaEventDestroy(free_[s]));
  }
  if (side_) CUDA_CHECK_NOEXCEPT(cudaStreamDestroy(side_));
}

void GemmDispatch::init(cudaStream_t stream, bool fast, FastGemm variant) {
  stream_ = stream;
  fast_ = fast;
  variant_ = variant;
  CUBLAS_CHECK(cublasCreate(&handle_));
  CUBLAS_CHECK(cublasSetStream(handle_, stream));
  cublas_workspace_ = DeviceBuffer(kCublasWorkspaceBytes);
  CUBLAS_CHECK(cublasSetWorkspace(handle_, cublas_workspace_.as(), kCublasWorkspaceBytes));
  // Deterministic and exact fp16 products with fp32 accumulation: no reduced-precision reductions.
  CUBLAS_CHECK(cublasSetMathMode(handle_, CUBLAS_DEFAULT_MATH));
  if (fast_ && variant_ == FastGemm::Pipelined) {
    CUDA_CHECK(cudaStreamCreateWithFlags(&side_, cudaStreamNonBlocking));
    for (int s = 0; s < 2; ++s) {
      CUDA_CHECK(cudaEventCreateWithFlags(&ready_[s], cudaEventDisableTiming));
      CUDA_CHECK(cudaEventCreateWithFlags(&free_[s], cudaEventDisableTiming));
      CUDA_CHECK(cudaEventRecord(free_[s], stream));  // both slots start free
    }
  }
}

void GemmDispatch::reserve_weight_scratch(int64_t elements) {
  // weight_f16_ serves the generic path and every fallback; the slots the pipelined variant.
  const size_t bytes = static_cast<size_t>(elements) * 2;
  if (weight_f16_.bytes() < bytes) weight_f16_ = DeviceBuffer(bytes);
  if (fast_ && variant_ == FastGemm::Pipelined)
    for (auto& slot : slot_)
      if (slot.bytes() < bytes) slot = DeviceBuffer(bytes);
}

void GemmDispatch::set_schedule(std::vector<const DeviceMatrix*> order) {
  schedule_ = std::move(order);
  schedule_index_.clear();
  for (size_t i = 0; i < schedule_.size(); ++i) schedule_index_.emplace(schedule_[i], i);
}

int GemmDispatch::prefetch(const DeviceMatrix& w, int busy_slot) {
  for (int s = 0; s < 2; ++s)
    if (slot_weight_[s] == &w) return s;
  const int s = busy_slot < 0 ? 0 : 1 - busy_slot;
  // The slot's previous reader (a GEMM on the main stream) must finish before we overwrite it.
  CUDA_CHECK(cudaStreamWaitEvent(side_, free_[s], 0));
  {
    NvtxRange r(w.name.substr(0, w.name.size() - (w.name.ends_with(".weight") ? 7 : 0)) + ".dequant", 0);
    kernels::dequant_to_f16(w.ggml_type, w.buffer.as(), slot_[s].as<uint16_t>(), w.rows, w.cols, side_);
  }
  CUDA_CHECK(cudaEventRecord(ready_[s], side_));
  slot_weight_[s] = &w;
  return s;
}

void GemmDispatch::run_pipelined(const std::string& range, const DeviceMatrix& w, const uint16_t* x16, int T,
                                 void* y, Epilogue e, bool prefetch_next) {
  const int s = prefetch(w, -1);  // normally a no-op: the previous GEMM decoded w already
  {
    NvtxRange r(range, 2ull * static_cast<uint64_t>(T) * w.rows * w.cols);
    CUDA_CHECK(cudaStreamWaitEvent(stream_, ready_[s], 0));
    cublas_gemm(slot_[s].as<uint16_t>(), w, x16, T, y, e);
    CUDA_CHECK(cudaEventRecord(free_[s], stream_));
  }
  // Decode the next weight of the schedule into the other slot while this GEMM runs (in a range
  // of its own, "<tensor>.dequant", so its time is not charged to this GEMM). Never from a decode
  // step: that would chain every decode GEMM onto dequant + cuBLAS (tg128 fell 153 → 80 tok/s).
  if (!prefetch_next) return;
  if (const auto it = schedule_index_.find(&w); it != schedule_index_.end())
    prefetch(*schedule_[(it->second + 1) % schedule_.size()], s);
}

int GemmDispatch::decode_warps() const { return generic_decode_order_ ? kernels::kGemvWsGenericOrder : 0; }

void GemmDispatch::note_fallback(const std::string& reason) {
  if (seen_.insert(reason).second) {
    fallbacks_.push_back(reason);
    std::cerr << "prefill: fast path falls back to generic: " << reason << "\n";
  }
}

void GemmDispatch::run_generic(const DeviceMatrix& w, const uint16_t* x16, int T, void* y, Epilogue e) {
  kernels::dequant_to_f16(w.ggml_type, view(w).data, weight_f16_.as<uint16_t>(), w.rows, w.cols, stream_);
  cublas_gemm(weight_f16_.as<uint16_t>(), w, x16, T, y, e);
}

void GemmDispatch::cublas_gemm(const uint16_t* w16, const DeviceMatrix& w, const uint16_t* x16, int T, void* y,
                               Epilogue e) {
  // cuBLASLt without split-K: every output summed in k order, as the fused kernels do
  // (kernels/cublas_gemm.h), so the fast path can be bitwise equal to this reference.
  sequential_.run(w16, x16, y, T, w.rows, w.cols, e == Epilogue::AccumulateF32, e == Epilogue::StoreF16, stream_);
}

void GemmDispatch::run(const std::string& range, const DeviceMatrix& w, const uint16_t* x16, int T, void* y,
                       Epilogue e) {
  if (fast_ && variant_ == FastGemm::Pipelined) {
    // Prefill GEMMs, and any small one whose weight the pipeline has already decoded (the
    // output head after a prefill): cuBLAS on the fp16 slot.
    const bool decoded = slot_weight_[0] == &w || slot_weight_[1] == &w;
    if (T > kernels::kGemvMaxT || decoded) return run_pipelined(range, w, x16, T, y, e, /*prefetch_next=*/T > kernels::kGemvMaxT);
  }
  NvtxRange r(range, 2ull * static_cast<uint64_t>(T) * w.rows * w.cols);
  if (fast_ && variant_ == FastGemm::Fused && T > kernels::kGemvMaxT) {
    if (const auto it = packed_.find(&w); it != packed_.end()) {
      kernels::gemm_ws({it->second, w.ggml_type, w.rows, w.cols, false}, x16, T, y, to_fast(e), stream_);
      return;
    }
    note_fallback(w.name + " (T=" + std::to_string(T) + "): not repacked for the fused GEMM");
    return run_generic(w, x16, T, y, e);
  }
  // What is left on the fast path is decode (T <= kGemvMaxT): gemv_ws on the repack, or gemv_fast
  // on the raw blocks.
  if (const auto ws = decode_repack(w)) {
    kernels::gemv_ws(*ws, x16, T, y, to_fast(e), stream_, decode_warps());
    return;
  }
  if (fast_) {
    const std::string why = kernels::gemv_fast_unsupported_reason(view(w), T);
    if (why.empty()) {
      kernels::gemv_fast(view(w), x16, T, y, to_fast(e), stream_);
      return;
    }
    note_fallback(w.name + " (T=" + std::to_string(T) + "): " + why);
  }
  run_generic(w, x16, T, y, e);
}

bool GemmDispatch::in_pipeline_slot(const DeviceMatrix& w) const {
  return variant_ == FastGemm::Pipelined && (slot_weight_[0] == &w || slot_weight_[1] == &w);
}

size_t GemmDispatch::packed_group_size(const std::vector<const DeviceMatrix*>& ws, size_t first) const {
  const auto it = packed_group_.find(ws[first]);
  if (it == packed_group_.end() || it->second.front() != ws[first]) return 0;
  const std::vector<const DeviceMatrix*>& members = it->second;
  if (first + members.size() > ws.size()) return 0;
  for (size_t i = 0; i < members.size(); ++i)
    if (ws[first + i] != members[i]) return 0;
  return members.size();
}

size_t GemmDispatch::fused_group_size(const std::vector<Output>& outputs, size_t first) const {
  if (!fast_ || variant_ != FastGemm::Fused) return 0;
  std::vector<const DeviceMatrix*> ws;
  for (const Output& o : outputs) ws.push_back(o.w);
  const size_t n = packed_group_size(ws, first);
  for (size_t i = 1; i < n; ++i)
    if (outputs[first + i].e != outputs[first].e) return 0;
  return n;
}

bool GemmDispatch::run_heads(const std::string& prefix, const std::vector<HeadOutput>& outputs,
                             const kernels::WsRopeTarget& rope, const uint16_t* x16, int T) {
  if (!fast_ || variant_ != FastGemm::Fused || T <= kernels::kGemvMaxT || outputs.empty()) return false;
  std::vector<const DeviceMatrix*> ws;
  for (const HeadOutput& o : outputs) ws.push_back(o.w);
  // Plan every launch before the first: all or nothing.
  struct Launch {
    size_t first;
    std::vector<kernels::WsHeadPart> parts;
  };
  std::vector<Launch> launches;
  for (size_t i = 0; i < outputs.size();) {
    if (!packed_.count(ws[i])) return false;
    const size_t n = std::max<size_t>(1, packed_group_size(ws, i));
    Launch l{i, {}};
    for (size_t j = i; j < i + n; ++j) l.parts.push_back({ws[j]->rows, outputs[j].y, outputs[j].rotate, outputs[j].kv_cache});
    if (!kernels::gemm_ws_group_rope_unsupported_reason(ws[i]->ggml_type, l.parts, ws[i]->cols, T, rope).empty())
      return false;
    launches.push_back(std::move(l));
    i += n;
  }
  for (const Launch& l : launches) {
    std::string roles;
    uint64_t flops = 0;
    int64_t rows = 0;
    for (size_t j = l.first; j < l.first + l.parts.size(); ++j) {
      const HeadOutput& o = outputs[j];
      roles += o.role + "+";
      // The GEMM's FLOPs and, where rotated, the rope range's count (6 per element).
      flops += 2ull * static_cast<uint64_t>(T) * o.w->rows * o.w->cols + (o.rotate ? 6ull * T * o.w->rows : 0);
      rows += o.w->rows;
    }
    const DeviceMatrix& w0 = *outputs[l.first].w;
    NvtxRange r(prefix + roles + "rope", flops);
    kernels::gemm_ws_group_rope({packed_.at(&w0), w0.ggml_type, rows, w0.cols, false}, l.parts, rope, x16, T, stream_);
  }
  return true;
}

bool GemmDispatch::run_heads_decode(const std::string& prefix, const std::vector<HeadOutput>& outputs,
                                    const kernels::GemvRopeTarget& rope, const uint16_t* x16, int T) {
  if (!fast_ || T != 1 || outputs.empty()) return false;
  // Groups as run_group forms them (in order: the first group of the output's type and K with
  // room); every one planned before the first launch: all or nothing.
  std::vector<std::vector<const HeadOutput*>> groups;
  for (const HeadOutput& o : outputs) {
    if (in_pipeline_slot(*o.w)) return false;
    const auto home = std::find_if(groups.begin(), groups.end(), [&](const std::vector<const HeadOutput*>& g) {
      const DeviceMatrix& w0 = *g.front()->w;
      return g.size() < static_cast<size_t>(kernels::kGemvMaxParts) && w0.ggml_type == o.w->ggml_type && w0.cols == o.w->cols;
    });
    if (home != groups.end()) home->push_back(&o);
    else groups.push_back({&o});
  }
  // Each group on the repack where every member is (kernels/gemv_ws.h), else on the GGUF blocks.
  std::vector<std::vector<kernels::GemvWsHeadOutput>> ws_parts(groups.size());
  std::vector<std::vector<kernels::GemvHeadOutput>> parts(groups.size());
  for (size_t i = 0; i < groups.size(); ++i) {
    for (const HeadOutput* o : groups[i])
      if (const auto ws = decode_repack(*o->w)) ws_parts[i].push_back({*ws, o->y, o->rotate, o->kv_cache});
    if (ws_parts[i].size() == groups[i].size()) {
      if (!kernels::gemv_ws_group_heads_unsupported_reason(ws_parts[i], T, rope, decode_warps()).empty()) return false;
      continue;
    }
    ws_parts[i].clear();
    for (const HeadOutput* o : groups[i]) parts[i].push_back({view(*o->w), o->y, o->rotate, o->kv_cache});
    if (!kernels::gemv_fast_group_heads_unsupported_reason(parts[i], T, rope).empty()) return false;
  }
  for (size_t i = 0; i < groups.size(); ++i) {
    std::string roles;
    uint64_t flops = 0;
    for (const HeadOutput* o : groups[i]) {
      roles += o->role + "+";
      flops += 2ull * static_cast<uint64_t>(T) * o->w->rows * o->w->cols + (o->rotate ? 6ull * T * o->w->rows : 0);
    }
    NvtxRange r(prefix + roles + "rope", flops);
    if (!ws_parts[i].empty()) kernels::gemv_ws_group_heads(ws_parts[i], rope, x16, T, stream_, decode_warps());
    else kernels::gemv_fast_group_heads(parts[i], rope, x16, T, stream_);
  }
  return true;
}

void GemmDispatch::run_fused_group(const std::string& prefix, const Output* outputs, size_t n, const uint16_t* x16,
                                   int T) {
  std::vector<kernels::WsGroupPart> parts;
  std::string roles;
  uint64_t flops = 0;
  int64_t rows = 0;
  for (size_t i = 0; i < n; ++i) {
    parts.push_back({outputs[i].w->rows, outputs[i].y});
    roles += (roles.empty() ? "" : "+") + outputs[i].role;
    flops += 2ull * static_cast<uint64_t>(T) * outputs[i].w->rows * outputs[i].w->cols;
    rows += outputs[i].w->rows;
  }
  const DeviceMatrix& w0 = *outputs[0].w;
  NvtxRange r(prefix + roles, flops);
  kernels::gemm_ws_group({packed_.at(&w0), w0.ggml_type, rows, w0.cols, false}, parts, x16, T, to_fast(outputs[0].e),
                         stream_);
}

void GemmDispatch::run_group(const std::string& prefix, const std::vector<Output>& outputs, const uint16_t* x16, int T) {
  if (fast_ && variant_ == FastGemm::Fused && T > kernels::kGemvMaxT) {
    for (size_t i = 0; i < outputs.size();) {
      if (const size_t n = fused_group_size(outputs, i); n > 1) {
        run_fused_group(prefix, &outputs[i], n, x16, T);
        i += n;
        continue;
      }
      run(prefix + outputs[i].role, *outputs[i].w, x16, T, outputs[i].y, outputs[i].e);
      ++i;
    }
    return;
  }
  // Partition in order: each output that a decode launch can take joins the first group of its
  // weights' type and K that has room; the rest (prefill, the generic path, a weight the pipelined
  // variant holds decoded) and groups of one go through run().
  const auto groupable = [&](const Output& o) { return fast_ && T <= kernels::kGemvMaxT && !in_pipeline_slot(*o.w); };
  std::vector<std::vector<const Output*>> groups;
  for (const Output& o : outputs) {
    const auto home = std::find_if(groups.begin(), groups.end(), [&](const std::vector<const Output*>& g) {
      const DeviceMatrix& w0 = *g.front()->w;
      return groupable(o) && groupable(*g.front()) && g.size() < static_cast<size_t>(kernels::kGemvMaxParts) &&
             w0.ggml_type == o.w->ggml_type && w0.cols == o.w->cols;
    });
    if (home != groups.end()) home->push_back(&o);
    else groups.push_back({&o});
  }
  for (const auto& g : groups) {
    std::string roles;
    uint64_t flops = 0;
    for (const Output* o : g) {
      roles += (roles.empty() ? "" : "+") + o->role;
      flops += 2ull * static_cast<uint64_t>(T) * o->w->rows * o->w->cols;
    }
    if (g.size() > 1 && decode_repack(*g.front()->w)) {  // on the repack (every member, or one by one below)
      std::vector<kernels::GemvWsOutput> parts;
      for (const Output* o : g)
        if (const auto ws = decode_repack(*o->w)) parts.push_back({*ws, o->y, to_fast(o->e)});
      if (parts.size() == g.size() && kernels::gemv_ws_group_unsupported_reason(parts, T, decode_warps()).empty()) {
        NvtxRange r(prefix + roles, flops);
        kernels::gemv_ws_group(parts, x16, T, stream_, decode_warps());
        continue;
      }
    } else if (g.size() > 1) {
      std::vector<kernels::GemvOutput> parts;
      for (const Output* o : g) parts.push_back({view(*o->w), o->y, to_fast(o->e)});
      if (kernels::gemv_fast_group_unsupported_reason(parts, T).empty()) {
        NvtxRange r(prefix + roles, flops);
        kernels::gemv_fast_group(parts, x16, T, stream_);
        continue;
      }
    }
    for (const Output* o : g) run(prefix + o->role, *o->w, x16, T, o->y, o->e);
  }
}

bool GemmDispatch::run_swiglu(const std::string& range, const DeviceMatrix& gate, const DeviceMatrix& up,
                              const uint16_t* x16, int T, uint16_t* a16) {
  if (!fast_) return false;
  const uint64_t flops = 4ull * static_cast<uint64_t>(T) * gate.rows * gate.cols;
  if (T <= kernels::kGemvMaxT) {  // decode: one launch on the interleaved repack, or where gemv_fast_swiglu takes the pair
    if (const auto ws = decode_repack_swiglu(gate, up)) {
      NvtxRange r(range, flops);
      kernels::gemv_ws_swiglu(*ws, x16, T, a16, stream_, decode_warps());
      return true;
    }
    if (in_pipeline_slot(gate) || in_pipeline_slot(up) ||
        !kernels::gemv_fast_swiglu_unsupported_reason(view(gate), view(up), T).empty())
      return false;
    NvtxRange r(range, flops);
    kernels::gemv_fast_swiglu(view(gate), view(up), x16, T, a16, stream_);
    return true;
  }
  if (variant_ != FastGemm::Fused) return false;
  const auto it = packed_swiglu_.find(&gate);
  if (it == packed_swiglu_.end()) return false;  // not interleaved: unfused
  NvtxRange r(range, flops);
  kernels::gemm_ws_swiglu({it->second, gate.ggml_type, gate.rows, gate.cols, true}, x16, T, a16, stream_);
  return true;
}

}  // namespace pfx::cuda

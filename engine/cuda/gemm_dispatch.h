// Y[T,N] = X16[T,K] · fp16(dequant(W[N,K]))ᵀ with fp32 accumulation, on either path, inside the
// NVTX range named after the weight tensor. Every variant computes the same arithmetic.
//   Generic: dequantize W to fp16 scratch, then cuBLAS(Lt) without split-K (kernels/cublas_gemm.h)
//     — one after the other.
//   Fast, prefill (T > kGemvMaxT), variant "pipelined": the same dequantize + cuBLAS,
//     but the next weight of the forward's fixed GEMM schedule is dequantized on a side stream
//     into the other of two scratch buffers while the current GEMM runs (events order the two:
//     ready[slot] before the GEMM reads it, free[slot] before the next dequant overwrites it).
//   Fast, prefill, variant "fused" (the default, kDefaultFastGemm): kernels/gemm_ws.h on weights
//     repacked once at load (prepare); gate and up of a layer go through one interleaved repack
//     and the SwiGLU epilogue.
// The variant is the caller's choice (FastGemm, cuda_backend.h).
//   Fast, decode (T ≤ kGemvMaxT): on a matrix the fused variant repacked and kernels/gemv_ws.h
//     takes (q4_K, q6_K), gemv_ws on the repack (the generic order at T ≥ 2, and at T = 1 too where
//     set_generic_decode_order asks: a prompt's first chunk); otherwise gemv_fast on
//     the raw blocks (its direct kernel for the K-quants). Matrices of one type read against the
//     same activations share a launch (run_group, run_heads_decode, run_swiglu).
// Calls outside a fast kernel's preconditions fall back to generic with a logged reason.
#pragma once
#include <cuda_runtime_api.h>

#include <cstdint>
#include <optional>
#include <set>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "cuda/cuda_backend.h"
#include "cuda/device_buffer.h"
#include "kernels/cublas_gemm.h"
#include "kernels/gemm_fast.h"
#include "kernels/gemm_ws.h"

struct cublasContext;

namespace pfx::cuda {

struct DeviceMatrix {
  std::string name;  // GGUF tensor name
  uint32_t ggml_type = 0;
  int64_t rows = 0, cols = 0;  // N rows of K elements
  DeviceBuffer buffer;         // raw GGUF blocks
};

enum class Epilogue { StoreF32, AccumulateF32, StoreF16 };

class GemmDispatch {
 public:
  GemmDispatch() = default;
  ~GemmDispatch();
  GemmDispatch(const GemmDispatch&) = delete;  // owns a cuBLAS handle
  GemmDispatch& operator=(const GemmDispatch&) = delete;

  void init(cudaStream_t stream, bool fast, FastGemm variant);
  void reserve_weight_scratch(int64_t elements);
  // The order in which the forward pass runs its GEMMs (wraps around): what "next weight" means
  // for the pipelined variant's prefetch.
  void set_schedule(std::vector<const DeviceMatrix*> order);
  // Fused variant: repacks every matrix of `matrices` that gemm_ws takes (and gate/up of each
  // `swiglu` pair into one interleaved matrix instead; the matrices of each `groups` entry that
  // share a type and K one after another in one buffer, for run_group); a no-op for the other
  // variants. Decode steps of the q4_K and q6_K matrices read the repack too (kernels/gemv_ws.h;
  // the other types' decode reads the GGUF blocks). The matrices must not move afterwards.
  void prepare(const std::vector<const DeviceMatrix*>& matrices,
               const std::vector<std::pair<const DeviceMatrix*, const DeviceMatrix*>>& swiglu,
               const std::vector<std::vector<const DeviceMatrix*>>& groups = {});
  // Device bytes of the repacked copies (0 unless fused).
  size_t repacked_bytes() const;
  // Whether every GEMM this dispatch runs on w reads its repacked form (the fused variant, w
  // repacked alone or interleaved, and a type the decode mat-vec on the repack takes): then the
  // GGUF blocks in w.buffer may leave the device (the caller's choice; a later call that would
  // read them fails, naming w).
  bool reads_repack_only(const DeviceMatrix& w) const;
  FastGemm fast_variant() const { return variant_; }
  // Decode launches on the repack (T <= kGemvMaxT) in the generic GEMM's summation order (one MMA
  // chain per tile: kernels::kGemvWsGenericOrder) at every T, instead of the split pick at T = 1:
  // the backend asks for it on a sequence's first chunk, a prompt whose logits the parity gate
  // compares with the generic path's, bit for bit. Off: decode steps, at the split's speed.
  void set_generic_decode_order(bool on) { generic_decode_order_ = on; }
  // `range` names the NVTX range (e.g. "blk.3.attn_q"); FLOPs = 2·T·N·K.
  void run(const std::string& range, const DeviceMatrix& w, const uint16_t* x16, int T, void* y, Epilogue e);
  // Several GEMMs over the same activations (the Q, K, V projections), each in its own NVTX range
  // prefix + role. Those that run as one launch (same bits as one by one) share one range named by
  // their roles joined with '+' ("blk.3.attn_q+attn_k+attn_v"): in a fast decode step (T = 1) the
  // weights of one K-quant type and K (kernels::gemv_fast_group); in a fused prefill the outputs
  // of one group prepare() repacked together, in its order, with one epilogue
  // (kernels::gemm_ws_group). Everything else goes through run().
  struct Output {
    std::string role;
    const DeviceMatrix* w;
    void* y;
    Epilogue e;
  };
  void run_group(const std::string& prefix, const std::vector<Output>& outputs, const uint16_t* x16, int T);
  // Fused prefill only: the Q, K, V projections written straight as the attention's inputs, RoPE
  // and the fp16 KV-cache store in the GEMMs' epilogue (kernels::gemm_ws_group_rope), one launch
  // per group that prepare() repacked together (else per matrix), each in a range named by its
  // roles and "rope" ("blk.3.attn_q+attn_k+attn_v+rope"). Same bits as run_group with StoreF32
  // followed by kernels::rope_store_qkv_fused. Returns false, having launched nothing, where it
  // does not apply (another path or variant, T <= kGemvMaxT, a matrix not repacked, a shape the
  // epilogue cannot store); the caller then runs that sequence.
  struct HeadOutput {
    std::string role;
    const DeviceMatrix* w;
    uint16_t* y;
    bool rotate, kv_cache;  // kernels::WsHeadPart
  };
  bool run_heads(const std::string& prefix, const std::vector<HeadOutput>& outputs, const kernels::WsRopeTarget& rope,
                 const uint16_t* x16, int T);
  // Fast path, decode step (T = 1): the same stores from the decode GEMV
  // (kernels::gemv_fast_group_heads), one launch per group of one weight type and K as run_group
  // forms them, in ranges named the same way; the position may come from device memory (a
  // graph-captured step). Same bits as run_group followed by kernels::rope_store_qkv_fused.
  // Returns false, having launched nothing, where any output cannot take it.
  bool run_heads_decode(const std::string& prefix, const std::vector<HeadOutput>& outputs,
                        const kernels::GemvRopeTarget& rope, const uint16_t* x16, int T);
  // a16 = fp16(silu(X·Wgᵀ) ⊙ (X·Wuᵀ)) in one kernel: fused variant, prefill, on the gate/up pair
  // that prepare() interleaved under `gate`; fast path, decode step (T = 1): gemv_fast_swiglu on
  // the raw blocks (same bits as gate, up and silu_mul one after the other). Returns false (nothing
  // launched) where neither applies; the caller then runs the unfused sequence.
  bool run_swiglu(const std::string& range, const DeviceMatrix& gate, const DeviceMatrix& up, const uint16_t* x16,
                  int T, uint16_t* a16);
  void note_fallback(const std::string& reason);
  const std::vector<std::string>& fallbacks() const { return fallbacks_; }
  cublasContext* cublas() const { return handle_; }

 private:
  void run_generic(const DeviceMatrix& w, const uint16_t* x16, int T, void* y, Epilogue e);
  // Pipelined variant: w sits decoded in a slot (run() then takes cuBLAS on it, not gemv_fast).
  bool in_pipeline_slot(const DeviceMatrix& w) const;
  void run_pipelined(const std::string& range, const DeviceMatrix& w, const uint16_t* x16, int T, void* y, Epilogue e,
                     bool prefetch_next);
  void cublas_gemm(const uint16_t* w16, const DeviceMatrix& w, const uint16_t* x16, int T, void* y, Epilogue e);
  // Enqueues dequant of w into the slot not holding `keep` (side stream); returns the slot.
  int prefetch(const DeviceMatrix& w, int busy_slot);

  // The warps the decode launches on the repack ask for (kernels/gemv_ws.h): 0, the pick, or the
  // generic order.
  int decode_warps() const;

  cudaStream_t stream_ = nullptr;
  bool fast_ = false;
  bool generic_decode_order_ = false;
  cublasContext* handle_ = nullptr;
  DeviceBuffer weight_f16_;  // generic path: the current weight, dequantized
  FastGemm variant_ = FastGemm::Pipelined;
  // Pipelined variant: two fp16 weight slots filled on side_ and read by cuBLAS on stream_.
  cudaStream_t side_ = nullptr;
  DeviceBuffer slot_[2];
  const DeviceMatrix* slot_weight_[2] = {nullptr, nullptr};
  cudaEvent_t ready_[2] = {nullptr, nullptr}, free_[2] = {nullptr, nullptr};
  std::vector<const DeviceMatrix*> schedule_;
  std::unordered_map<const DeviceMatrix*, size_t> schedule_index_;
  // Fused prefill: the outputs of `outputs` from `first` on that one gemm_ws_group launch takes
  // (the matrices' packed group, in order, one epilogue); 0 where none or one does.
  size_t fused_group_size(const std::vector<Output>& outputs, size_t first) const;
  // The matrices from `first` on that prepare() repacked as one group, in its order (0 where none).
  size_t packed_group_size(const std::vector<const DeviceMatrix*>& ws, size_t first) const;
  void run_fused_group(const std::string& prefix, const Output* outputs, size_t n, const uint16_t* x16, int T);

  // Fused variant: repacked weights, by source matrix (SwiGLU: by gate), in buffers owned by
  // packed_buffers_; a group's matrices one after another in one buffer (packed_group_: each
  // member → the group's members in order, the first at the buffer's start).
  std::vector<DeviceBuffer> packed_buffers_;
  std::unordered_map<const DeviceMatrix*, const void*> packed_, packed_swiglu_;
  std::unordered_map<const DeviceMatrix*, std::vector<const DeviceMatrix*>> packed_group_;
  // Gate and up of each packed_swiglu_ pair → the pair.
  std::unordered_map<const DeviceMatrix*, std::pair<const DeviceMatrix*, const DeviceMatrix*>> interleaved_;
  // The repacked view of w where the decode mat-vec on the repack takes w (T ≤ kGemvMaxT); nullopt
  // where decode steps read the GGUF blocks.
  std::optional<kernels::WsMatrixView> decode_repack(const DeviceMatrix& w) const;
  // The SwiGLU twin: the interleaved repack of (gate, up) where the decode mat-vec takes it.
  std::optional<kernels::WsMatrixView> decode_repack_swiglu(const DeviceMatrix& gate, const DeviceMatrix& up) const;
  DeviceBuffer cublas_workspace_;
  kernels::SequentialGemm sequential_;  // the GEMM of the generic path and the pipelined variant
  std::set<std::string> seen_;
  std::vector<std::string> fallbacks_;
};

}  // namespace pfx::cuda

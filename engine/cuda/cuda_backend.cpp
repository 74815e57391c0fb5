// CudaBackend: the forward pass (docs/gemm-fast.md for its GEMM variants) as one fixed launch
// sequence on one stream. Weights live on the GPU in their GGUF block form; norm vectors as fp32.
// Generic path: dequantize each weight to fp16 into a scratch buffer, then cuBLAS (fp32
// accumulate) and plain kernels. Fast path: the fused kernels under test; any call whose
// preconditions they do not meet falls back to the generic kernel with a logged reason.
// Fast-path decode steps (one token after a cached context) are captured once as a CUDA graph
// and replayed (DecodeGraph, StepGraph in step_graph.h): RoPE and decode attention then read the
// position from device memory, and everything else in a step is position-independent. A prompt's
// first chunk (position 0) sums its decode-sized mat-vecs in the generic order and takes flash
// attention, so its logits are the generic path's bits.
#include "cuda/cuda_backend.h"

#include <cublas_v2.h>
#include <cuda_runtime_api.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <iostream>
#include <set>

#include "cuda/device_buffer.h"
#include "cuda/gemm_dispatch.h"
#include "cuda/nvtx_range.h"
#include "cuda/step_graph.h"
#include "kernels/cuda_check.h"
#include "kernels/kernels.h"
#include "model/layer_vectors.h"
#include "quant/dequant.h"
#include "util/error.h"

namespace pfx::cuda {

namespace {

// Tokens per launch sequence: a longer prompt runs as several chunks (the KV cache holds all).
constexpr int64_t kMaxBatch = 2048;

DeviceMatrix upload_matrix(const model::TensorRef& t) {
  DeviceMatrix m;
  m.name = t.name;
  m.ggml_type = static_cast<uint32_t>(t.type);
  m.rows = t.rows;
  m.cols = t.cols;
  m.buffer = DeviceBuffer(static_cast<size_t>(t.info->n_bytes));
  CUDA_CHECK(cudaMemcpy(m.buffer.as(), t.data, m.buffer.bytes(), cudaMemcpyHostToDevice));
  return m;
}

// Norm weights (any type) → fp32 on the device.
DeviceBuffer upload_vector_f32(const model::TensorRef& t) {
  std::vector<float> host(static_cast<size_t>(t.rows * t.cols));
  quant::dequantize_row(t.type, t.data, host.data(), static_cast<int64_t>(host.size()));
  DeviceBuffer b(host.size() * sizeof(float));
  CUDA_CHECK(cudaMemcpy(b.as(), host.data(), b.bytes(), cudaMemcpyHostToDevice));
  return b;
}

// Every weight's type has a GPU decoder, or a clear error naming tensor and type — checked before
// the backend allocates any GPU memory.
void require_gpu_types(const model::Model& m) {
  auto check = [&](const model::TensorRef& t) {
    if (t.info && !kernels::dequant_supported(static_cast<uint32_t>(t.type)))
      fail(m.path().string(), ": tensor '", t.name, "' has type ", quant::type_name(t.type),
           ", which the CUDA backend cannot decode (supported: f32, f16, bf16, q4_0, q4_1, q5_0, q5_1, q8_0, q4_K, q5_K, "
           "q6_K)");
  };
  const auto& w = m.weights();
  for (const model::TensorRef* t : {&w.token_embd, &w.output_norm, &w.output}) check(*t);
  for (const auto& l : w.layers)
    for (const model::TensorRef* t : {&l.attn_norm, &l.wq, &l.wk, &l.wv, &l.wo, &l.ffn_norm, &l.w_gate, &l.w_up, &l.w_down})
      check(*t);
}

struct LayerDev {
  std::string prefix;  // "blk.N."
  DeviceBuffer attn_norm, ffn_norm;
  DeviceBuffer bq, bk, bv;  // Q/K/V biases (fp32), empty when the model has none
  DeviceMatrix wq, wk, wv, wo, gate, up, down;
  // The layer's matrices in the order run_layers() multiplies by them (the GEMM schedule).
  std::array<const DeviceMatrix*, 7> matrices() const { return {&wq, &wk, &wv, &wo, &gate, &up, &down}; }
  std::array<DeviceMatrix*, 7> matrices() { return {&wq, &wk, &wv, &wo, &gate, &up, &down}; }
};

}  // namespace

struct CudaBackend::Impl {
  const CudaBackend& owner;  // for its residual dump (Backend::set_residual_dump)
  const model::Model& model;
  const model::LlamaConfig cfg;
  const Path path;
  const int64_t max_ctx;
  const int64_t max_batch;
  const DecodeGraph decode_graph;
  int64_t pos = 0;
  double last_ms = 0;
  // DecodeGraph::On: the captured decode step, and whether capture was given up (the reason is in
  // fallbacks()). The first decode step runs kernel by kernel (decode_warmed): every kernel it
  // launches is then loaded and every cuBLASLt plan made before the capture, on the second.
  std::unique_ptr<StepGraph> step_graph;
  bool decode_warmed = false;
  bool step_graph_failed = false;
  int64_t replays = 0;

  cudaStream_t stream = nullptr;
  cudaEvent_t ev_start = nullptr, ev_stop = nullptr;
  GemmDispatch gemm;

  DeviceMatrix token_embd, output_own;
  const DeviceMatrix* output = nullptr;
  DeviceBuffer output_norm;
  DeviceBuffer rope_freqs;  // llama3 frequency factors [n_rot/2] fp32, empty when absent
  std::vector<LayerDev> layers;

  // KV cache: [layer][Hkv][max_ctx][hd] fp16, K and V.
  DeviceBuffer k_cache, v_cache;
  // Activations for up to max_batch tokens.
  DeviceBuffer ids, x32, h16, q32, k32, v32, q16, o16, g32, u32, a16, logits, attn_scratch;
  // The cos/sin of a chunk's rotation pairs ([max_batch][hd / 2] float pairs), once per chunk, for
  // the Q/K/V epilogues that store the attention's inputs (GemmDispatch::run_heads, run_heads_decode).
  DeviceBuffer rope_cos_sin;
  size_t attn_scratch_bytes = 0;

  Impl(const CudaBackend& o, const model::Model& m, Path p, int64_t ctx, FastGemm gemm_variant, DecodeGraph dg)
      : owner(o), model(m), cfg(m.config()), path(p), max_ctx(ctx), max_batch(std::min(ctx, kMaxBatch)),
        decode_graph(dg) {
    if (ctx < 1) fail("CudaBackend: max_ctx must be ≥ 1");
    if (cfg.sliding_window > 0 && ctx > cfg.sliding_window)
      fail("CudaBackend: a context of ", ctx, " tokens exceeds ", cfg.arch, ".attention.sliding_window = ",
           cfg.sliding_window, " of ", m.path().string(), "; sliding-window attention is not implemented (full "
           "attention equals it only up to the window)");
    require_gpu_types(m);
    CUDA_CHECK(cudaSetDevice(0));
    CUDA_CHECK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
    CUDA_CHECK(cudaEventCreate(&ev_start));
    CUDA_CHECK(cudaEventCreate(&ev_stop));
    gemm.init(stream, path == Path::Fast, gemm_variant);

    const auto& w = m.weights();
    token_embd = upload_matrix(w.token_embd);
    if (w.output_tied) {
      output = &token_embd;
    } else {
      output_own = upload_matrix(w.output);
      output = &output_own;
    }
    output_norm = upload_vector_f32(w.output_norm);
    if (w.rope_freqs.info) rope_freqs = upload_vector_f32(w.rope_freqs);
    int64_t widest = std::max(output->rows * output->cols, token_embd.rows * token_embd.cols);
    for (size_t l = 0; l < w.layers.size(); ++l) {
      const auto& lw = w.layers[l];
      LayerDev d;
      d.prefix = "blk." + std::to_string(l) + ".";
      model::convert_layer_vectors(lw, d, upload_vector_f32);
      d.wq = upload_matrix(lw.wq);
      d.wk = upload_matrix(lw.wk);
      d.wv = upload_matrix(lw.wv);
      d.wo = upload_matrix(lw.wo);
      d.gate = upload_matrix(lw.w_gate);
      d.up = upload_matrix(lw.w_up);
      d.down = upload_matrix(lw.w_down);
      for (const DeviceMatrix* mm : d.matrices())
        widest = std::max(widest, mm->rows * mm->cols);
      layers.push_back(std::move(d));
    }
    gemm.reserve_weight_scratch(widest);
    std::vector<const DeviceMatrix*> schedule;  // the order run_layers() + the head run GEMMs in
    for (const auto& d : layers)
      for (const DeviceMatrix* mm : d.matrices()) schedule.push_back(mm);
    schedule.push_back(output);
    std::vector<std::pair<const DeviceMatrix*, const DeviceMatrix*>> swiglu;
    for (const auto& d : layers) swiglu.emplace_back(&d.gate, &d.up);
    std::vector<std::vector<const DeviceMatrix*>> qkv;  // run_group's order in run_layers()
    for (const auto& d : layers) qkv.push_back({&d.wq, &d.wk, &d.wv});
    gemm.prepare(schedule, swiglu, qkv);
    gemm.set_schedule(std::move(schedule));
    // One copy of the weights on the device: a matrix whose every GEMM reads its repack (the fused
    // variant's prefill and the decode mat-vec on the repack) gives up its GGUF blocks. The token
    // embedding keeps them (embed_tokens reads them), and with it a head tied to it.
    for (auto& d : layers)
      for (DeviceMatrix* mm : d.matrices())
        if (gemm.reads_repack_only(*mm)) mm->buffer = DeviceBuffer();
    if (output == &output_own && gemm.reads_repack_only(output_own)) output_own.buffer = DeviceBuffer();

    const int64_t D = cfg.n_embd, hd = cfg.head_dim, H = cfg.n_head, Hkv = cfg.n_head_kv, F = cfg.n_ff;
    const size_t kv_elems = static_cast<size_t>(cfg.n_layer * Hkv * max_ctx * hd);
    k_cache = DeviceBuffer(kv_elems * 2);
    v_cache = DeviceBuffer(kv_elems * 2);
    const size_t B = static_cast<size_t>(max_batch);
    ids = DeviceBuffer(B * sizeof(int32_t));
    x32 = DeviceBuffer(B * D * 4);
    h16 = DeviceBuffer(B * D * 2);
    q32 = DeviceBuffer(B * H * hd * 4);
    k32 = DeviceBuffer(B * Hkv * hd * 4);
    v32 = DeviceBuffer(B * Hkv * hd * 4);
    q16 = DeviceBuffer(B * H * hd * 2);
    if (path == Path::Fast) rope_cos_sin = DeviceBuffer(B * hd * 4);  // heads stored by the GEMMs' epilogues
    o16 = DeviceBuffer(B * H * hd * 2);
    g32 = DeviceBuffer(B * F * 4);
    u32 = DeviceBuffer(B * F * 4);
    a16 = DeviceBuffer(B * F * 2);
    logits = DeviceBuffer(B * static_cast<size_t>(cfg.n_vocab) * 4);
    // Generic attention needs scores for the largest batch only at head dims without a tiled
    // kernel; the fast decode kernel (T ≤ kDecodeMaxT) needs its split partials; flash prefill
    // needs none.
    attn_scratch_bytes = std::max(
        kernels::attention_generic_scratch_bytes(static_cast<int>(max_batch), static_cast<int>(max_ctx),
                                                 static_cast<int>(H), static_cast<int>(hd)),
        kernels::attention_fast_scratch_bytes(static_cast<int>(std::min<int64_t>(max_batch, kernels::kDecodeMaxT)),
                                              static_cast<int>(H), static_cast<int>(hd)));
    attn_scratch = DeviceBuffer(attn_scratch_bytes);
    CUDA_CHECK(cudaStreamSynchronize(stream));
  }

  ~Impl() {
    if (ev_start) CUDA_CHECK_NOEXCEPT(cudaEventDestroy(ev_start));
    if (ev_stop) CUDA_CHECK_NOEXCEPT(cudaEventDestroy(ev_stop));
    if (stream) CUDA_CHECK_NOEXCEPT(cudaStreamDestroy(stream));
  }

  bool fast() const { return path == Path::Fast; }

  void rmsnorm(const float* x, const DeviceBuffer& w, uint16_t* out, int T) {
    const int D = static_cast<int>(cfg.n_embd);
    if (fast()) {
      if (const char* why = kernels::rmsnorm_fast_unsupported_reason(x, w.as<float>(), out, D); !why)
        return kernels::rmsnorm_f32_to_f16_fast(x, w.as<float>(), out, T, D, cfg.rms_eps, stream);
      else
        gemm.note_fallback(std::string("rmsnorm: ") + why);
    }
    kernels::rmsnorm_f32_to_f16(x, w.as<float>(), out, T, D, cfg.rms_eps, stream);
  }

  // While the owner's residual dump is on: the residual stream of this chunk (T rows of x32)
  // after layer `layer`, copied to the host and written out.
  void dump_residual(int64_t layer, int64_t p0, int T) {
    const int64_t D = cfg.n_embd;
    std::vector<float> host(static_cast<size_t>(T * D));
    CUDA_CHECK(cudaMemcpyAsync(host.data(), x32.as(), host.size() * sizeof(float), cudaMemcpyDeviceToHost, stream));
    CUDA_CHECK(cudaStreamSynchronize(stream));
    owner.dump_residual(layer, p0, host.data(), T, D);
  }

  bool has_qkv_bias() const {
    return std::any_of(layers.begin(), layers.end(), [](const LayerDev& L) { return L.bq.bytes() > 0; });
  }

  // Layer L's Q, K and V projections into q32/k32/v32 (plus their biases), then RoPE and the fp16
  // stores into q16 and the layer's caches (`out`).
  void project_qkv(LayerDev& L, const kernels::QkvOutput& out, const kernels::QkvShape& s, int T) {
    const int H = s.H, Hkv = s.Hkv, hd = s.hd;
    gemm.run_group(L.prefix,
                   {{"attn_q", &L.wq, q32.as(), Epilogue::StoreF32},
                    {"attn_k", &L.wk, k32.as(), Epilogue::StoreF32},
                    {"attn_v", &L.wv, v32.as(), Epilogue::StoreF32}},
                   h16.as<uint16_t>(), T);
    if (L.bq.bytes() > 0) {
      NvtxRange r(L.prefix + "attn_qkv_bias", uint64_t(T) * (H + 2 * Hkv) * hd);
      kernels::add_bias_f32(q32.as<float>(), int64_t(H) * hd, L.bq.as<float>(), T, int64_t(H) * hd, stream);
      kernels::add_bias_f32(k32.as<float>(), int64_t(Hkv) * hd, L.bk.as<float>(), T, int64_t(Hkv) * hd, stream);
      kernels::add_bias_f32(v32.as<float>(), int64_t(Hkv) * hd, L.bv.as<float>(), T, int64_t(Hkv) * hd, stream);
    }
    kernels::QkvInput in{q32.as<float>(), int64_t(H) * hd, k32.as<float>(), int64_t(Hkv) * hd,
                         v32.as<float>(), int64_t(Hkv) * hd};
    NvtxRange r(L.prefix + "rope", 6ull * T * (H + Hkv) * hd);
    if (fast()) {
      kernels::rope_store_qkv_fused(in, out, s, stream);
    } else {
      kernels::rope_f32(q32.as<float>(), in.ld_q, k32.as<float>(), in.ld_k, s, stream);
      kernels::store_qkv(in, out, s, stream);
    }
  }

  // One chunk of T ≤ max_batch tokens at positions pos .. pos+T-1; x32 holds their embeddings.
  // p0_dev (graph capture): RoPE and decode attention read the first position from this device
  // int instead of pos.
  void run_layers(int T, const int* p0_dev = nullptr) {
    const int D = static_cast<int>(cfg.n_embd), H = static_cast<int>(cfg.n_head),
              Hkv = static_cast<int>(cfg.n_head_kv), hd = static_cast<int>(cfg.head_dim),
              F = static_cast<int>(cfg.n_ff);
    const int p0 = static_cast<int>(pos);
    const size_t layer_kv = static_cast<size_t>(Hkv) * max_ctx * hd;
    const uint64_t norm_flops = 4ull * T * D;
    // Causal attention FLOPs: Q·Kᵀ and P·V over each query's context (p0 + t + 1 keys).
    const uint64_t ctx_sum = static_cast<uint64_t>(T) * p0 + static_cast<uint64_t>(T) * (T + 1) / 2;
    const uint64_t attn_flops = 4ull * H * hd * ctx_sum;
    kernels::QkvShape s{T, H, Hkv, hd, p0, static_cast<int>(max_ctx), cfg.rope_freq_base};
    s.n_rot = static_cast<int>(cfg.n_rot);
    s.neox = cfg.rope_style == model::RopeStyle::Neox;
    s.freq_scale = cfg.rope_freq_scale;
    s.freq_factors = rope_freqs.bytes() > 0 ? rope_freqs.as<float>() : nullptr;
    s.p0_dev = p0_dev;
    // The Q/K/V GEMMs store the attention's inputs themselves (RoPE in their epilogue) where the
    // fused variant runs them and the rotation is llama's over whole heads with no bias to add
    // first; the chunk's cos/sin are computed once for every layer, in the rope role's range.
    // So do the decode GEMVs of a step (T = 1, any fast variant; the position may come from the
    // device: a graph-captured step).
    const bool llama_rope = path == Path::Fast && !s.neox && (s.n_rot == 0 || s.n_rot == hd) && !has_qkv_bias();
    const bool heads_in_epilogue =
        llama_rope && gemm.fast_variant() == FastGemm::Fused && T > kernels::kGemvMaxT && p0_dev == nullptr;
    const bool heads_in_gemv = llama_rope && T == 1;
    if (heads_in_epilogue || heads_in_gemv) {
      NvtxRange r("rope", 0);
      kernels::rope_table(s, rope_cos_sin.as<float>(), stream);
    }

    for (size_t l = 0; l < layers.size(); ++l) {
      LayerDev& L = layers[l];
      {
        NvtxRange r(L.prefix + "attn_norm", norm_flops);
        rmsnorm(x32.as<float>(), L.attn_norm, h16.as<uint16_t>(), T);
      }
      kernels::QkvOutput out{q16.as<uint16_t>(), k_cache.as<uint16_t>() + l * layer_kv,
                             v_cache.as<uint16_t>() + l * layer_kv};
      const std::vector<GemmDispatch::HeadOutput> heads = {{"attn_q", &L.wq, out.q16, true, false},
                                                           {"attn_k", &L.wk, out.k_cache, true, true},
                                                           {"attn_v", &L.wv, out.v_cache, false, true}};
      const bool stored =
          (heads_in_epilogue && gemm.run_heads(L.prefix, heads, {rope_cos_sin.as<float>(), hd, p0, static_cast<int>(max_ctx)},
                                               h16.as<uint16_t>(), T)) ||
          (heads_in_gemv && gemm.run_heads_decode(L.prefix, heads,
                                                  {rope_cos_sin.as<float>(), hd, p0, p0_dev, static_cast<int>(max_ctx)},
                                                  h16.as<uint16_t>(), T));
      if (!stored) project_qkv(L, out, s, T);
      {
        NvtxRange r(L.prefix + "attn", attn_flops);
        kernels::AttentionArgs a{q16.as<uint16_t>(), out.k_cache, out.v_cache, o16.as<uint16_t>(),
                                 T, H, Hkv, hd, p0, static_cast<int>(max_ctx), p0_dev};
        const char* why = fast() ? kernels::attention_fast_unsupported_reason(a) : "generic path";
        if (fast() && !why) {
          kernels::attention_fast(a, attn_scratch.as(), attn_scratch_bytes, stream);
        } else {
          // Under capture a by-value position would be baked into every replay: fail the capture.
          if (p0_dev) fail("attention: ", why, "; the generic kernel takes the position by value");
          if (fast()) gemm.note_fallback(std::string("attention: ") + why);
          kernels::attention_generic(a, gemm.cublas(), attn_scratch.as(), attn_scratch_bytes, stream);
        }
      }
      gemm.run(L.prefix + "attn_output", L.wo, o16.as<uint16_t>(), T, x32.as(), Epilogue::AccumulateF32);
      {
        NvtxRange r(L.prefix + "ffn_norm", norm_flops);
        rmsnorm(x32.as<float>(), L.ffn_norm, h16.as<uint16_t>(), T);
      }
      if (!gemm.run_swiglu(L.prefix + "ffn_gate+ffn_up", L.gate, L.up, h16.as<uint16_t>(), T, a16.as<uint16_t>())) {
        gemm.run(L.prefix + "ffn_gate", L.gate, h16.as<uint16_t>(), T, g32.as(), Epilogue::StoreF32);
        gemm.run(L.prefix + "ffn_up", L.up, h16.as<uint16_t>(), T, u32.as(), Epilogue::StoreF32);
        NvtxRange r(L.prefix + "ffn_act", 5ull * T * F);
        kernels::silu_mul_f32_to_f16(g32.as<float>(), u32.as<float>(), a16.as<uint16_t>(), int64_t(T) * F, stream);
      }
      gemm.run(L.prefix + "ffn_down", L.down, a16.as<uint16_t>(), T, x32.as(), Epilogue::AccumulateF32);
      if (owner.dumping_residual()) dump_residual(static_cast<int64_t>(l), p0, T);
    }
  }

  // The logits of `rows` rows of x32 from row `first_row` on, into `logits` (fp32 [rows, V]).
  void run_head(int64_t first_row, int rows) {
    const int64_t D = cfg.n_embd;
    {
      NvtxRange r("output_norm", 4ull * rows * D);
      rmsnorm(x32.as<float>() + first_row * D, output_norm, h16.as<uint16_t>(), rows);
    }
    gemm.run("output", *output, h16.as<uint16_t>(), rows, logits.as(), Epilogue::StoreF32);
  }

  // Embeddings of the T token ids at ids_dev into x32.
  void embed(const int32_t* ids_dev, int T) {
    NvtxRange r("token_embd", 0);
    kernels::embed_tokens(token_embd.ggml_type, token_embd.buffer.as(), cfg.n_vocab, ids_dev, T,
                          static_cast<int>(cfg.n_embd), x32.as<float>(), stream);
  }

  // Why a one-token step cannot be one captured graph, or nullptr when it can. (Generic path and
  // DecodeGraph::Off are decided by the caller.)
  const char* step_graph_unsupported_reason() const {
    if (gemm.fast_variant() == FastGemm::Pipelined)
      return "the pipelined variant's decode GEMMs may read fp16 weights its side stream decoded before the step "
             "(state a replay would not see)";
    kernels::AttentionArgs a{q16.as<uint16_t>(), k_cache.as<uint16_t>(), v_cache.as<uint16_t>(), o16.as<uint16_t>(),
                             1, static_cast<int>(cfg.n_head), static_cast<int>(cfg.n_head_kv),
                             static_cast<int>(cfg.head_dim), 0, static_cast<int>(max_ctx)};
    if (kernels::attention_fast_unsupported_reason(a))
      return "decode attention falls back to the generic kernel, which takes the position by value";
    return nullptr;
  }

  // One decode step as a replay of the captured graph (captured here on the second decode step).
  // Returns false, having launched nothing, when the graph cannot be used yet (the first step) or
  // at all (the reason logged once).
  bool try_graph_step(int32_t token, std::vector<float>& result) {
    if (step_graph_failed) return false;
    if (!decode_warmed) {
      decode_warmed = true;
      return false;
    }
    if (!step_graph) {
      if (const char* why = step_graph_unsupported_reason()) {
        gemm.note_fallback(std::string("decode graph: ") + why);
        step_graph_failed = true;
        return false;
      }
      auto g = std::make_unique<StepGraph>(cfg.n_vocab);
      const std::string why = g->capture(stream, logits.as<float>(), [&] {
        gemm.set_generic_decode_order(false);  // a step after a cached context (graph_eligible)
        embed(g->device_token(), 1);
        run_layers(1, g->device_position());
        run_head(0, 1);
      });
      if (!why.empty()) {
        gemm.note_fallback("decode graph: capture failed (" + why + "); decode steps launch kernel by kernel");
        step_graph_failed = true;
        return false;
      }
      step_graph = std::move(g);
    }
    step_graph->input() = StepInput{token, static_cast<int32_t>(pos)};
    CUDA_CHECK(cudaEventRecord(ev_start, stream));
    {
      NvtxRange prefill_range("prefill", 0);
      step_graph->launch(stream);
    }
    CUDA_CHECK(cudaEventRecord(ev_stop, stream));
    CUDA_CHECK(cudaStreamSynchronize(stream));
    std::copy_n(step_graph->logits(), cfg.n_vocab, result.begin());
    ++pos;
    ++replays;
    return true;
  }

  // One-token steps after a cached context. (At position 0 a token is a prompt: forward gives it
  // the generic path's bits, which a graph step's split order would not.)
  bool graph_eligible(int64_t n) const {
    return n == 1 && pos > 0 && fast() && decode_graph == DecodeGraph::On && !owner.dumping_residual();
  }

  std::vector<float> forward(std::span<const int32_t> tokens, bool all_logits) {
    const int64_t n = static_cast<int64_t>(tokens.size());
    if (n == 0) fail("CudaBackend::forward: empty batch");
    if (pos + n > max_ctx)
      fail("CudaBackend::forward: ", pos, " + ", n, " tokens overrun the context of ", max_ctx);
    for (int64_t i = 0; i < n; ++i)
      if (tokens[i] < 0 || tokens[i] >= cfg.n_vocab)
        fail("CudaBackend::forward: token ", tokens[i], " at batch index ", i, " is outside the vocabulary (",
             cfg.n_vocab, ")");
    const int64_t V = cfg.n_vocab;
    std::vector<float> result(static_cast<size_t>((all_logits ? n : 1) * V));

    if (!graph_eligible(n) || !try_graph_step(tokens[0], result)) {
      CUDA_CHECK(cudaEventRecord(ev_start, stream));
      {
        NvtxRange prefill_range("prefill", 0);
        for (int64_t c0 = 0; c0 < n; c0 += max_batch) {
          const int T = static_cast<int>(std::min(max_batch, n - c0));
          const bool last_chunk = c0 + T == n;
          CUDA_CHECK(cudaMemcpyAsync(ids.as(), tokens.data() + c0, T * sizeof(int32_t), cudaMemcpyHostToDevice, stream));
          embed(ids.as<int32_t>(), T);
          // A prompt's first chunk sums its decode-sized GEMVs in the generic order (its logits are
          // compared with the generic path's bit for bit); later chunks and steps take the split.
          gemm.set_generic_decode_order(pos == 0);
          run_layers(T);
          pos += T;
          if (!all_logits && !last_chunk) continue;
          // Logits for every row of this chunk, or only its last row.
          const int rows = all_logits ? T : 1;
          run_head(all_logits ? 0 : T - 1, rows);
          float* dst = result.data() + (all_logits ? c0 * V : 0);
          CUDA_CHECK(cudaMemcpyAsync(dst, logits.as(), size_t(rows) * V * 4, cudaMemcpyDeviceToHost, stream));
        }
      }
      CUDA_CHECK(cudaEventRecord(ev_stop, stream));
      CUDA_CHECK(cudaStreamSynchronize(stream));
    }
    float ms = 0;
    CUDA_CHECK(cudaEventElapsedTime(&ms, ev_start, ev_stop));
    last_ms = ms;
    for (float v : result)
      if (!std::isfinite(v)) fail("CudaBackend::forward: non-finite logit (", v, ") on the ", path_name(path), " path");
    return result;
  }
};

CudaBackend::CudaBackend(const model::Model& model, Path path, int64_t max_ctx, FastGemm gemm,
                         DecodeGraph decode_graph)
    : impl_(std::make_unique<Impl>(*this, model, path, max_ctx, gemm, decode_graph)) {}
CudaBackend::~CudaBackend() = default;
std::string CudaBackend::name() const { return std::string("cuda-") + path_name(impl_->path); }
std::string CudaBackend::fast_gemm() const {
  return impl_->path == Path::Fast ? fast_gemm_name(impl_->gemm.fast_variant()) : "generic";
}
std::string CudaBackend::decode_graph() const {
  return impl_->path == Path::Fast ? decode_graph_name(impl_->decode_graph) : decode_graph_name(DecodeGraph::Off);
}
int64_t CudaBackend::graph_replays() const { return impl_->replays; }

int64_t CudaBackend::weight_matrix_bytes() const {
  size_t n = impl_->token_embd.buffer.bytes() + impl_->output_own.buffer.bytes() + impl_->gemm.repacked_bytes();
  for (const auto& d : impl_->layers)
    for (const DeviceMatrix* mm : d.matrices()) n += mm->buffer.bytes();
  return static_cast<int64_t>(n);
}
void CudaBackend::reset() { impl_->pos = 0; }
std::vector<float> CudaBackend::forward(std::span<const int32_t> tokens, bool all_logits) {
  return impl_->forward(tokens, all_logits);
}
int64_t CudaBackend::position() const { return impl_->pos; }
double CudaBackend::last_gpu_ms() const { return impl_->last_ms; }
const std::vector<std::string>& CudaBackend::fallbacks() const { return impl_->gemm.fallbacks(); }

}  // namespace pfx::cuda

// The CPU reference's operators, f32 in and out, each one loop nest that reads top to bottom.
// Activations are row-major [n_tokens, width]. Threaded ops split independent output elements
// across pfx::parallel_for, and every element is computed in one fixed order, so results are
// bitwise identical for any thread count and any split of a prompt into batches.
#pragma once
#include <cstdint>
#include <vector>

#include "cpu/weight_matrix.h"
#include "model/llama.h"

namespace pfx::cpu {

// Dot product of two f32 vectors: f32 products, 8 interleaved f32 partial sums, fixed order.
float dot(const float* a, const float* b, int64_t n);

// y[t, r] = sum_c W[r, c] * x[t, c] for t < n: x [n, W.cols()], y [n, W.rows()]. Threads split
// the rows of W, so a streamed (dequantize-on-use) row is decoded once for all n tokens.
void matmul(const WeightMatrix& w, const float* x, int64_t n, float* y, int threads);

// out[t] = x[t] / sqrt(mean(x[t]^2) + eps) * weight (mean of squares in f64, as ggml does).
void rms_norm(const float* x, const float* weight, int64_t n, int64_t dim, float eps, float* out);

// RoPE over the first 2·inv_freq.size() elements of each head of x [n, n_heads * head_dim]: pair i
// turns by theta = pos * inv_freq[i], pos = pos0 + t (angles in f64). Pair i is (x[2i], x[2i+1])
// for RopeStyle::Adjacent (ggml mode 0: llama) and (x[i], x[i + n_rot/2]) for Neox (mode 2: qwen2).
void rope(float* x, int64_t n, int64_t n_heads, int64_t head_dim, const std::vector<double>& inv_freq,
          model::RopeStyle style, int64_t pos0);

// x[t, c] += bias[c] for t < n, c < width (the Q/K/V biases).
void add_bias(float* x, const float* bias, int64_t n, int64_t width);

// out = silu(gate) * up elementwise, silu(g) = g / (1 + exp(-g)).
void swiglu(const float* gate, const float* up, int64_t count, float* out);

// Causal grouped-query attention for n new tokens at positions pos0 .. pos0+n-1.
// q [n, n_head*head_dim] (after RoPE); k_cache, v_cache [>= pos0+n, n_head_kv*head_dim] hold
// every position up to pos0+n-1; query head h reads KV head h / (n_head / n_head_kv).
// out [n, n_head*head_dim]. Scores scaled by 1/sqrt(head_dim); softmax in f32 with its max
// subtracted and its sum in f64.
void attention(const float* q, const float* k_cache, const float* v_cache, int64_t n, int64_t pos0, int64_t n_head,
               int64_t n_head_kv, int64_t head_dim, float* out, int threads);

}  // namespace pfx::cpu

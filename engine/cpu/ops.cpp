// CPU reference operators (see ops.h).
#include "cpu/ops.h"

#include <algorithm>
#include <cmath>
#include <vector>

#include "util/parallel.h"

namespace pfx::cpu {

float dot(const float* a, const float* b, int64_t n) {
  float acc[8] = {0, 0, 0, 0, 0, 0, 0, 0};
  int64_t i = 0;
  for (; i + 8 <= n; i += 8)
    for (int k = 0; k < 8; ++k) acc[k] += a[i + k] * b[i + k];
  float tail = 0;
  for (; i < n; ++i) tail += a[i] * b[i];
  return ((acc[0] + acc[1]) + (acc[2] + acc[3])) + ((acc[4] + acc[5]) + (acc[6] + acc[7])) + tail;
}

void matmul(const WeightMatrix& w, const float* x, int64_t n, float* y, int threads) {
  const int64_t rows = w.rows(), cols = w.cols();
  parallel_for(
      rows,
      [&](int64_t begin, int64_t end) {
        std::vector<float> scratch(static_cast<size_t>(cols));
        for (int64_t r = begin; r < end; ++r) {
          const float* wr = w.row(r, scratch.data());
          for (int64_t t = 0; t < n; ++t) y[t * rows + r] = dot(wr, x + t * cols, cols);
        }
      },
      threads);
}

void rms_norm(const float* x, const float* weight, int64_t n, int64_t dim, float eps, float* out) {
  for (int64_t t = 0; t < n; ++t) {
    const float* xt = x + t * dim;
    double sum_sq = 0;
    for (int64_t i = 0; i < dim; ++i) sum_sq += static_cast<double>(xt[i]) * xt[i];
    const float scale = static_cast<float>(1.0 / std::sqrt(sum_sq / static_cast<double>(dim) + eps));
    for (int64_t i = 0; i < dim; ++i) out[t * dim + i] = xt[i] * scale * weight[i];
  }
}

void rope(float* x, int64_t n, int64_t n_heads, int64_t head_dim, const std::vector<double>& inv_freq,
          model::RopeStyle style, int64_t pos0) {
  const int64_t half = static_cast<int64_t>(inv_freq.size());
  for (int64_t t = 0; t < n; ++t) {
    const double pos = static_cast<double>(pos0 + t);
    for (int64_t i = 0; i < half; ++i) {
      const double theta = pos * inv_freq[static_cast<size_t>(i)];
      const float c = static_cast<float>(std::cos(theta)), s = static_cast<float>(std::sin(theta));
      const int64_t a = style == model::RopeStyle::Neox ? i : 2 * i, b = style == model::RopeStyle::Neox ? i + half : 2 * i + 1;
      for (int64_t h = 0; h < n_heads; ++h) {
        float* head = x + t * n_heads * head_dim + h * head_dim;
        const float x0 = head[a], x1 = head[b];
        head[a] = x0 * c - x1 * s;
        head[b] = x0 * s + x1 * c;
      }
    }
  }
}

void add_bias(float* x, const float* bias, int64_t n, int64_t width) {
  for (int64_t t = 0; t < n; ++t)
    for (int64_t c = 0; c < width; ++c) x[t * width + c] += bias[c];
}

void swiglu(const float* gate, const float* up, int64_t count, float* out) {
  for (int64_t i = 0; i < count; ++i) out[i] = gate[i] / (1.0f + std::exp(-gate[i])) * up[i];
}

void attention(const float* q, const float* k_cache, const float* v_cache, int64_t n, int64_t pos0, int64_t n_head,
               int64_t n_head_kv, int64_t head_dim, float* out, int threads) {
  const int64_t q_dim = n_head * head_dim, kv_dim = n_head_kv * head_dim, group = n_head / n_head_kv;
  const float scale = static_cast<float>(1.0 / std::sqrt(static_cast<double>(head_dim)));
  parallel_for(
      n * n_head,
      [&](int64_t begin, int64_t end) {
        std::vector<float> score(static_cast<size_t>(pos0 + n));
        std::vector<float> acc(static_cast<size_t>(head_dim));
        for (int64_t task = begin; task < end; ++task) {
          const int64_t t = task / n_head, h = task % n_head, kvh = h / group;
          const int64_t n_keys = pos0 + t + 1;  // causal: positions 0 .. pos0 + t
          const float* qh = q + t * q_dim + h * head_dim;
          float max_score = -INFINITY;
          for (int64_t j = 0; j < n_keys; ++j) {
            score[static_cast<size_t>(j)] = dot(qh, k_cache + j * kv_dim + kvh * head_dim, head_dim) * scale;
            max_score = std::max(max_score, score[static_cast<size_t>(j)]);
          }
          double sum = 0;
          for (int64_t j = 0; j < n_keys; ++j) {
            score[static_cast<size_t>(j)] = std::exp(score[static_cast<size_t>(j)] - max_score);
            sum += score[static_cast<size_t>(j)];
          }
          const float inv_sum = static_cast<float>(1.0 / sum);
          std::fill(acc.begin(), acc.end(), 0.0f);
          for (int64_t j = 0; j < n_keys; ++j) {
            const float p = score[static_cast<size_t>(j)] * inv_sum;
            const float* vj = v_cache + j * kv_dim + kvh * head_dim;
            for (int64_t d = 0; d < head_dim; ++d) acc[static_cast<size_t>(d)] += p * vj[d];
          }
          std::copy(acc.begin(), acc.end(), out + t * q_dim + h * head_dim);
        }
      },
      threads);
}

}  // namespace pfx::cpu

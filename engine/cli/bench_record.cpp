// The bench row's derived numbers and its column table (see bench_record.h). Columns llama-bench
// has but this engine has no knob for carry the value that describes what it does (no CPU mask,
// no polling, one GPU, weights memory-mapped), so a row stays honest and the column set stays
// llama-bench's.
#include "bench_record.h"

#include <cmath>
#include <cstdio>

namespace pfx::cli {

std::string BenchTest::name() const {
  if (n_prompt > 0 && n_gen == 0) return "pp" + std::to_string(n_prompt);
  if (n_gen > 0 && n_prompt == 0) return "tg" + std::to_string(n_gen);
  return "pp" + std::to_string(n_prompt) + "+tg" + std::to_string(n_gen);
}

std::vector<double> BenchTest::samples_ts() const {
  std::vector<double> ts;
  const double tokens = static_cast<double>(n_prompt + n_gen);
  for (uint64_t ns : samples_ns) ts.push_back(ns > 0 ? 1e9 * tokens / static_cast<double>(ns) : 0.0);
  return ts;
}

namespace {

template <typename T>
double mean_of(const std::vector<T>& v) {
  if (v.empty()) return 0.0;
  double s = 0;
  for (T x : v) s += static_cast<double>(x);
  return s / static_cast<double>(v.size());
}

template <typename T>
double stddev_of(const std::vector<T>& v) {
  if (v.size() < 2) return 0.0;
  const double m = mean_of(v);
  double ss = 0;
  for (T x : v) ss += (static_cast<double>(x) - m) * (static_cast<double>(x) - m);
  return std::sqrt(ss / static_cast<double>(v.size() - 1));
}

// Full precision (llama-bench prints 6 decimals; a reader loses nothing either way).
std::string decimal(double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.17g", v);
  return buf;
}

std::string integer(int64_t v) { return std::to_string(v); }

bool cuda(const BenchRun& r) { return r.backend == "cuda"; }

}  // namespace

double BenchTest::avg_ts() const { return mean_of(samples_ts()); }
double BenchTest::stddev_ts() const { return stddev_of(samples_ts()); }
uint64_t BenchTest::avg_ns() const { return static_cast<uint64_t>(std::llround(mean_of(samples_ns))); }
uint64_t BenchTest::stddev_ns() const { return static_cast<uint64_t>(std::llround(stddev_of(samples_ns))); }

const std::vector<BenchField>& bench_fields() {
  using R = const BenchRun&;
  using T = const BenchTest&;
  using F = FieldType;
  static const std::vector<BenchField> fields = {
      {"build_commit", F::String, [](R r, T) { return r.build_commit; }},
      {"build_number", F::Int, [](R r, T) { return integer(r.build_number); }},
      {"cpu_info", F::String, [](R r, T) { return r.cpu_info; }},
      {"gpu_info", F::String, [](R r, T) { return r.gpu_info; }},
      {"backends", F::String, [](R r, T) { return std::string(cuda(r) ? "CUDA" : "CPU"); }},
      {"model_filename", F::String, [](R r, T) { return r.model_filename; }},
      {"model_type", F::String, [](R r, T) { return r.model_type; }},
      {"model_size", F::Int, [](R r, T) { return integer(static_cast<int64_t>(r.model_size)); }},
      {"model_n_params", F::Int, [](R r, T) { return integer(static_cast<int64_t>(r.model_n_params)); }},
      // The whole prompt goes through one forward: batch = micro-batch = the prompt (1 for decode).
      {"n_batch", F::Int, [](R, T t) { return integer(std::max<int64_t>(t.n_prompt, 1)); }},
      {"n_ubatch", F::Int, [](R, T t) { return integer(std::max<int64_t>(t.n_prompt, 1)); }},
      {"n_threads", F::Int, [](R r, T) { return integer(r.n_threads); }},
      {"cpu_mask", F::String, [](R, T) { return std::string("0x0"); }},
      {"cpu_strict", F::Bool, [](R, T) { return std::string("0"); }},
      {"poll", F::Int, [](R, T) { return std::string("0"); }},
      {"type_k", F::String, [](R r, T) { return r.kv_type; }},
      {"type_v", F::String, [](R r, T) { return r.kv_type; }},
      // llama-bench's "all layers" is 99.
      {"n_gpu_layers", F::Int, [](R r, T) { return std::string(cuda(r) ? "99" : "0"); }},
      {"n_cpu_moe", F::Int, [](R, T) { return std::string("0"); }},
      {"split_mode", F::String, [](R, T) { return std::string("none"); }},
      {"main_gpu", F::Int, [](R, T) { return std::string("0"); }},
      {"no_kv_offload", F::Bool, [](R, T) { return std::string("0"); }},
      // 1: the fast path's flash-attention kernels.
      {"flash_attn", F::Int, [](R r, T) { return std::string(cuda(r) && r.path == "fast" ? "1" : "0"); }},
      {"devices", F::String, [](R, T) { return std::string("auto"); }},
      {"tensor_split", F::String, [](R, T) { return std::string("0.00"); }},
      {"tensor_buft_overrides", F::String, [](R, T) { return std::string("none"); }},
      {"load_mode", F::String, [](R, T) { return std::string("mmap"); }},
      {"embeddings", F::Bool, [](R, T) { return std::string("0"); }},
      {"no_op_offload", F::Int, [](R, T) { return std::string("0"); }},
      {"no_host", F::Bool, [](R, T) { return std::string("0"); }},
      {"fit_target", F::Int, [](R, T) { return std::string("0"); }},
      {"fit_min_ctx", F::Int, [](R, T) { return std::string("0"); }},
      {"n_prompt", F::Int, [](R, T t) { return integer(t.n_prompt); }},
      {"n_gen", F::Int, [](R, T t) { return integer(t.n_gen); }},
      {"n_depth", F::Int, [](R, T) { return std::string("0"); }},
      {"test_time", F::String, [](R, T t) { return t.test_time; }},
      {"avg_ns", F::Int, [](R, T t) { return integer(static_cast<int64_t>(t.avg_ns())); }},
      {"stddev_ns", F::Int, [](R, T t) { return integer(static_cast<int64_t>(t.stddev_ns())); }},
      {"avg_ts", F::Float, [](R, T t) { return decimal(t.avg_ts()); }},
      {"stddev_ts", F::Float, [](R, T t) { return decimal(t.stddev_ts()); }},
      // ours
      {"path", F::String, [](R r, T) { return r.path; }},
      {"gemm", F::String, [](R r, T) { return r.gemm; }},
      {"schema", F::String, [](R, T) { return std::string(kBenchSchema); }},
  };
  return fields;
}

}  // namespace pfx::cli

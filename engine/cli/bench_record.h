// What `prefill bench` measured, in llama-bench's vocabulary: one BenchTest per test (ppN or tgN)
// with every repetition's time, and the context shared by the run (build, hardware, model,
// backend). bench_fields() lists the columns every output format writes, in llama-bench's order
// (tools/llama-bench/llama-bench.cpp: test::get_fields) followed by ours (path, gemm, schema), each
// with llama-bench's type, so compare-llama-bench-style tools read our rows.
#pragma once
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace pfx::cli {

// The version of the row layout (a new field → a new version).
inline constexpr const char* kBenchSchema = "prefill-bench/2";

struct BenchTest {
  int64_t n_prompt = 0;                // ppN: one prefill of N tokens from an empty cache
  int64_t n_gen = 0;                   // tgN: N single-token steps from an empty cache
  std::string test_time;               // RFC 3339, when the test started
  std::vector<uint64_t> samples_ns;    // one per repetition (warm-up excluded)

  std::string name() const;            // "pp512", "tg128"
  std::vector<double> samples_ts() const;  // tokens/s per repetition: (n_prompt + n_gen) / time
  double avg_ts() const;
  double stddev_ts() const;            // sample standard deviation (n-1), 0 for one sample
  uint64_t avg_ns() const;
  uint64_t stddev_ns() const;
};

struct BenchRun {
  // build
  std::string build_commit;            // 8 hex digits, as llama-bench prints it
  std::string commit;                  // full SHA
  int build_number = 0;                // commits up to HEAD
  // hardware and backend
  std::string cpu_info, gpu_info;      // gpu_info empty on the CPU backend
  std::string backend;                 // "cuda" | "cpu"
  std::string path;                    // "fast" | "generic" | "reference" (cpu)
  std::string gemm;                    // the fast path's prefill GEMM variant, "generic", or "cpu"
  std::vector<std::string> fallbacks;  // where the fast path used a generic kernel
  std::string decode_graph;            // decode launch: "on" | "off" (generic path: "off"), "" on cpu
  int64_t decode_graph_replays = 0;    // decode steps that ran as a graph replay (warm-up included)
  int64_t weight_matrix_bytes = 0;     // cuda: device bytes of the weight matrices (CudaBackend::weight_matrix_bytes)
  int n_threads = 1;                   // CPU threads (the CUDA backend drives the GPU from one)
  std::string kv_type;                 // KV cache element type: "f16" (cuda) | "f32" (cpu)
  int sm_count = 0, sm_clock_mhz = 0, driver_version = 0, runtime_version = 0;  // cuda only
  // model
  std::string model_filename, model_type;  // model_type: "llama 6.74B Q4_K - Medium"
  uint64_t model_size = 0, model_n_params = 0;  // tensor bytes, parameters
  // method
  int repetitions = 0, warmup = 0;
  std::vector<BenchTest> tests;
};

enum class FieldType { String, Bool, Int, Float };

struct BenchField {
  const char* name;
  FieldType type;
  // The value as text (booleans "0"/"1", as llama-bench writes them).
  std::function<std::string(const BenchRun&, const BenchTest&)> value;
};
const std::vector<BenchField>& bench_fields();

}  // namespace pfx::cli

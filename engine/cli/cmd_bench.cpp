// prefill bench --model M [-p|--n-prompt 512,2048] [-n|--n-gen 128] [-r|--repetitions 5]
//               [--backend cuda|cpu] [--path fast|generic] [--gemm VARIANT] [--decode-graph on|off]
//               [-o md|json|jsonl|csv|sql | --json]
// llama-bench-like: prompt processing (ppN: one prefill of N tokens from an empty cache) and decode
// (tgN: N single-token steps from an empty cache), tokens/s per repetition after warm-up, timed by
// CUDA events around the launch sequence (cuda) or the wall clock (the CPU reference). Output
// formats and columns: bench_output.h.
#include <chrono>
#include <ctime>
#include <fstream>
#include <cctype>
#include <iostream>
#include <map>
#include <random>

#include "bench_output.h"
#include "bench_record.h"
#include "cli/version.h"
#include "cli_common.h"
#include "commands.h"
#include "quant/types.h"
#include "util/parallel.h"
#ifdef PFX_HAVE_CUDA
#include "cuda/cuda_backend.h"
#endif

namespace pfx::cli {

namespace {

std::string now_rfc3339() {
  char buf[32];
  const std::time_t t = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&t, &tm);
  std::strftime(buf, sizeof buf, "%FT%TZ", &tm);
  return buf;
}

std::string cpu_model_name() {
  std::ifstream in("/proc/cpuinfo");
  for (std::string line; std::getline(in, line);)
    if (line.rfind("model name", 0) == 0 && line.find(':') != std::string::npos) {
      std::string v = line.substr(line.find(':') + 1);
      while (!v.empty() && v.front() == ' ') v.erase(v.begin());
      return v;
    }
  return "unknown CPU";
}

// llama.cpp's names of general.file_type (llama_ftype), for the model_type column; without one,
// the tensor type holding the most bytes ("F32").
std::string file_type_name(const model::Model& m) {
  if (!m.file().has("general.file_type")) {
    std::map<std::string, int64_t> bytes;
    for (const auto& t : m.file().tensors()) bytes[std::string(quant::type_name(t.type))] += t.n_bytes;
    std::string most = "?";
    int64_t top = -1;
    for (const auto& [type, b] : bytes)
      if (b > top) top = b, most = type;
    for (auto& c : most) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
    return most;
  }
  const uint64_t t = m.file().get_uint("general.file_type");
  switch (t) {
    case 0: return "all F32";
    case 1: return "F16";
    case 2: return "Q4_0";
    case 3: return "Q4_1";
    case 7: return "Q8_0";
    case 8: return "Q5_0";
    case 9: return "Q5_1";
    case 10: return "Q2_K - Medium";
    case 11: return "Q3_K - Small";
    case 12: return "Q3_K - Medium";
    case 13: return "Q3_K - Large";
    case 14: return "Q4_K - Small";
    case 15: return "Q4_K - Medium";
    case 16: return "Q5_K - Small";
    case 17: return "Q5_K - Medium";
    case 18: return "Q6_K";
    case 32: return "BF16";
    default: return "ftype " + std::to_string(t);
  }
}

std::string size_label(uint64_t params) {
  char buf[32];
  if (params >= 1000000000ull) std::snprintf(buf, sizeof buf, "%.2fB", static_cast<double>(params) / 1e9);
  else if (params >= 1000000ull) std::snprintf(buf, sizeof buf, "%.1fM", static_cast<double>(params) / 1e6);
  else std::snprintf(buf, sizeof buf, "%.0fK", static_cast<double>(params) / 1e3);
  return buf;
}

// Times one repetition of a test from an empty cache, in nanoseconds: one forward of `prompt`
// (when not empty), then one single-token step per element of `decode`.
using RunOnce = std::function<uint64_t(const std::vector<int32_t>& prompt, const std::vector<int32_t>& decode)>;

}  // namespace

int cmd_bench(int argc, char** argv) {
  po::options_description opts("bench options");
  opts.add_options()("model,m", po::value<std::string>()->required(), "GGUF model file")
      ("n-prompt,p", po::value<std::string>()->default_value("512"), "prompt sizes, comma separated (ppN tests)")
      ("n-gen,n", po::value<std::string>(), "decode lengths, comma separated (tgN tests; none by default)")
      ("repetitions,r", po::value<int>()->default_value(5), "repetitions per test")
      ("warmup", po::value<int>()->default_value(1), "warm-up repetitions per test (discarded)")
      ("no-warmup", po::bool_switch(), "no warm-up (the same as --warmup 0)")
      ("backend", po::value<std::string>()->default_value("cuda"), "cuda | cpu (the f32 reference, wall-clock timed)")
      ("path", po::value<std::string>()->default_value("fast"), "cuda only: fast | generic")
      ("seed", po::value<uint32_t>()->default_value(1234), "seed for the random prompt tokens")
      ("output,o", po::value<std::string>(), "md (default) | json | jsonl | csv | sql: llama-bench's formats and columns")
      ("json", po::bool_switch(), "prefill's JSON object: results[] with test, mean_tps, stddev_tps, samples_tps, "
                                  "samples_ms and every llama-bench column (what the gates read)");
  add_gemm_option(opts);
  add_decode_graph_option(opts);
  const auto vm = parse("usage: prefill bench --model M [-p 512,2048] [-n 128] [-r 5] [--backend cuda|cpu] "
                        "[--path fast|generic] [--gemm VARIANT] [--decode-graph on|off] "
                        "[-o md|json|jsonl|csv|sql | --json]",
                        opts, argc, argv);
  if (!vm) return kOk;
  const auto& v = *vm;
  const BackendChoice choice = backend_choice(v);
  const int reps = v["repetitions"].as<int>();
  const int warmup = v["no-warmup"].as<bool>() ? 0 : v["warmup"].as<int>();
  if (reps < 1 || warmup < 0) throw UsageError("--repetitions must be ≥ 1 and --warmup ≥ 0");
  if (v.count("output") && v["json"].as<bool>()) throw UsageError("give --output or --json, not both");
  const BenchFormat format = v["json"].as<bool>() ? BenchFormat::PrefillJson
                                                  : parse_bench_format(v.count("output") ? v["output"].as<std::string>() : "md");
  constexpr int64_t kMaxTokens = int64_t{1} << 20;
  const auto prompts = parse_int_list(v["n-prompt"].as<std::string>(), "-p/--n-prompt", 1, kMaxTokens, "a prompt size");
  const auto gens = v.count("n-gen") ? parse_int_list(v["n-gen"].as<std::string>(), "-n/--n-gen", 1, kMaxTokens,
                                                      "a decode length")
                                     : std::vector<int64_t>{};
#ifndef PFX_HAVE_CUDA
  if (choice.backend == "cuda") throw Unavailable("bench --backend cuda: this build has no CUDA backend (configured without nvcc)");
#else
  if (choice.backend == "cuda" && !cuda::gpu_usable())
    throw Unavailable("bench --backend cuda: no usable CUDA GPU here (" + cuda::gpu_status() + ")");
#endif

  const auto model = model::Model::load(v["model"].as<std::string>());
  int64_t max_ctx = 1;
  for (auto p : prompts) max_ctx = std::max(max_ctx, p);
  for (auto g : gens) max_ctx = std::max(max_ctx, g);
  const std::unique_ptr<Backend> backend = make_backend(model, choice, max_ctx);

  BenchRun run;
  run.commit = PFX_GIT_COMMIT;
  run.build_commit = run.commit.substr(0, 8);
  run.build_number = PFX_GIT_COUNT;
  run.cpu_info = cpu_model_name();
  run.backend = choice.backend;
  run.path = choice.path;
  run.n_threads = choice.backend == "cpu" ? pfx::default_threads() : 1;
  run.kv_type = choice.backend == "cpu" ? "f32" : "f16";
  run.gemm = choice.backend == "cpu" ? "cpu" : "generic";
  run.model_filename = v["model"].as<std::string>();
  for (const auto& t : model.file().tensors()) {
    run.model_size += static_cast<uint64_t>(t.n_bytes);
    run.model_n_params += static_cast<uint64_t>(t.n_elements);
  }
  run.model_type = model.config().arch + " " + size_label(run.model_n_params) + " " + file_type_name(model);
  run.repetitions = reps;
  run.warmup = warmup;

  RunOnce once;
#ifdef PFX_HAVE_CUDA
  if (auto* gpu = dynamic_cast<cuda::CudaBackend*>(backend.get())) {
    const auto dev = cuda::device_info();
    run.gpu_info = dev.name;
    run.sm_count = dev.sm_count;
    run.sm_clock_mhz = dev.sm_clock_mhz;
    run.driver_version = dev.driver_version;
    run.runtime_version = dev.runtime_version;
    run.gemm = gpu->fast_gemm();
    run.decode_graph = gpu->decode_graph();
    once = [gpu](const std::vector<int32_t>& prompt, const std::vector<int32_t>& decode) {
      double ms = 0;
      if (!prompt.empty()) {
        gpu->forward(prompt, /*all_logits=*/false);
        ms = gpu->last_gpu_ms();
      }
      for (const int32_t& one : decode) {
        gpu->forward(std::span<const int32_t>(&one, 1), false);
        ms += gpu->last_gpu_ms();
      }
      return static_cast<uint64_t>(ms * 1e6);
    };
  }
#endif
  if (!once) {
    Backend* b = backend.get();
    once = [b](const std::vector<int32_t>& prompt, const std::vector<int32_t>& decode) {
      const auto t0 = std::chrono::steady_clock::now();
      if (!prompt.empty()) b->forward(prompt, false);
      for (const int32_t& one : decode) b->forward(std::span<const int32_t>(&one, 1), false);
      return static_cast<uint64_t>(std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now() - t0).count());
    };
  }

  std::mt19937 rng(v["seed"].as<uint32_t>());
  std::uniform_int_distribution<int32_t> token(0, static_cast<int32_t>(model.config().n_vocab - 1));
  auto run_test = [&](int64_t n_prompt, int64_t n_gen) {
    BenchTest t;
    t.n_prompt = n_prompt;
    t.n_gen = n_gen;
    t.test_time = now_rfc3339();
    for (int rep = -warmup; rep < reps; ++rep) {
      std::vector<int32_t> ids(static_cast<size_t>(n_prompt)), decode(static_cast<size_t>(n_gen));
      for (auto& id : ids) id = token(rng);
      for (auto& id : decode) id = token(rng);
      backend->reset();
      const uint64_t ns = once(ids, decode);
      if (rep >= 0) t.samples_ns.push_back(ns);
    }
    run.tests.push_back(t);
  };
  for (auto p : prompts) run_test(p, 0);
  for (auto g : gens) run_test(0, g);
#ifdef PFX_HAVE_CUDA
  if (auto* gpu = dynamic_cast<cuda::CudaBackend*>(backend.get())) {
    run.fallbacks = gpu->fallbacks();
    run.decode_graph_replays = gpu->graph_replays();
    run.weight_matrix_bytes = gpu->weight_matrix_bytes();
  }
#endif
  write_bench(std::cout, run, format);
  return kOk;
}

}  // namespace pfx::cli

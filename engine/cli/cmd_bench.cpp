// prefill bench --model M -p 512,2048 -n 128 -r 5 [--path fast|generic] [--gemm VARIANT] [--warmup 1] [--json]
// llama-bench-like: prompt processing (ppN: one prefill of N tokens from an empty cache) and decode
// (tgN: N single-token steps from an empty cache), tokens/s from CUDA events, mean ± stddev over
// repetitions after warm-up; every repetition is kept in the JSON.
#include <cmath>
#include <iomanip>
#include <iostream>
#include <numeric>
#include <random>
#include <sstream>
#include <nlohmann/json.hpp>

#include "cli_common.h"
#include "commands.h"
#ifdef PFX_HAVE_CUDA
#include "cuda/cuda_backend.h"
#endif

namespace pfx::cli {

#ifdef PFX_HAVE_CUDA
namespace {

std::vector<int64_t> parse_sizes(const std::string& csv, const char* flag) {
  std::vector<int64_t> out;
  for (int32_t v : parse_token_list(csv)) {
    if (v <= 0) throw UsageError(std::string(flag) + ": sizes must be positive");
    out.push_back(v);
  }
  return out;
}

struct Stats {
  double mean = 0, stddev = 0;
};
Stats stats(const std::vector<double>& v) {
  Stats s;
  if (v.empty()) return s;
  s.mean = std::accumulate(v.begin(), v.end(), 0.0) / static_cast<double>(v.size());
  double ss = 0;
  for (double x : v) ss += (x - s.mean) * (x - s.mean);
  s.stddev = v.size() > 1 ? std::sqrt(ss / static_cast<double>(v.size() - 1)) : 0.0;
  return s;
}

}  // namespace
#endif

int cmd_bench(int argc, char** argv) {
  po::options_description opts("bench options");
  opts.add_options()("model,m", po::value<std::string>()->required(), "GGUF model file")
      ("p,p", po::value<std::string>()->default_value("512"), "prompt sizes, comma separated (0 items: none)")
      ("n,n", po::value<std::string>(), "decode lengths, comma separated (e.g. 128)")
      ("r,r", po::value<int>()->default_value(5), "repetitions per test")
      ("warmup", po::value<int>()->default_value(1), "warm-up repetitions per test (discarded)")
      ("path", po::value<std::string>()->default_value("fast"), "fast | generic")
      ("seed", po::value<uint32_t>()->default_value(1234), "seed for the random prompt tokens")
      ("json", po::bool_switch(), "print JSON with every repetition");
  add_gemm_option(opts);
  const auto vm = parse("usage: prefill bench --model M -p 512,2048 -n 128 -r 5 [--path fast|generic] [--gemm VARIANT] [--json]",
                        opts, argc, argv);
  if (!vm) return kOk;
#ifndef PFX_HAVE_CUDA
  throw Unavailable("bench: this build has no CUDA backend (configured without nvcc)");
#else
  const std::string path = (*vm)["path"].as<std::string>();
  if (path != "fast" && path != "generic") throw UsageError("--path: expected fast or generic");
  const std::string gemm = gemm_choice(*vm, "cuda", path);
  const int reps = (*vm)["r"].as<int>(), warmup = (*vm)["warmup"].as<int>();
  if (reps < 1 || warmup < 0) throw UsageError("-r must be ≥ 1 and --warmup ≥ 0");
  const auto prompts = parse_sizes((*vm)["p"].as<std::string>(), "-p");
  const auto gens = (*vm).count("n") ? parse_sizes((*vm)["n"].as<std::string>(), "-n") : std::vector<int64_t>{};
  if (!cuda::gpu_usable()) throw Unavailable("bench: no usable CUDA GPU here (" + cuda::gpu_status() + ")");

  const auto model = model::Model::load((*vm)["model"].as<std::string>());
  int64_t max_ctx = 1;
  for (auto p : prompts) max_ctx = std::max(max_ctx, p);
  for (auto g : gens) max_ctx = std::max(max_ctx, g);
  cuda::CudaBackend backend(model, path == "fast" ? cuda::Path::Fast : cuda::Path::Generic, max_ctx,
                            gemm.empty() ? cuda::kDefaultFastGemm : *cuda::parse_fast_gemm(gemm));

  std::mt19937 rng((*vm)["seed"].as<uint32_t>());
  std::uniform_int_distribution<int32_t> token(0, static_cast<int32_t>(model.config().n_vocab - 1));
  nlohmann::json results = nlohmann::json::array();

  auto run_test = [&](const std::string& name, int64_t n_prompt, int64_t n_gen) {
    std::vector<double> ms_samples, tps_samples;
    for (int rep = -warmup; rep < reps; ++rep) {
      std::vector<int32_t> ids(static_cast<size_t>(std::max<int64_t>(n_prompt, 1)));
      for (auto& t : ids) t = token(rng);
      backend.reset();
      double ms = 0;
      if (n_prompt > 0) {
        backend.forward(ids, /*all_logits=*/false);
        ms = backend.last_gpu_ms();
      } else {
        for (int64_t i = 0; i < n_gen; ++i) {
          const int32_t one = token(rng);
          backend.forward(std::span<const int32_t>(&one, 1), false);
          ms += backend.last_gpu_ms();
        }
      }
      if (rep < 0) continue;
      ms_samples.push_back(ms);
      tps_samples.push_back(static_cast<double>(n_prompt > 0 ? n_prompt : n_gen) / (ms / 1000.0));
    }
    const Stats s = stats(tps_samples);
    results.push_back({{"test", name}, {"n_prompt", n_prompt}, {"n_gen", n_gen}, {"reps", reps},
                       {"warmup", warmup}, {"samples_tps", tps_samples}, {"samples_ms", ms_samples},
                       {"mean_tps", s.mean}, {"stddev_tps", s.stddev}});
  };
  for (auto p : prompts) run_test("pp" + std::to_string(p), p, 0);
  for (auto g : gens) run_test("tg" + std::to_string(g), 0, g);

  const auto dev = cuda::device_info();
  nlohmann::json j = {{"model", (*vm)["model"].as<std::string>()}, {"path", path}, {"gemm", backend.fast_gemm()},
                      {"fallbacks", backend.fallbacks()},
                      {"device", {{"name", dev.name}, {"sm_count", dev.sm_count}, {"sm_clock_mhz", dev.sm_clock_mhz},
                                  {"driver", dev.driver_version}, {"runtime", dev.runtime_version}}},
                      {"results", results}};
  if ((*vm)["json"].as<bool>()) {
    std::cout << j.dump(2) << "\n";
    return kOk;
  }
  std::cout << "| model | path | test | t/s |\n|---|---|---|---|\n";
  for (const auto& r : results) {
    std::ostringstream tps;
    tps << std::fixed << std::setprecision(2) << r["mean_tps"].get<double>() << " ± " << r["stddev_tps"].get<double>();
    std::cout << "| " << (*vm)["model"].as<std::string>() << " | " << path << " | " << r["test"].get<std::string>()
              << " | " << tps.str() << " |\n";
  }
  return kOk;
#endif
}

}  // namespace pfx::cli

#include "cli_common.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <sstream>

#include "cpu/cpu_backend.h"
#include "model/checks.h"
#include "tokenizer/tokenizer.h"
#include "util/error.h"
#include "util/escape.h"
#ifdef PFX_HAVE_CUDA
#include "cuda/cuda_backend.h"
#endif

namespace pfx::cli {

std::optional<po::variables_map> parse(const std::string& usage, const po::options_description& opts,
                                       int argc, char** argv, const po::positional_options_description* positional) {
  po::options_description all;
  all.add_options()("help,h", "show this help");
  all.add(opts);
  po::variables_map vm;
  try {
    auto parser = po::command_line_parser(argc, argv).options(all);
    if (positional) parser.positional(*positional);
    po::store(parser.run(), vm);
    if (vm.count("help")) {
      std::cout << usage << "\n\n" << all << "\n" << contract::kExitCodeTable;
      return std::nullopt;
    }
    po::notify(vm);
  } catch (const po::error& e) {
    throw UsageError(std::string(e.what()) + "\n" + usage);
  }
  return vm;
}

void add_prompt_options(po::options_description& opts) {
  opts.add_options()
      ("text", po::value<std::string>(), "prompt text (tokenized with the model's vocabulary)")
      ("tokens", po::value<std::string>(), "prompt token ids, comma separated (used as given)")
      ("no-bos", po::bool_switch(), "do not prepend BOS to --text");
}

std::vector<int64_t> parse_int_list(const std::string& csv, const std::string& flag, int64_t lo, int64_t hi,
                                    const std::string& expected) {
  std::vector<int64_t> out;
  std::stringstream ss(csv);
  std::string item;
  while (std::getline(ss, item, ',')) {
    if (item.empty()) continue;
    size_t used = 0;
    long long v = 0;
    try {
      v = std::stoll(item, &used);
    } catch (const std::exception&) {
      used = 0;
    }
    if (used != item.size() || v < lo || v > hi)
      throw UsageError(flag + ": " + quote_untrusted(item) + " is not " + expected + " (expected integers in [" +
                       std::to_string(lo) + ", " + std::to_string(hi) + "], comma separated)");
    out.push_back(v);
  }
  if (out.empty()) throw UsageError(flag + ": no values given");
  return out;
}

std::vector<int32_t> parse_token_list(const std::string& csv) {
  std::vector<int32_t> ids;
  for (const int64_t v : parse_int_list(csv, "--tokens", 0, INT32_MAX, "a token id")) ids.push_back(static_cast<int32_t>(v));
  return ids;
}

std::vector<int32_t> prompt_tokens(const po::variables_map& vm, const model::Model& model) {
  const bool has_text = vm.count("text"), has_tokens = vm.count("tokens");
  if (has_text == has_tokens) throw UsageError("give exactly one of --text or --tokens");
  std::vector<int32_t> ids;
  if (has_tokens) {
    ids = parse_token_list(vm["tokens"].as<std::string>());
  } else {
    ids = tok::make_tokenizer(model.file())->encode(vm["text"].as<std::string>(), !vm["no-bos"].as<bool>());
  }
  const int64_t n_vocab = model.config().n_vocab;
  for (size_t i = 0; i < ids.size(); ++i)
    if (ids[i] >= n_vocab)
      fail("token ", ids[i], " at prompt position ", i, " is out of range (vocabulary has ", n_vocab, " tokens)");
  if (ids.empty()) fail("the prompt has no tokens");
  return ids;
}

void add_backend_options(po::options_description& opts, const char* default_backend) {
  opts.add_options()
      ("backend", po::value<std::string>()->default_value(default_backend), "cpu | cuda")
      ("path", po::value<std::string>()->default_value("fast"),
       "cuda only: fast (the kernels under test) | generic (plain reference kernels + cuBLAS)");
  add_gemm_option(opts);
  add_decode_graph_option(opts);
}

namespace {
std::string joined(const std::vector<std::string>& v) {
  std::string s;
  for (const auto& x : v) s += (s.empty() ? "" : ", ") + x;
  return s;
}
}  // namespace

void add_gemm_option(po::options_description& opts) {
  const auto names = gemm_variants();
  opts.add_options()("gemm", po::value<std::string>(),
                     ("cuda fast path only: prefill GEMM variant (" + (names.empty() ? std::string("none in this build") : joined(names) + "; default " + names.front()) + ")").c_str());
}

std::string gemm_choice(const po::variables_map& vm, const std::string& backend, const std::string& path) {
  const bool given = vm.count("gemm") > 0;
  if (backend != "cuda" || path != "fast") {
    if (given)
      throw UsageError("--gemm selects the GEMM variant of --backend cuda --path fast; it does not apply to --backend " +
                       backend + (backend == "cuda" ? " --path " + path : ""));
    return "";
  }
  const auto names = gemm_variants();
  std::string v;
  if (given) {
    v = vm["gemm"].as<std::string>();
  } else if (const char* env = std::getenv("PFX_FAST_GEMM"); env && *env) {
    v = env;
    std::cerr << "prefill: PFX_FAST_GEMM is deprecated and will be removed; use --gemm " << v << "\n";
  } else {
    return names.empty() ? "" : names.front();
  }
  // A build without CUDA knows no variants: the backend reports itself unavailable (exit 3) instead.
  if (!names.empty() && std::find(names.begin(), names.end(), v) == names.end())
    throw UsageError((given ? "--gemm: '" : "PFX_FAST_GEMM: '") + v + "' is not a GEMM variant of this build (expected " + joined(names) + ")");
  return v;
}

void add_decode_graph_option(po::options_description& opts) {
  const auto names = decode_graph_values();
  opts.add_options()(
      "decode-graph", po::value<std::string>(),
      ("cuda fast path only: launch each decode step as one replayed CUDA graph (" +
       (names.empty() ? std::string("none in this build") : joined(names) + "; default " + names.front()) +
       "); the logits are the same bits either way")
          .c_str());
}

std::string decode_graph_choice(const po::variables_map& vm, const std::string& backend, const std::string& path) {
  const bool given = vm.count("decode-graph") > 0;
  if (backend != "cuda" || path != "fast") {
    if (given)
      throw UsageError("--decode-graph selects how --backend cuda --path fast launches decode steps; it does not "
                       "apply to --backend " + backend + (backend == "cuda" ? " --path " + path : ""));
    return "";
  }
  const auto names = decode_graph_values();
  if (!given) return names.empty() ? "" : names.front();
  const std::string v = vm["decode-graph"].as<std::string>();
  // A build without CUDA knows no values: the backend reports itself unavailable (exit 3) instead.
  if (!names.empty() && std::find(names.begin(), names.end(), v) == names.end())
    throw UsageError("--decode-graph: '" + v + "' is not a value of this build (expected " + joined(names) + ")");
  return v;
}

BackendChoice backend_choice(const po::variables_map& vm) {
  BackendChoice c{vm["backend"].as<std::string>(), vm["path"].as<std::string>(), "", ""};
  if (c.backend != "cpu" && c.backend != "cuda")
    throw UsageError("--backend: '" + c.backend + "' is not a backend (expected cpu or cuda)");
  if (c.path != "fast" && c.path != "generic")
    throw UsageError("--path: '" + c.path + "' is not a path (expected fast or generic)");
  c.gemm = gemm_choice(vm, c.backend, c.path);
  c.decode_graph = decode_graph_choice(vm, c.backend, c.path);
  if (c.backend == "cpu") c.path = "reference";
  return c;
}

std::unique_ptr<Backend> make_backend(const model::Model& model, const BackendChoice& choice, int64_t max_ctx) {
  model::check_context_length(model, max_ctx, "the prompt and the tokens to generate");
  if (choice.backend == "cpu") {
    warn_nonfinite_weights(model);
    return std::make_unique<cpu::CpuBackend>(model, max_ctx);
  }
#ifdef PFX_HAVE_CUDA
  if (!cuda::gpu_usable()) throw Unavailable("--backend cuda: no usable CUDA GPU here (" + cuda::gpu_status() + ")");
  const auto gemm = choice.gemm.empty() ? std::optional(cuda::kDefaultFastGemm) : cuda::parse_fast_gemm(choice.gemm);
  if (!gemm) throw UsageError("--gemm: '" + choice.gemm + "' is not a GEMM variant");
  const auto graph = choice.decode_graph.empty() ? std::optional(cuda::kDefaultDecodeGraph)
                                                 : cuda::parse_decode_graph(choice.decode_graph);
  if (!graph) throw UsageError("--decode-graph: '" + choice.decode_graph + "' is not a value (expected on or off)");
  warn_nonfinite_weights(model);  // once the backend will run: it reads every weight anyway
  return std::make_unique<cuda::CudaBackend>(model, choice.path == "fast" ? cuda::Path::Fast : cuda::Path::Generic,
                                             max_ctx, *gemm, *graph);
#else
  throw Unavailable("--backend cuda: this build has no CUDA backend (configured without nvcc)");
#endif
}

void warn_nonfinite_weights(const model::Model& model) {
  for (const std::string& w : model::nonfinite_weights(model)) std::cerr << "prefill: warning: " << w << "\n";
}

std::string fnv1a64_hex(const void* data, size_t bytes) {
  uint64_t h = 1469598103934665603ull;
  const auto* p = static_cast<const unsigned char*>(data);
  for (size_t i = 0; i < bytes; ++i) {
    h ^= p[i];
    h *= 1099511628211ull;
  }
  char buf[32];
  std::snprintf(buf, sizeof buf, "fnv1a64:%016llx", static_cast<unsigned long long>(h));
  return buf;
}

std::vector<std::string> gemm_variants() {
  std::vector<std::string> names;
#ifdef PFX_HAVE_CUDA
  names.push_back(cuda::fast_gemm_name(cuda::kDefaultFastGemm));
  for (cuda::FastGemm v : cuda::fast_gemm_variants())
    if (v != cuda::kDefaultFastGemm) names.push_back(cuda::fast_gemm_name(v));
#endif
  return names;
}

std::vector<std::string> decode_graph_values() {
  std::vector<std::string> names;
#ifdef PFX_HAVE_CUDA
  for (cuda::DecodeGraph v : cuda::decode_graph_values()) names.push_back(cuda::decode_graph_name(v));
#endif
  return names;
}

std::vector<std::string> compiled_backends() {
#ifdef PFX_HAVE_CUDA
  return {"cpu", "cuda"};
#else
  return {"cpu"};
#endif
}

}  // namespace pfx::cli

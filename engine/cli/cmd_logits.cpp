// prefill logits --model M (--text T | --tokens ...) --out F.npy [--backend cpu|cuda] [--path fast|generic] [--gemm VARIANT]
//                [--decode-graph on|off] [--dump-residual DIR]
// (--decode-graph matters only for a one-token prompt: the one forward is then a decode step.)
// Writes float32 [n_tokens, n_vocab] (logits at every prompt position) and prints a JSON summary.
// --dump-residual also writes the residual stream after every layer (Backend::set_residual_dump)
// into DIR, which must not exist yet or be empty: two runs' directories show where paths part.
#include <algorithm>
#include <cmath>
#include <filesystem>
#include <iostream>
#include <nlohmann/json.hpp>

#include "cli_common.h"
#include "commands.h"
#include "util/error.h"
#include "util/npy.h"

namespace pfx::cli {

int cmd_logits(int argc, char** argv) {
  po::options_description opts("logits options");
  opts.add_options()("model,m", po::value<std::string>()->required(), "GGUF model file")
      ("out,o", po::value<std::string>()->required(), ".npy output (float32 [tokens, vocab])")
      ("force", po::bool_switch(), "overwrite --out if it exists")
      ("dump-residual", po::value<std::string>(), "also write each layer's residual stream to DIR/blk.N.posP.npy");
  add_prompt_options(opts);
  add_backend_options(opts, "cpu");
  const auto vm = parse("usage: prefill logits --model M (--text T | --tokens 1,2,3) --out F.npy "
                        "[--backend cpu|cuda] [--path fast|generic] [--gemm VARIANT] [--decode-graph on|off] "
                        "[--dump-residual DIR]", opts, argc, argv);
  if (!vm) return kOk;
  const std::filesystem::path out = (*vm)["out"].as<std::string>();
  if (std::filesystem::exists(out) && !(*vm)["force"].as<bool>())
    throw UsageError(out.string() + " exists; refusing to overwrite it (pass --force)");
  std::filesystem::path dump_dir;
  if (vm->count("dump-residual")) {
    dump_dir = (*vm)["dump-residual"].as<std::string>();
    if (std::filesystem::exists(dump_dir) &&
        (!std::filesystem::is_directory(dump_dir) || !std::filesystem::is_empty(dump_dir)))
      throw UsageError("--dump-residual: " + dump_dir.string() + " exists and is not an empty directory");
  }
  const auto model = model::Model::load((*vm)["model"].as<std::string>());
  const auto ids = prompt_tokens(*vm, model);
  const auto choice = backend_choice(*vm);
  auto backend = make_backend(model, choice, static_cast<int64_t>(ids.size()));
  if (!dump_dir.empty()) {
    std::filesystem::create_directories(dump_dir);
    backend->set_residual_dump(dump_dir);
  }
  const auto logits = backend->forward(ids, /*all_logits=*/true);
  const int64_t n_vocab = model.config().n_vocab;
  write_npy(out, logits.data(), {static_cast<int64_t>(ids.size()), n_vocab});
  nlohmann::json j = {{"tokens", ids}, {"backend", choice.backend}, {"path", choice.path}, {"gemm", choice.gemm},
                      {"decode_graph", choice.decode_graph}, {"shape", {ids.size(), n_vocab}}, {"out", out.string()},
                      {"logits_hash", fnv1a64_hex(logits.data(), logits.size() * sizeof(float))}};
  if (!dump_dir.empty()) j["residual_dump"] = dump_dir.string();
  // NaN or infinite logits are never a result: the file stays for inspection, the exit says error.
  const auto bad = std::find_if(logits.begin(), logits.end(), [](float x) { return !std::isfinite(x); });
  const int64_t n_bad = std::count_if(bad, logits.end(), [](float x) { return !std::isfinite(x); });
  j["nonfinite_logits"] = n_bad;
  std::cout << j.dump() << "\n";
  if (n_bad > 0) {
    const int64_t first = bad - logits.begin();
    fail(n_bad, " of ", logits.size(), " logits are NaN or infinite (the first at token position ", first / n_vocab,
         ", vocab id ", first % n_vocab, ": ", *bad, "); written to ", out.string(), " for inspection");
  }
  return kOk;
}

}  // namespace pfx::cli

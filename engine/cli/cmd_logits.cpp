// prefill logits --model M (--text T | --tokens ...) --out F.npy [--backend cpu|cuda] [--path fast|generic]
// Writes float32 [n_tokens, n_vocab] (logits at every prompt position) and prints a JSON summary.
#include <filesystem>
#include <iostream>
#include <nlohmann/json.hpp>

#include "cli_common.h"
#include "commands.h"
#include "util/npy.h"

namespace pfx::cli {

int cmd_logits(int argc, char** argv) {
  po::options_description opts("logits options");
  opts.add_options()("model,m", po::value<std::string>()->required(), "GGUF model file")
      ("out,o", po::value<std::string>()->required(), ".npy output (float32 [tokens, vocab])")
      ("force", po::bool_switch(), "overwrite --out if it exists");
  add_prompt_options(opts);
  add_backend_options(opts, "cpu");
  const auto vm = parse("usage: prefill logits --model M (--text T | --tokens 1,2,3) --out F.npy "
                        "[--backend cpu|cuda] [--path fast|generic]", opts, argc, argv);
  if (!vm) return kOk;
  const std::filesystem::path out = (*vm)["out"].as<std::string>();
  if (std::filesystem::exists(out) && !(*vm)["force"].as<bool>())
    throw UsageError(out.string() + " exists; refusing to overwrite it (pass --force)");
  const auto model = model::Model::load((*vm)["model"].as<std::string>());
  const auto ids = prompt_tokens(*vm, model);
  const auto choice = backend_choice(*vm);
  auto backend = make_backend(model, choice, static_cast<int64_t>(ids.size()));
  const auto logits = backend->forward(ids, /*all_logits=*/true);
  const int64_t n_vocab = model.config().n_vocab;
  write_npy(out, logits.data(), {static_cast<int64_t>(ids.size()), n_vocab});
  nlohmann::json j = {{"tokens", ids}, {"backend", choice.backend}, {"path", choice.path},
                      {"shape", {ids.size(), n_vocab}}, {"out", out.string()},
                      {"logits_hash", fnv1a64_hex(logits.data(), logits.size() * sizeof(float))}};
  std::cout << j.dump() << "\n";
  return kOk;
}

}  // namespace pfx::cli

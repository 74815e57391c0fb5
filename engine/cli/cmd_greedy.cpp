// prefill greedy --model M (--text T | --tokens ...) -n N [--backend ...] [--path ...] [--gemm ...]
//                [--decode-graph on|off] [--json]
// Greedy continuation: generated text on stdout, or JSON with the ids and a hash of them.
#include <iostream>
#include <nlohmann/json.hpp>

#include "cli_common.h"
#include "commands.h"
#include "model/greedy.h"
#include "tokenizer/tokenizer.h"

namespace pfx::cli {

int cmd_greedy(int argc, char** argv) {
  po::options_description opts("greedy options");
  opts.add_options()("model,m", po::value<std::string>()->required(), "GGUF model file")
      ("n,n", po::value<int>()->default_value(32), "tokens to generate")
      ("json", po::bool_switch(), "print JSON (prompt ids, generated ids, text, hash)");
  add_prompt_options(opts);
  add_backend_options(opts, "cpu");
  const auto vm = parse("usage: prefill greedy --model M (--text T | --tokens 1,2,3) -n N "
                        "[--backend cpu|cuda] [--path fast|generic] [--gemm VARIANT] [--decode-graph on|off] [--json]",
                        opts, argc, argv);
  if (!vm) return kOk;
  const int n_new = (*vm)["n"].as<int>();
  if (n_new < 0 || n_new > 1 << 20) throw UsageError("-n: expected 0 .. 1048576 tokens");
  const auto model = model::Model::load((*vm)["model"].as<std::string>());
  const auto ids = prompt_tokens(*vm, model);
  const auto choice = backend_choice(*vm);
  auto backend = make_backend(model, choice, static_cast<int64_t>(ids.size()) + n_new);
  const auto result = greedy(*backend, ids, n_new);
  const auto tokenizer = tok::make_tokenizer(model.file());
  const std::string text = tokenizer->decode_continuation(result.generated);
  if (!(*vm)["json"].as<bool>()) {
    std::cout << text << "\n";
    return kOk;
  }
  nlohmann::json j = {{"prompt_ids", ids}, {"generated_ids", result.generated}, {"text", text},
                      {"backend", choice.backend}, {"path", choice.path}, {"gemm", choice.gemm}, {"decode_graph", choice.decode_graph},
                      {"ids_hash", fnv1a64_hex(result.generated.data(), result.generated.size() * sizeof(int32_t))}};
  // A token can end inside a UTF-8 sequence: replace invalid bytes rather than fail.
  std::cout << j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) << "\n";
  return kOk;
}

}  // namespace pfx::cli

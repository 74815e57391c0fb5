// prefill tokenize --model M --text T [--no-bos]: token ids, space separated, one line.
#include <iostream>

#include "cli_common.h"
#include "gguf/gguf.h"
#include "commands.h"
#include "tokenizer/tokenizer.h"

namespace pfx::cli {

int cmd_tokenize(int argc, char** argv) {
  po::options_description opts("tokenize options");
  opts.add_options()("model,m", po::value<std::string>()->required(), "GGUF model file (its vocabulary is used)")
      ("text", po::value<std::string>()->required(), "text to tokenize")
      ("no-bos", po::bool_switch(), "do not prepend BOS");
  const auto vm = parse("usage: prefill tokenize --model M --text T [--no-bos]", opts, argc, argv);
  if (!vm) return kOk;
  const auto file = gguf::File::open((*vm)["model"].as<std::string>());
  const auto tokenizer = tok::make_tokenizer(file);
  const auto ids = tokenizer->encode((*vm)["text"].as<std::string>(), !(*vm)["no-bos"].as<bool>());
  for (size_t i = 0; i < ids.size(); ++i) std::cout << (i ? " " : "") << ids[i];
  std::cout << "\n";
  return kOk;
}

}  // namespace pfx::cli

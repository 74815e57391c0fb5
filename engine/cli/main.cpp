// prefill: the engine's command line. Subcommands: info, tokenize, logits, greedy, synth, bench.
#include <iostream>
#include <string>

#include "cli/version.h"

int main(int argc, char** argv) {
  if (argc > 1 && std::string(argv[1]) == "--version") {
    std::cout << "prefill " << PFX_VERSION << " (" << PFX_GIT_COMMIT << ")\n";
    return 0;
  }
  std::cerr << "prefill: usage: prefill <info|tokenize|logits|greedy|synth|bench> --help\n";
  return 2;
}

// prefill: the engine's command line (contract in README.md, section "CLI").
//   prefill <info|tokenize|logits|greedy|synth|bench> [options]   ·   prefill --version [--json]
#include <cstring>
#include <iostream>
#include <string>

#include "cli_common.h"
#include "commands.h"
#include "util/error.h"
#include "util/escape.h"

namespace {

constexpr const char* kUsage =
    "usage: prefill <command> [options]   (prefill <command> --help for each)\n"
    "commands:\n"
    "  info      architecture, shapes, tensor types, vocabulary of a GGUF model\n"
    "  tokenize  token ids of a text\n"
    "  logits    logits at every prompt position, written as .npy\n"
    "  greedy    greedy continuation of a prompt\n"
    "  bench     prompt-processing and decode tokens/s, llama-bench style (CUDA, or the CPU reference)\n"
    "  synth     write a synthetic Llama GGUF from a model profile\n"
    "  --version [--json]  version, commit and capabilities\n";

int dispatch(int argc, char** argv) {
  using namespace pfx::cli;
  if (argc < 2) {
    std::cerr << kUsage << pfx::contract::kExitCodeTable;
    return kUsageError;
  }
  const std::string cmd = argv[1];
  if (cmd == "--version") {
    const bool json = argc > 2 && std::strcmp(argv[2], "--json") == 0;
    if (argc > (json ? 3 : 2)) throw UsageError(std::string("--version: unexpected argument '") + argv[json ? 3 : 2] + "' (only --json)");
    return cmd_version(json);
  }
  if (cmd == "--help" || cmd == "-h" || cmd == "help") {
    std::cout << kUsage << pfx::contract::kExitCodeTable;
    return kOk;
  }
  if (cmd == "info") return cmd_info(argc - 1, argv + 1);
  if (cmd == "tokenize") return cmd_tokenize(argc - 1, argv + 1);
  if (cmd == "logits") return cmd_logits(argc - 1, argv + 1);
  if (cmd == "greedy") return cmd_greedy(argc - 1, argv + 1);
  if (cmd == "synth") return cmd_synth(argc - 1, argv + 1);
  if (cmd == "bench") return cmd_bench(argc - 1, argv + 1);
  std::cerr << "prefill: unknown command " << pfx::quote_untrusted(cmd) << "\n" << kUsage;
  return kUsageError;
}

}  // namespace

int main(int argc, char** argv) {
  using namespace pfx::cli;
  try {
    return dispatch(argc, argv);
  } catch (const UsageError& e) {
    std::cerr << "prefill: usage error: " << pfx::escape_control(e.what()) << "\n";
    return kUsageError;
  } catch (const Unavailable& e) {
    std::cerr << "prefill: unavailable: " << pfx::escape_control(e.what()) << "\n";
    return kUnavailable;
  } catch (const pfx::Error& e) {
    std::cerr << "prefill: error: " << pfx::escape_control(e.what()) << "\n";
    return kRuntimeError;
  } catch (const std::exception& e) {
    std::cerr << "prefill: internal error: " << pfx::escape_control(e.what()) << "\n";
    return kRuntimeError;
  }
}

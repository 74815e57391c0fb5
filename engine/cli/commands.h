// One function per `prefill` subcommand; argv[0] is the subcommand name. Each returns an exit code.
#pragma once

namespace pfx::cli {
int cmd_info(int argc, char** argv);
int cmd_tokenize(int argc, char** argv);
int cmd_logits(int argc, char** argv);
int cmd_greedy(int argc, char** argv);
int cmd_synth(int argc, char** argv);
int cmd_bench(int argc, char** argv);
int cmd_version(bool json);
}  // namespace pfx::cli

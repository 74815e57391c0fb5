// Shared pieces of the `prefill` subcommands: exit codes, option parsing helpers, prompt input,
// backend selection, hashes. The contract with the gates: docs/prefill-cli.md and
// base/contract/prefill_cli.h.
#pragma once
#include <boost/program_options.hpp>
#include <cstdint>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "contract/exit_codes.h"
#include "contract/prefill_cli.h"
#include "model/backend.h"
#include "model/llama.h"

namespace pfx::cli {

namespace po = boost::program_options;

// Exit codes every subcommand uses: the project's one table (base/contract/exit_codes.h); the
// gates rely on 3 meaning "not available here".
enum ExitCode : int {
  kOk = contract::kExitOk,
  kRuntimeError = contract::kExitError,
  kUsageError = contract::kExitUsage,
  kUnavailable = contract::kExitUnavailable,
};

struct UsageError : std::runtime_error {
  using std::runtime_error::runtime_error;
};
// The requested backend or path cannot run on this machine or build (no GPU, no CUDA compiled in).
struct Unavailable : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// Parses argv after the subcommand name; prints help and returns nullopt when --help was given.
std::optional<po::variables_map> parse(const std::string& usage, const po::options_description& opts,
                                       int argc, char** argv,
                                       const po::positional_options_description* positional = nullptr);

// --text / --tokens / --no-bos, shared by logits and greedy.
void add_prompt_options(po::options_description& opts);
std::vector<int32_t> prompt_tokens(const po::variables_map& vm, const model::Model& model);

// --backend / --path / --gemm / --decode-graph, shared by logits and greedy (bench: --path, --gemm
// and --decode-graph).
void add_backend_options(po::options_description& opts, const char* default_backend);
// --gemm VARIANT: the fast path's prefill GEMM variant (capabilities.gemm_variants).
void add_gemm_option(po::options_description& opts);
// The --gemm value for this backend and path: a variant name for cuda/fast; "" elsewhere (a
// --gemm given explicitly there is a usage error). The deprecated PFX_FAST_GEMM stands in for an
// absent --gemm, with a warning.
std::string gemm_choice(const po::variables_map& vm, const std::string& backend, const std::string& path);
// --decode-graph on|off: how the fast path launches decode steps (capabilities.decode_graph).
void add_decode_graph_option(po::options_description& opts);
// The --decode-graph value for this backend and path: a value name for cuda/fast (the default
// when absent); "" elsewhere (given explicitly there, a usage error).
std::string decode_graph_choice(const po::variables_map& vm, const std::string& backend, const std::string& path);
struct BackendChoice {
  std::string backend;       // "cpu" | "cuda"
  std::string path;          // "fast" | "generic" (cuda only)
  std::string gemm;          // fast path's GEMM variant ("" off the fast path)
  std::string decode_graph;  // fast path's decode launch, "on" | "off" ("" off the fast path)
};
BackendChoice backend_choice(const po::variables_map& vm);
std::unique_ptr<Backend> make_backend(const model::Model& model, const BackendChoice& choice, int64_t max_ctx);

// "1,2,3" as integers in [lo, hi]; a UsageError names `flag` and the item ("-p: '-5' is not a
// prompt size ...") otherwise.
std::vector<int64_t> parse_int_list(const std::string& csv, const std::string& flag, int64_t lo, int64_t hi,
                                    const std::string& expected);
std::vector<int32_t> parse_token_list(const std::string& csv);  // --tokens
// Prints a warning on stderr for each weight tensor holding NaN or infinity (model/checks.h).
void warn_nonfinite_weights(const model::Model& model);
std::string fnv1a64_hex(const void* data, size_t bytes);

// Compiled-in capabilities, for `prefill --version --json`.
std::vector<std::string> compiled_backends();
// Every --gemm value this build accepts (empty without CUDA); the first is the default.
std::vector<std::string> gemm_variants();
// Every --decode-graph value this build accepts (empty without CUDA); the first is the default.
std::vector<std::string> decode_graph_values();

}  // namespace pfx::cli

// One engine build's `prefill` binary, called as a process per the CLI contract
// (docs/prefill-cli.md, base/contract/prefill_cli.h): logits, greedy, bench, synth, info. Every call is classified — ok,
// unavailable here (exit 3 → the gate SKIPs), failed, crashed, hung (timeout), bad output — and
// carries the exact command line so the report can say how to reproduce it.
#pragma once
#include <filesystem>
#include <functional>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "util/process.h"

namespace pfx::gates {

enum class RunOutcome { Ok, Unavailable, Failed, Crashed, TimedOut, BadOutput };
std::string to_string(RunOutcome o);

struct EngineCall {
  RunOutcome outcome = RunOutcome::Failed;
  std::string reason;          // "exit 1: <stderr tail>", "killed by signal 11 (SIGSEGV)", ...
  std::string command;         // shell-quoted, with the environment it needs
  nlohmann::json output;       // the JSON the subcommand printed (when it prints one)
  ProcessResult process;
  bool ok() const { return outcome == RunOutcome::Ok; }
};

// Prompt input: text (tokenized by the engine, BOS added unless no_bos) or explicit token ids.
struct PromptInput {
  std::string text;
  std::vector<int> tokens;
  bool no_bos = false;
};

// What a subcommand printed as its answer on stdout: the first line that parses as a JSON object
// (text may precede it), else the whole text as one pretty-printed object; nullopt when neither.
// EngineRunner::call reads its calls' output with it; the timing gate reads a traced bench's.
std::optional<nlohmann::json> printed_json_object(const std::string& stdout_text);

class EngineRunner {
 public:
  EngineRunner(std::filesystem::path prefill, std::map<std::string, std::string> env)
      : prefill_(std::move(prefill)), env_(std::move(env)) {}

  // dump_dir non-empty: also `--dump-residual dump_dir` (the residual stream after every layer;
  // ask capabilities.residual_dump first). gemm non-empty: also `--gemm gemm` (one of
  // capabilities.gemm_variants; the fast path's GEMM variant).
  EngineCall logits(const std::filesystem::path& model, const PromptInput& in, const std::string& backend,
                    const std::string& path, const std::filesystem::path& out_npy, double timeout_s,
                    const std::filesystem::path& dump_dir = {}, const std::string& gemm = {}) const;
  EngineCall greedy(const std::filesystem::path& model, const PromptInput& in, int n_tokens, const std::string& backend,
                    const std::string& path, double timeout_s) const;
  EngineCall bench(const std::filesystem::path& model, const std::vector<int>& prompt_lengths, int n_gen, int reps,
                   int warmup, const std::string& path, double timeout_s,
                   const std::function<void()>& on_tick = {}) const;
  // The command line bench() would run (EngineCall::command), without running anything.
  std::string bench_command(const std::filesystem::path& model, const std::vector<int>& prompt_lengths, int n_gen,
                            int reps, int warmup, const std::string& path) const;
  EngineCall synth(const std::filesystem::path& profile, const std::filesystem::path& out, long seed,
                   double timeout_s) const;
  // Any subcommand; `json_output` parses the first JSON object line of stdout.
  EngineCall call(std::vector<std::string> args, double timeout_s, bool json_output,
                  const std::function<void()>& on_tick = {}) const;

  const std::filesystem::path& prefill() const { return prefill_; }

 private:
  std::vector<std::string> argv_of(std::vector<std::string> args) const;  // the prefill binary, then args
  std::filesystem::path prefill_;
  std::map<std::string, std::string> env_;
};

}  // namespace pfx::gates

// `prefill` subprocess calls with outcome classification (see engine_runner.h).
#include "run/engine_runner.h"

#include "contract/prefill_cli.h"

#include <sstream>

namespace pfx::gates {

namespace fs = std::filesystem;

std::string to_string(RunOutcome o) {
  switch (o) {
    case RunOutcome::Ok: return "ok";
    case RunOutcome::Unavailable: return "unavailable";
    case RunOutcome::Failed: return "failed";
    case RunOutcome::Crashed: return "crashed";
    case RunOutcome::TimedOut: return "hung";
    case RunOutcome::BadOutput: return "bad output";
  }
  return "?";
}

namespace {
std::vector<std::string> prompt_args(const PromptInput& in) {
  std::vector<std::string> a;
  if (!in.tokens.empty()) {
    std::string t;
    for (size_t i = 0; i < in.tokens.size(); ++i) t += (i ? "," : "") + std::to_string(in.tokens[i]);
    a = {"--tokens", t};
  } else {
    a = {"--text", in.text};
  }
  if (in.no_bos) a.push_back("--no-bos");
  return a;
}
std::string join_ints(const std::vector<int>& v) {
  std::string s;
  for (size_t i = 0; i < v.size(); ++i) s += (i ? "," : "") + std::to_string(v[i]);
  return s;
}
}  // namespace

std::optional<nlohmann::json> printed_json_object(const std::string& out) {
  // The first line that parses as a JSON object is the answer (text may precede it).
  std::stringstream ss(out);
  for (std::string line; std::getline(ss, line);) {
    if (line.empty() || line[0] != '{') continue;
    try {
      auto j = nlohmann::json::parse(line);
      if (j.is_object()) return j;
    } catch (const std::exception&) {
    }
  }
  try {  // pretty-printed JSON over several lines
    auto j = nlohmann::json::parse(out);
    if (j.is_object()) return j;
  } catch (const std::exception&) {
  }
  return std::nullopt;
}

EngineCall EngineRunner::call(std::vector<std::string> args, double timeout_s, bool json_output,
                              const std::function<void()>& on_tick) const {
  EngineCall c;
  ProcessSpec spec;
  spec.argv = argv_of(std::move(args));
  spec.env = env_;
  spec.timeout_s = timeout_s;
  spec.on_tick = on_tick;
  c.command = shell_join(spec.argv, env_);
  c.process = run_process(spec);
  const auto& p = c.process;
  if (p.timed_out) {
    c.outcome = RunOutcome::TimedOut;
    c.reason = "hang: " + p.describe();
  } else if (p.signal) {
    c.outcome = RunOutcome::Crashed;
    c.reason = "crash: " + p.describe() + (p.tail(3).empty() ? "" : ": " + p.tail(3));
  } else if (p.exit_code == contract::kExitUnavailable) {
    c.outcome = RunOutcome::Unavailable;
    c.reason = "unavailable here (exit 3)" + (p.tail(2).empty() ? "" : ": " + p.tail(2));
  } else if (p.exit_code != 0) {
    c.outcome = RunOutcome::Failed;
    c.reason = p.describe() + (p.tail(4).empty() ? "" : ": " + p.tail(4));
  } else {
    c.outcome = RunOutcome::Ok;
    if (json_output) {
      if (auto j = printed_json_object(p.out)) {
        c.output = std::move(*j);
      } else {
        c.outcome = RunOutcome::BadOutput;
        c.reason = "printed no JSON object on stdout: '" + p.out.substr(0, 160) + "'";
      }
    }
  }
  return c;
}

EngineCall EngineRunner::logits(const fs::path& model, const PromptInput& in, const std::string& backend,
                                const std::string& path, const fs::path& out_npy, double timeout_s,
                                const fs::path& dump_dir, const std::string& gemm) const {
  std::vector<std::string> a = {"logits", "--model", model.string()};
  auto p = prompt_args(in);
  a.insert(a.end(), p.begin(), p.end());
  a.insert(a.end(), {"--out", out_npy.string(), "--backend", backend});
  if (!path.empty()) a.insert(a.end(), {"--path", path});
  if (!gemm.empty()) a.insert(a.end(), {"--gemm", gemm});
  if (!dump_dir.empty()) a.insert(a.end(), {"--dump-residual", dump_dir.string()});
  return call(a, timeout_s, true);
}

EngineCall EngineRunner::greedy(const fs::path& model, const PromptInput& in, int n_tokens, const std::string& backend,
                                const std::string& path, double timeout_s) const {
  std::vector<std::string> a = {"greedy", "--model", model.string()};
  auto p = prompt_args(in);
  a.insert(a.end(), p.begin(), p.end());
  a.insert(a.end(), {"-n", std::to_string(n_tokens), "--backend", backend});
  if (!path.empty()) a.insert(a.end(), {"--path", path});
  a.push_back("--json");
  return call(a, timeout_s, true);
}

namespace {
std::vector<std::string> bench_args(const fs::path& model, const std::vector<int>& prompt_lengths, int n_gen, int reps,
                                    int warmup, const std::string& path) {
  std::vector<std::string> a = {"bench", "--model", model.string(), "-p", join_ints(prompt_lengths),
                                "-r", std::to_string(reps), "--warmup", std::to_string(warmup), "--json"};
  if (n_gen > 0) a.insert(a.end(), {"-n", std::to_string(n_gen)});  // no decode test unless asked
  if (!path.empty()) a.insert(a.end(), {"--path", path});
  return a;
}
}  // namespace

EngineCall EngineRunner::bench(const fs::path& model, const std::vector<int>& prompt_lengths, int n_gen, int reps,
                               int warmup, const std::string& path, double timeout_s,
                               const std::function<void()>& on_tick) const {
  return call(bench_args(model, prompt_lengths, n_gen, reps, warmup, path), timeout_s, true, on_tick);
}

std::string EngineRunner::bench_command(const fs::path& model, const std::vector<int>& prompt_lengths, int n_gen,
                                        int reps, int warmup, const std::string& path) const {
  return shell_join(argv_of(bench_args(model, prompt_lengths, n_gen, reps, warmup, path)), env_);
}

std::vector<std::string> EngineRunner::argv_of(std::vector<std::string> args) const {
  args.insert(args.begin(), prefill_.string());
  return args;
}

EngineCall EngineRunner::synth(const fs::path& profile, const fs::path& out, long seed, double timeout_s) const {
  return call({"synth", "--profile", profile.string(), "--out", out.string(), "--seed", std::to_string(seed)},
              timeout_s, false);
}

}  // namespace pfx::gates

// `landing compare A.json B.json [--json] [--alpha P]`: options and output (bench_compare.h).
#include <iostream>

#include "core/status.h"
#include "landing/bench_compare.h"
#include "landing/commands.h"
#include "landing/landing_cli.h"

namespace pfx::gates {

int cmd_compare(int argc, char** argv) {
  const cli::CommandHelp help{
      "compare", "landing compare A.json B.json [--json] [--alpha P]",
      R"(Two bench results side by side, as llama.cpp's compare-llama-bench.py shows them (model, test,
t/s of A and B, speedup B/A), with a two-sided Mann-Whitney U test on the per-repetition t/s
saying whether each difference is significant. Reads `prefill bench --json`, `prefill bench
-o json|jsonl` and llama-bench's `-o json|jsonl`, so a build can be compared with llama.cpp.)"};
  double alpha = 0.05;
  bool json = false;
  const auto vm = cli::parse_command(help, argc, argv, true, [&](cli::po::options_description& opts) {
    opts.add_options()("json", cli::po::bool_switch(&json), "print JSON (schema landing-compare/1)")
        ("alpha", cli::po::value(&alpha)->default_value(alpha)->value_name("P"), "significance level");
  });
  if (!vm) return kExitPass;
  const auto files = cli::positional(*vm);
  if (files.size() != 2) throw cli::UsageError("two bench files expected (landing compare A.json B.json)");
  if (!(alpha > 0 && alpha < 1)) throw cli::UsageError("--alpha must be in (0, 1)");
  const BenchFile a = read_bench_file(files[0]), b = read_bench_file(files[1]);
  const auto rows = compare_benches(a, b, alpha);
  if (rows.empty()) throw std::runtime_error(files[0] + " and " + files[1] + " have no test in common");
  if (json) std::cout << compare_to_json(a, b, rows, alpha).dump(2) << "\n";
  else std::cout << render_compare_markdown(a, b, rows, alpha);
  return kExitPass;
}

}  // namespace pfx::gates

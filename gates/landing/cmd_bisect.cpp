// `landing bisect --good REV --bad REV --gate G [--metric GLOB]`: options, checks, summary (bisect.h).
#include <iostream>

#include "core/status.h"
#include "landing/bisect.h"
#include "landing/commands.h"
#include "landing/landing_cli.h"

namespace pfx::gates {

int cmd_bisect(int argc, char** argv) {
  const cli::CommandHelp help{
      "bisect", "landing bisect --good REV --bad REV --gate G [--metric GLOB] [--gates PROFILE] [--out DIR]",
      R"(Find the first commit between REVs where a gate turns bad: git bisect, each step landing the
commit against --good with gate G alone (builds cached by commit). FAIL marks a commit bad,
PASS good; SKIPPED, INCONCLUSIVE or a broken build skips it. Speed: --gate ab (whole prefill)
or timing (--metric '*role attn_v*' picks one role's check); correctness: parity, accuracy,
greedy. Both ends are checked first. Every step's gate result is kept in DIR/steps/; DIR/bisect.md
and bisect.json name the first bad commit with its gate result (DIR default
.landing/bisect/<good>-<bad>-<gate>-<time>). Exit 0 found, 1 the ends do not differ, 2 undecided
(only skipped commits left), 4 usage, 5 error.)"};
  BisectOptions b;
  const auto vm = cli::parse_command(help, argc, argv, false, [&b](cli::po::options_description& opts) {
    opts.add_options()("good", cli::po::value(&b.good)->value_name("REV")->required(), "a commit where the gate passes")
        ("bad", cli::po::value(&b.bad)->value_name("REV")->required(), "a later commit where it fails")
        ("gate", cli::po::value(&b.gate)->value_name("G")->required(), "the gate that decides (parity, accuracy, greedy, timing, ab, ...)")
        ("metric", cli::po::value(&b.metric)->value_name("GLOB"), "decide on the gate's checks whose names match GLOB")
        ("gates", cli::po::value(&b.run.gates_profile)->value_name("PROFILE")->default_value(b.run.gates_profile), "gate profile")
        ("out", cli::path_value(b.out), "bisect report folder (must be new or empty)");
    cli::add_repo_option(opts, b.run);
    cli::add_cache_options(opts, b.run);
    cli::add_quiet_option(opts, b.run);
  });
  if (!vm) return kExitPass;
  cli::check_gate_names({b.gate});
  const BisectOutcome o = landing_bisect(b);
  std::cout << "bisect: " << o.out.string() << "\n";
  if (!o.problem.empty()) {
    std::cout << "nothing to bisect: " << o.problem << "\n";
    return kExitFail;
  }
  if (o.first_bad.empty()) {
    std::cout << "undecided: the first bad commit is one of";
    for (const auto& c : o.could_be) std::cout << " " << c.substr(0, 12);
    std::cout << "\n";
    return kExitIncomplete;
  }
  for (const auto& s : o.steps)
    if (s.sha == o.first_bad)
      std::cout << "first bad commit: " << s.sha << " " << s.subject << "\n  " << b.gate << ": "
                << to_string(s.result.status) << " — " << s.result.reason << "\n";
  return kExitPass;
}

}  // namespace pfx::gates

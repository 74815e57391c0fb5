// landing: lands a change — builds baseline and candidate, runs the gates, writes the report.
//   landing run --baseline REV --candidate REV|WORKTREE [--gates profiles/gates/default.yaml] [--out reports/]
//   landing gate NAME … | import DIR | report ID | checklist [ID] | bisect … | compare A B | history | trace … | --version [--json]
// `landing --help` lists every command and the exit codes; `landing CMD --help` one command.
#include <cstring>
#include <iostream>
#include <string>
#include <vector>

#include "contract/exit_codes.h"
#include "core/profile_schema.h"
#include "landing/commands.h"
#include "landing/landing_cli.h"
#include "landing/gate_registry.h"
#ifdef PFX_HAVE_TRACE
#include "trace/trace_cli.h"
#endif
#include "util/error.h"
#include "util/escape.h"

using namespace pfx::gates;

namespace {

const char* kOverview = R"(landing: is the change still correct, is it faster, by how much, and where?

usage: landing COMMAND [options]        (landing COMMAND --help: that command's options)

commands:
  run        build baseline and candidate, run every gate of the gate profile, append a report
             to the ledger (reports/)
  gate       run named gates alone (also on build folders carried from another machine)
  import     add gate results made on another machine to the same candidate's report
  report     re-render a report (md, html, junit) from its landing.json
  checklist  the pre-merge checklist of a report
  bisect     find the first bad commit between two revisions with one gate (git bisect)
  compare    two bench results (prefill bench / llama-bench JSON) side by side, with significance
  history    every figure of the ledger per commit, with change points (--json, --bencher)
  trace      the CUPTI kernel tracer (`landing trace --help`)
  --version [--json]  version, commit and capabilities

)";

struct Command {
  const char* name;
  int (*run)(int argc, char** argv);
};

const Command kCommands[] = {
    {"run", cmd_run},       {"gate", cmd_gate},           {"import", cmd_import},
    {"report", cmd_report}, {"checklist", cmd_checklist}, {"compare", cmd_compare},
    {"bisect", cmd_bisect}, {"history", cmd_history},
};

int dispatch(int argc, char** argv) {
  namespace contract = pfx::contract;
  if (argc < 2) {
    std::cerr << kOverview << contract::kExitCodeTable;
    return contract::kExitUsage;
  }
  const std::string cmd = argv[1];
  register_legacy_output_readers();  // reports and imports written by an older landing read as they did
  if (cmd == "--help" || cmd == "-h" || cmd == "help") {
    std::cout << kOverview << contract::kExitCodeTable;
    return contract::kExitOk;
  }
  if (cmd == "--version") {
    const bool json = argc > 2 && std::strcmp(argv[2], "--json") == 0;
    if (argc > (json ? 3 : 2))
      throw cli::UsageError(std::string("--version: unexpected argument '") + argv[json ? 3 : 2] + "' (only --json)");
    return cli::print_version(json);
  }
  if (cmd == "trace") {
#ifndef PFX_HAVE_TRACE
    std::cerr << "landing trace: this landing was built without the tracer (gates/trace)\n";
    return contract::kExitUnavailable;
#else
    std::string name = "landing trace";
    std::vector<char*> args = {name.data()};
    for (int i = 2; i < argc; ++i) args.push_back(argv[i]);
    return pfx::trace::trace_main(static_cast<int>(args.size()), args.data());
#endif
  }
  for (const auto& c : kCommands)
    if (cmd == c.name) return c.run(argc - 1, argv + 1);
  throw cli::UsageError("unknown command '" + cmd + "' (see landing --help)");
}

}  // namespace

int main(int argc, char** argv) {
  const std::string who = argc > 1 && argv[1][0] != '-' ? std::string("landing ") + argv[1] : "landing";
  try {
    return dispatch(argc, argv);
  } catch (const cli::UsageError& e) {
    std::cerr << pfx::escape_control(who) << ": " << pfx::escape_control(e.what()) << "\n(see "
              << pfx::escape_control(who) << " --help)\n";
    return pfx::contract::kExitUsage;
  } catch (const ProfileError& e) {
    // An invalid gate profile is the user's to fix (core/profile_schema.h): usage, naming key and line.
    std::cerr << who << ": invalid gate profile: " << e.what() << "\n";
    return pfx::contract::kExitUsage;
  } catch (const std::exception& e) {
    std::cerr << pfx::escape_control(who) << ": error: " << pfx::escape_control(e.what()) << "\n";
    return pfx::contract::kExitError;
  }
}

// One function per `landing` subcommand; argv[0] is the subcommand name. Each parses only its own
// options (landing_cli.h), validates them before building anything, and returns an exit code
// (base/contract/exit_codes.h).
#pragma once

namespace pfx::gates {
int cmd_run(int argc, char** argv);
int cmd_gate(int argc, char** argv);
int cmd_import(int argc, char** argv);
int cmd_report(int argc, char** argv);
int cmd_checklist(int argc, char** argv);
int cmd_compare(int argc, char** argv);
int cmd_bisect(int argc, char** argv);
int cmd_history(int argc, char** argv);
}  // namespace pfx::gates

// The `trace` command line, shared by `landing trace ...` and the standalone `kerneltrace`:
//   trace [OPTIONS] -- PROGRAM [ARGS...]       run PROGRAM under the CUPTI tracer, write a trace
//   trace summarize TRACE.json [--json] ...    per kernel / range / role table
//   trace diff A.json B.json [--json] ...      what changed, sorted by |delta|
//   trace export TRACE.json --format perfetto|csv   Chrome trace-event JSON or CSV
//   trace recover JOURNAL [-o TRACE.json]      trace from a journal a crashed program left
//   trace --version [--json]
// `trace --help` lists every command; `trace COMMAND --help` that command's options.
#pragma once
#include "contract/exit_codes.h"

namespace pfx::trace {

// Exit codes of trace_main: the project's one table (base/contract/exit_codes.h).
enum TraceExit : int {
  kTraceOk = contract::kExitOk,
  kTraceProgramFailed = contract::kExitFail,  // the traced program exited non-zero or died (a trace may still exist)
  kTraceNoTrace = contract::kExitUnavailable,  // tracing ran but produced no trace, or the tracer is not available
  kTraceUsage = contract::kExitUsage,          // bad command line
  kTraceBadInput = contract::kExitError,       // a trace/journal is missing or malformed
};

// argv[0] is the name shown in usage ("landing trace", "kerneltrace"); argv[1..] are the
// arguments after it. Prints to stdout (results) and stderr (messages); never throws.
int trace_main(int argc, char** argv);

}  // namespace pfx::trace

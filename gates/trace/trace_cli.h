// The `trace` command line, shared by `landing trace ...` and the standalone `kerneltrace`:
//   trace [OPTIONS] -- PROGRAM [ARGS...]       run PROGRAM under the CUPTI tracer, write a trace
//   trace summarize TRACE.json [--json] ...    per kernel / range / role table
//   trace diff A.json B.json [--json] ...      what changed, sorted by |delta|
//   trace recover JOURNAL [-o TRACE.json]      trace from a journal a crashed program left
// `trace --help` lists every option.
#pragma once

namespace pfx::trace {

// Exit codes of trace_main.
enum TraceExit : int {
  kTraceOk = 0,
  kTraceProgramFailed = 1,  // the traced program exited non-zero or died (a trace may still exist)
  kTraceUsage = 2,          // bad command line
  kTraceBadInput = 3,       // a trace/journal is missing or malformed
  kTraceNoTrace = 4,        // tracing ran but produced no trace, or the tracer is not available
};

// argv[0] is the name shown in usage ("landing trace", "kerneltrace"); argv[1..] are the
// arguments after it. Prints to stdout (results) and stderr (messages); never throws.
int trace_main(int argc, char** argv);

}  // namespace pfx::trace

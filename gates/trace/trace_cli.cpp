// `trace` subcommands: run a program under the tracer, summarize, diff, export, recover (usage below).
#include "trace/trace_cli.h"

#include <charconv>
#include <iostream>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "trace/diff.h"
#include "trace/export.h"
#include "trace/launcher.h"
#include "trace/summary.h"
#include "trace/trace_json.h"
#include "trace/trace_options.h"
#include "util/atomic_file.h"
#include "util/error.h"
#include "util/escape.h"

namespace pfx::trace {
namespace {

struct UsageError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

std::string usage(const std::string& prog) {
  return "usage:\n"
         "  " + prog + " [OPTIONS] -- PROGRAM [ARGS...]\n"
         "      Run PROGRAM with the CUPTI tracer injected (CUDA_INJECTION64_PATH, NVTX_INJECTION64_PATH)\n"
         "      and write one JSON trace (schema kerneltrace/1). Works on any CUDA program, no rebuild.\n"
         "      -o, --output PATH   trace file (default kerneltrace.json; %p = the program's pid)\n"
         "      --kinds LIST        what to record: kernel,memcpy,memset,nvtx or all (default all)\n"
         "      --range NAME        keep only kernels launched under an NVTX range NAME (e.g. prefill)\n"
         "      --skip K            ... skipping NAME's first K occurrences (warm-up passes)\n"
         "      --buffer-mb N       CUPTI activity buffer size in MiB (default 8)\n"
         "      --flush-ms N        also flush every N ms, so a crash loses at most ~N ms of records (default 0: off)\n"
         "      --keep-journal      keep PATH.journal (the raw record stream) after the trace is written\n"
         "      --lib PATH          the injection library (default: $KERNELTRACE_LIB, beside this program, or the build's)\n"
         "      --quiet             no messages from the injected library\n"
         "  " + prog + " summarize TRACE.json [--json] [--top N] [--busy-range NAME]\n"
         "      GPU time per kernel, per NVTX range and per role (range name without blk.N.), share of GPU\n"
         "      time, TFLOP/s from range FLOP payloads, busy time (union of kernel intervals) in NAME\n"
         "      (default prefill).\n"
         "  " + prog + " diff A.json B.json [--json] [--top N] [--busy-range NAME]\n"
         "      Per kernel and per role: A ns, B ns, delta ns, delta %, added/removed; sorted by |delta|;\n"
         "      per NAME pass when both traces have NAME ranges.\n"
         "  " + prog + " export TRACE.json --format perfetto|csv [-o OUT]\n"
         "      perfetto: Chrome trace-event JSON (ui.perfetto.dev, chrome://tracing): a track per stream\n"
         "      with its kernels, the NVTX ranges as slices above them, host threads' ranges; csv: one row per\n"
         "      kernel (times in ns, launch shape, resources, NVTX path, role). Default OUT: stdout.\n"
         "  " + prog + " recover JOURNAL [-o TRACE.json]\n"
         "      Build a trace (complete=false) from the journal of a program that died before writing it.\n"
         "exit codes: 0 ok, 1 the traced program failed, 2 usage, 3 bad or missing trace, 4 no trace produced\n";
}

std::uint32_t parse_count(const std::string& flag, const std::string& text, std::uint32_t min, std::uint32_t max) {
  std::uint32_t value = 0;
  auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (text.empty() || ec != std::errc() || ptr != text.data() + text.size() || value < min || value > max) {
    throw UsageError(flag + " " + text + ": expected an integer in [" + std::to_string(min) + ", " +
                     std::to_string(max) + "]");
  }
  return value;
}

// Walks argv; value() takes the argument after a flag.
class Args {
 public:
  explicit Args(std::vector<std::string> args) : args_(std::move(args)) {}
  bool done() const { return i_ >= args_.size(); }
  const std::string& next() { return args_[i_++]; }
  std::string value(const std::string& flag) {
    if (done()) throw UsageError(flag + ": missing its value");
    return next();
  }
  std::vector<std::string> rest() {
    std::vector<std::string> out(args_.begin() + static_cast<std::ptrdiff_t>(i_), args_.end());
    i_ = args_.size();
    return out;
  }

 private:
  std::vector<std::string> args_;
  std::size_t i_ = 0;
};

// The command line of a report command (summarize, diff): the flags they share and the traces.
struct ReportArgs {
  bool json = false;
  std::size_t top = 0;
  SummaryOptions summary;
  std::vector<std::string> files;
};

ReportArgs parse_report_args(Args args, const std::string& command) {
  ReportArgs r;
  while (!args.done()) {
    const std::string a = args.next();
    if (a == "--json") r.json = true;
    else if (a == "--top") r.top = parse_count(a, args.value(a), 0, 1000000);
    else if (a == "--busy-range") r.summary.busy_range = args.value(a);
    else if (!a.empty() && a[0] == '-') throw UsageError(command + ": unknown option " + a);
    else r.files.push_back(a);
  }
  return r;
}

int cmd_summarize(Args args) {
  const ReportArgs report = parse_report_args(std::move(args), "summarize");
  const std::vector<std::string>& files = report.files;
  if (files.size() != 1) throw UsageError("summarize: expected one TRACE.json");
  Summary s = summarize(load_trace(files[0]), files[0], report.summary);
  if (report.json) std::cout << summary_to_json(s).dump(2) << "\n";
  else std::cout << format_summary_text(s, report.top);
  return kTraceOk;
}

int cmd_diff(Args args) {
  const ReportArgs report = parse_report_args(std::move(args), "diff");
  const std::vector<std::string>& files = report.files;
  if (files.size() != 2) throw UsageError("diff: expected two traces, A.json B.json");
  Summary a = summarize(load_trace(files[0]), files[0], report.summary);
  Summary b = summarize(load_trace(files[1]), files[1], report.summary);
  TraceDiff d = diff_summaries(a, b);
  if (report.json) std::cout << diff_to_json(d).dump(2) << "\n";
  else std::cout << format_diff_text(d, report.top);
  return kTraceOk;
}

int cmd_export(Args args) {
  std::optional<std::string> output, format;
  std::vector<std::string> files;
  while (!args.done()) {
    const std::string a = args.next();
    if (a == "-o" || a == "--output") output = args.value(a);
    else if (a == "--format") format = args.value(a);
    else if (!a.empty() && a[0] == '-') throw UsageError("export: unknown option " + a);
    else files.push_back(a);
  }
  if (files.size() != 1) throw UsageError("export: expected one TRACE.json");
  if (!format) throw UsageError("export: --format perfetto|csv is required");
  if (*format != "perfetto" && *format != "csv") throw UsageError("export: --format " + *format + ": expected perfetto or csv");
  const Trace trace = load_trace(files[0]);
  const std::string text = *format == "csv" ? export_kernels_csv(trace) : export_chrome_trace(trace).dump() + "\n";
  if (!output || *output == "-") std::cout << text;
  else write_file_atomic(*output, text);
  return kTraceOk;
}

int cmd_recover(Args args, const std::string& prog) {
  std::optional<std::string> output;
  std::vector<std::string> files;
  while (!args.done()) {
    const std::string a = args.next();
    if (a == "-o" || a == "--output") output = args.value(a);
    else if (!a.empty() && a[0] == '-') throw UsageError("recover: unknown option " + a);
    else files.push_back(a);
  }
  if (files.size() != 1) throw UsageError("recover: expected one JOURNAL");
  std::string trace_path = output.value_or("");
  if (trace_path.empty()) {
    const std::string suffix = ".journal";
    const std::string& j = files[0];
    trace_path = j.size() > suffix.size() && j.compare(j.size() - suffix.size(), suffix.size(), suffix) == 0
                     ? j.substr(0, j.size() - suffix.size())
                     : j + ".json";
  }
  std::size_t kernels = recover_trace(files[0], trace_path);
  std::cerr << prog << ": recovered " << kernels << " kernels into " << trace_path << "\n";
  return kTraceOk;
}

int cmd_run(Args args, const std::string& prog) {
  TraceRun run;
  run.options.output = "kerneltrace.json";
  std::optional<std::filesystem::path> lib;
  bool saw_separator = false;
  std::optional<std::uint32_t> skip;
  while (!args.done()) {
    const std::string a = args.next();
    if (a == "--") {
      saw_separator = true;
      break;
    }
    if (a == "-o" || a == "--output") run.options.output = args.value(a);
    else if (a == "--kinds") {
      try {
        run.options.kinds = parse_kinds(args.value(a));
      } catch (const Error& e) {
        throw UsageError(std::string("--kinds: ") + e.what());
      }
    } else if (a == "--range") run.options.range_filter = RangeFilter{args.value(a), 0};
    else if (a == "--skip") skip = parse_count(a, args.value(a), 0, 1000000);
    else if (a == "--buffer-mb") run.options.buffer_mb = parse_count(a, args.value(a), 1, 1024);
    else if (a == "--flush-ms") run.options.flush_period_ms = parse_count(a, args.value(a), 0, 3600000);
    else if (a == "--keep-journal") run.options.keep_journal = true;
    else if (a == "--quiet") run.options.quiet = true;
    else if (a == "--lib") lib = args.value(a);
    else throw UsageError("unknown option " + a + " (the program to trace goes after --)");
  }
  if (!saw_separator) throw UsageError("expected -- PROGRAM [ARGS...]");
  run.command = args.rest();
  if (run.command.empty()) throw UsageError("expected a program after --");
  if (skip) {
    if (!run.options.range_filter) throw UsageError("--skip needs --range NAME");
    run.options.range_filter->skip = *skip;
  }
  if (run.options.range_filter && run.options.range_filter->name.empty()) throw UsageError("--range: empty name");
  if (run.options.range_filter && !run.options.kinds.nvtx) {
    throw UsageError("--range needs NVTX ranges recorded (add nvtx to --kinds)");
  }
  try {
    run.library = find_injection_library(lib);
  } catch (const Error& e) {
    std::cerr << prog << ": " << escape_control(e.what()) << "\n";
    return kTraceNoTrace;
  }

  TraceRunResult result;
  try {
    result = run_traced(run);
  } catch (const Error& e) {
    std::cerr << prog << ": " << escape_control(e.what()) << "\n";
    return kTraceNoTrace;
  }
  if (result.signaled) {
    std::cerr << prog << ": " << run.command[0] << " was killed by signal " << (result.exit_status - 128) << "\n";
  } else if (result.exit_status != 0) {
    std::cerr << prog << ": " << run.command[0] << " exited with status " << result.exit_status << "\n";
  }
  if (!result.trace_written) {
    std::cerr << prog << ": " << escape_control(result.message) << "\n";
    return kTraceNoTrace;
  }
  try {
    Trace trace = load_trace(result.trace_path);
    std::cerr << prog << ": " << escape_control(result.message) << " (" << trace.kernels.size() << " kernels, " << trace.ranges.size()
              << " NVTX ranges" << (trace.notes.empty() ? "" : ", " + std::to_string(trace.notes.size()) + " notes")
              << ")\n"
              << prog << ": summarize with: " << prog << " summarize " << result.trace_path.string() << "\n";
  } catch (const Error& e) {
    std::cerr << prog << ": " << escape_control(result.message) << ", but it does not load: " << escape_control(e.what()) << "\n";
    return kTraceBadInput;
  }
  return result.exit_status == 0 ? kTraceOk : kTraceProgramFailed;
}

}  // namespace

int trace_main(int argc, char** argv) {
  const std::string prog = argc > 0 && argv[0] != nullptr ? argv[0] : "kerneltrace";
  std::vector<std::string> all;
  for (int i = 1; i < argc; ++i) all.emplace_back(argv[i]);
  try {
    if (all.empty()) {
      std::cerr << usage(prog);
      return kTraceUsage;
    }
    const std::string& first = all[0];
    if (first == "--help" || first == "-h" || first == "help") {
      std::cout << usage(prog);
      return kTraceOk;
    }
    if (first == "--version") {
      std::cout << "kerneltrace " << tool_version() << " (trace schema " << kTraceSchema << ")\n";
      return kTraceOk;
    }
    Args rest(std::vector<std::string>(all.begin() + 1, all.end()));
    if (first == "summarize") return cmd_summarize(std::move(rest));
    if (first == "diff") return cmd_diff(std::move(rest));
    if (first == "export") return cmd_export(std::move(rest));
    if (first == "recover") return cmd_recover(std::move(rest), prog);
    if (first == "run") return cmd_run(std::move(rest), prog);
    return cmd_run(Args(all), prog);
  } catch (const UsageError& e) {
    std::cerr << prog << ": " << escape_control(e.what()) << "\n" << usage(prog);
    return kTraceUsage;
  } catch (const Error& e) {
    std::cerr << prog << ": error: " << escape_control(e.what()) << "\n";
    return kTraceBadInput;
  } catch (const std::exception& e) {
    std::cerr << prog << ": error: " << escape_control(e.what()) << "\n";
    return kTraceBadInput;
  }
}

}  // namespace pfx::trace

// `trace` subcommands: run a program under the tracer, summarize, diff, export, recover (usage below).
#include "trace/trace_cli.h"

#include <algorithm>
#include <boost/program_options.hpp>
#include <filesystem>
#include <iostream>
#include <nlohmann/json.hpp>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include "contract/exit_codes.h"
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

namespace po = boost::program_options;

// One subcommand as its --help shows it: the synopsis after the program's name, what it does.
struct CommandHelp {
  const char* name;
  const char* synopsis;
  const char* about;
};

constexpr CommandHelp kCommands[] = {
    {"run", "[run] [OPTIONS] -- PROGRAM [ARGS...]",
     "Run PROGRAM with the CUPTI tracer injected (CUDA_INJECTION64_PATH, NVTX_INJECTION64_PATH)\n"
     "and write one JSON trace (schema kerneltrace/1). Works on any CUDA program, no rebuild."},
    {"summarize", "summarize TRACE.json [--json] [--top N] [--busy-range NAME]",
     "GPU time per kernel, per NVTX range and per role (range name without blk.N.), share of GPU\n"
     "time, TFLOP/s from range FLOP payloads, busy time (union of kernel intervals) in NAME\n"
     "(default prefill)."},
    {"diff", "diff A.json B.json [--json] [--top N] [--busy-range NAME]",
     "Per kernel and per role: A ns, B ns, delta ns, delta %, added/removed; sorted by |delta|;\n"
     "per NAME pass when both traces have NAME ranges."},
    {"export", "export TRACE.json --format perfetto|csv [-o OUT]",
     "perfetto: Chrome trace-event JSON (ui.perfetto.dev, chrome://tracing): a track per stream\n"
     "with its kernels, the NVTX ranges as slices above them, host threads' ranges; csv: one row per\n"
     "kernel (times in ns, launch shape, resources, NVTX path, role). Default OUT: stdout."},
    {"recover", "recover JOURNAL [-o TRACE.json]",
     "Build a trace (complete=false) from the journal of a program that died before writing it."},
};

const CommandHelp& command_help(const std::string& name) {
  for (const auto& c : kCommands)
    if (name == c.name) return c;
  return kCommands[0];
}

// `PROG COMMAND --help` asked for: the command and its options, printed by trace_main.
struct HelpRequest {
  std::string command;
  std::string options;  // the options_description, as Boost.Program_options prints it
};

po::options_description options_for(const std::string& command) { return po::options_description(command + " options", 100, 50); }

// The run command's options (its --help, and the overview: `kerneltrace --help`).
void add_run_options(po::options_description& opts) {
  opts.add_options()("output,o", po::value<std::string>()->default_value("kerneltrace.json")->value_name("PATH"),
                     "trace file (%p = the program's pid)")(
      "kinds", po::value<std::string>()->value_name("LIST"), "what to record: kernel,memcpy,memset,nvtx or all (default all)")(
      "range", po::value<std::string>()->value_name("NAME"), "keep only kernels launched under an NVTX range NAME (e.g. prefill)")(
      "skip", po::value<std::uint32_t>()->value_name("K"), "... skipping NAME's first K occurrences (warm-up passes)")(
      "buffer-mb", po::value<std::uint32_t>()->value_name("N"), "CUPTI activity buffer size in MiB (default 8)")(
      "flush-ms", po::value<std::uint32_t>()->value_name("N"),
      "also flush every N ms, so a crash loses at most ~N ms of records (default 0: off)")(
      "keep-journal", po::bool_switch(), "keep PATH.journal (the raw record stream) after the trace is written")(
      "lib", po::value<std::string>()->value_name("PATH"), "the injection library (default: $KERNELTRACE_LIB, beside this program, or the build's)")(
      "quiet", po::bool_switch(), "no messages from the injected library");
}

std::string command_usage(const std::string& prog, const HelpRequest& h) {
  const CommandHelp& c = command_help(h.command);
  return "usage: " + prog + " " + c.synopsis + "\n\n" + c.about + "\n\n" + h.options + "\n" + contract::kExitCodeTable;
}

// The overview (`PROG --help`, and after a usage error): every command, the run options (run is
// the default command), the exit codes.
std::string usage(const std::string& prog) {
  std::ostringstream o;
  o << "usage:\n";
  for (const auto& c : kCommands) {
    o << "  " << prog << " " << c.synopsis << "\n";
    std::istringstream about(c.about);
    for (std::string line; std::getline(about, line);) o << "      " << line << "\n";
    if (std::string(c.name) == "run") {
      po::options_description run = options_for("run");
      add_run_options(run);
      o << run;
    }
  }
  o << "  " << prog << " COMMAND --help: that command's options alone\n\n" << contract::kExitCodeTable;
  return o.str();
}


// A count flag's value within [min, max].
std::uint32_t checked_count(const po::variables_map& vm, const char* flag, std::uint32_t min, std::uint32_t max) {
  const std::uint32_t value = vm[flag].as<std::uint32_t>();
  if (value < min || value > max)
    throw UsageError(std::string("--") + flag + " " + std::to_string(value) + ": expected an integer in [" + std::to_string(min) +
                     ", " + std::to_string(max) + "]");
  return value;
}

// Parses `args` against `opts`, the documented options (the positional TRACE/JOURNAL files go to a
// hidden "file" when `files`); any Boost.Program_options error is a usage error naming `command`,
// and `--help` throws the HelpRequest for `command`.
po::variables_map parse_args(const std::vector<std::string>& args, po::options_description& opts, const std::string& command,
                             bool files) {
  opts.add_options()("help,h", "this help");
  po::options_description parsed;
  parsed.add(opts);
  po::options_description hidden;
  hidden.add_options()("file", po::value<std::vector<std::string>>()->default_value({}, ""));
  if (files) parsed.add(hidden);
  po::positional_options_description positional;
  if (files) positional.add("file", -1);
  po::variables_map vm;
  try {
    // No abbreviated options ("--out" for "--output"): every flag is spelled out, as before.
    const int style = po::command_line_style::default_style & ~po::command_line_style::allow_guessing;
    po::store(po::command_line_parser(args).options(parsed).positional(positional).style(style).run(), vm);
    if (vm.count("help")) {
      std::ostringstream text;
      text << opts;
      throw HelpRequest{command, text.str()};
    }
    po::notify(vm);
  } catch (const po::error& e) {
    throw UsageError(command + ": " + e.what());
  }
  return vm;
}

// The command line of a report command (summarize, diff): the flags they share and the traces.
struct ReportArgs {
  bool json = false;
  std::size_t top = 0;
  SummaryOptions summary;
  std::vector<std::string> files;
};

// `count` traces expected, else the usage error `expected` ("expected one TRACE.json").
ReportArgs parse_report_args(const std::vector<std::string>& args, const std::string& command, std::size_t count,
                             const char* expected) {
  po::options_description opts = options_for(command);
  opts.add_options()("json", po::bool_switch(), "print JSON instead of tables")(
      "top", po::value<std::uint32_t>()->default_value(0)->value_name("N"), "only the first N rows of each table (0: all)")(
      "busy-range", po::value<std::string>()->default_value(SummaryOptions{}.busy_range)->value_name("NAME"),
      "the NVTX range whose passes the busy time and per-pass figures cover");
  const auto vm = parse_args(args, opts, command, true);
  ReportArgs r;
  r.json = vm["json"].as<bool>();
  r.top = checked_count(vm, "top", 0, 1000000);
  r.summary.busy_range = vm["busy-range"].as<std::string>();
  r.files = vm["file"].as<std::vector<std::string>>();
  if (r.files.size() != count) throw UsageError(command + ": " + expected);
  return r;
}

// The summary of the report command's i-th trace.
Summary summarize_file(const ReportArgs& report, std::size_t i) {
  return summarize(load_trace(report.files[i]), report.files[i], report.summary);
}

int cmd_summarize(const std::vector<std::string>& args) {
  const ReportArgs report = parse_report_args(args, "summarize", 1, "expected one TRACE.json");
  const Summary s = summarize_file(report, 0);
  std::cout << (report.json ? summary_to_json(s).dump(2) + "\n" : format_summary_text(s, report.top));
  return kTraceOk;
}

int cmd_diff(const std::vector<std::string>& args) {
  const ReportArgs report = parse_report_args(args, "diff", 2, "expected two traces, A.json B.json");
  const Summary a = summarize_file(report, 0);  // A first: its load error is the one reported
  const Summary b = summarize_file(report, 1);
  const TraceDiff d = diff_summaries(a, b);
  std::cout << (report.json ? diff_to_json(d).dump(2) + "\n" : format_diff_text(d, report.top));
  return kTraceOk;
}

int cmd_export(const std::vector<std::string>& args) {
  po::options_description opts = options_for("export");
  opts.add_options()("output,o", po::value<std::string>()->value_name("OUT"), "output file (default, or -: stdout)")(
      "format", po::value<std::string>()->value_name("FORMAT"), "perfetto (Chrome trace-event JSON) or csv (one row per kernel)");
  const auto vm = parse_args(args, opts, "export", true);
  const auto files = vm["file"].as<std::vector<std::string>>();
  if (files.size() != 1) throw UsageError("export: expected one TRACE.json");
  if (!vm.count("format")) throw UsageError("export: --format perfetto|csv is required");
  const std::string format = vm["format"].as<std::string>();
  if (format != "perfetto" && format != "csv") throw UsageError("export: --format " + format + ": expected perfetto or csv");
  const Trace trace = load_trace(files[0]);
  const std::string text = format == "csv" ? export_kernels_csv(trace) : export_chrome_trace(trace).dump() + "\n";
  if (!vm.count("output") || vm["output"].as<std::string>() == "-") std::cout << text;
  else write_file_atomic(vm["output"].as<std::string>(), text);
  return kTraceOk;
}

int cmd_recover(const std::vector<std::string>& args, const std::string& prog) {
  po::options_description opts = options_for("recover");
  opts.add_options()("output,o", po::value<std::string>()->value_name("TRACE.json"),
                     "the trace to write (default: the journal's name without .journal)");
  const auto vm = parse_args(args, opts, "recover", true);
  const std::optional<std::string> output =
      vm.count("output") ? std::optional<std::string>(vm["output"].as<std::string>()) : std::nullopt;
  const auto files = vm["file"].as<std::vector<std::string>>();
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

int cmd_run(const std::vector<std::string>& args, const std::string& prog) {
  // Options, then `--`, then the program and its arguments (never parsed as ours).
  const auto separator = std::find(args.begin(), args.end(), std::string("--"));
  po::options_description opts = options_for("run");
  add_run_options(opts);
  po::variables_map vm;
  try {
    vm = parse_args({args.begin(), separator}, opts, "run", false);
  } catch (const UsageError& e) {
    throw UsageError(std::string(e.what()) + " (the program to trace goes after --)");
  }
  if (separator == args.end()) throw UsageError("expected -- PROGRAM [ARGS...]");
  TraceRun run;
  run.options.output = vm["output"].as<std::string>();
  if (vm.count("kinds")) {
    try {
      run.options.kinds = parse_kinds(vm["kinds"].as<std::string>());
    } catch (const Error& e) {
      throw UsageError(std::string("--kinds: ") + e.what());
    }
  }
  if (vm.count("range")) run.options.range_filter = RangeFilter{vm["range"].as<std::string>(), 0};
  const bool has_skip = vm.count("skip") > 0;
  const std::uint32_t skip = has_skip ? checked_count(vm, "skip", 0, 1000000) : 0;
  if (vm.count("buffer-mb")) run.options.buffer_mb = checked_count(vm, "buffer-mb", 1, 1024);
  if (vm.count("flush-ms")) run.options.flush_period_ms = checked_count(vm, "flush-ms", 0, 3600000);
  run.options.keep_journal = vm["keep-journal"].as<bool>();
  run.options.quiet = vm["quiet"].as<bool>();
  const std::optional<std::filesystem::path> lib =
      vm.count("lib") ? std::optional<std::filesystem::path>(vm["lib"].as<std::string>()) : std::nullopt;
  run.command.assign(separator + 1, args.end());
  if (run.command.empty()) throw UsageError("expected a program after --");
  if (has_skip) {
    if (!run.options.range_filter) throw UsageError("--skip needs --range NAME");
    run.options.range_filter->skip = skip;
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
      if (all.size() > 2 || (all.size() == 2 && all[1] != "--json"))
        throw UsageError("--version: unexpected argument '" + all.back() + "' (only --json)");
      if (all.size() == 2) {
        nlohmann::json subcommands = nlohmann::json::array();
        for (const auto& c : kCommands) subcommands.push_back(c.name);
        std::cout << nlohmann::json{{"name", "kerneltrace"}, {"version", tool_version()}, {"trace_schema", kTraceSchema},
                                    {"capabilities", {{"subcommands", subcommands}, {"export_formats", nlohmann::json::array({"perfetto", "csv"})}}}}
                         .dump()
                  << "\n";
      } else {
        std::cout << "kerneltrace " << tool_version() << " (trace schema " << kTraceSchema << ")\n";
      }
      return kTraceOk;
    }
    const std::vector<std::string> rest(all.begin() + 1, all.end());
    if (first == "summarize") return cmd_summarize(rest);
    if (first == "diff") return cmd_diff(rest);
    if (first == "export") return cmd_export(rest);
    if (first == "recover") return cmd_recover(rest, prog);
    if (first == "run") return cmd_run(rest, prog);
    return cmd_run(all, prog);
  } catch (const HelpRequest& h) {
    std::cout << command_usage(prog, h);
    return kTraceOk;
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

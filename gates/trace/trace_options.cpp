// Parsing and printing of the tracer's options (KERNELTRACE_* environment variables).
#include "trace/trace_options.h"

#include <charconv>
#include <sstream>

#include "util/error.h"

namespace pfx::trace {
namespace {

std::uint32_t parse_u32(const char* variable, const std::string& text, std::uint32_t min,
                        std::uint32_t max) {
  std::uint32_t value = 0;
  const char* end = text.data() + text.size();
  auto [ptr, ec] = std::from_chars(text.data(), end, value);
  if (text.empty() || ec != std::errc() || ptr != end || value < min || value > max) {
    fail(variable, "='", text, "': expected an integer in [", min, ", ", max, "]");
  }
  return value;
}

bool parse_flag(const char* variable, const std::string& text) {
  if (text == "1" || text == "true" || text == "yes" || text == "on") return true;
  if (text.empty() || text == "0" || text == "false" || text == "no" || text == "off") return false;
  fail(variable, "='", text, "': expected 1/0, true/false, yes/no or on/off");
}

}  // namespace

std::string kinds_to_string(const RecordKinds& kinds) {
  std::string out;
  auto add = [&](bool on, const char* word) {
    if (!on) return;
    if (!out.empty()) out += ',';
    out += word;
  };
  add(kinds.kernel, "kernel");
  add(kinds.memcpy, "memcpy");
  add(kinds.memset, "memset");
  add(kinds.nvtx, "nvtx");
  return out;
}

RecordKinds parse_kinds(const std::string& text) {
  if (text == "all") return RecordKinds{};
  RecordKinds kinds{false, false, false, false};
  std::istringstream in(text);
  std::string word;
  bool any = false;
  while (std::getline(in, word, ',')) {
    if (word == "kernel") kinds.kernel = true;
    else if (word == "memcpy") kinds.memcpy = true;
    else if (word == "memset") kinds.memset = true;
    else if (word == "nvtx") kinds.nvtx = true;
    else fail("record kinds '", text, "': unknown kind '", word,
              "'; expected a comma-separated list of kernel, memcpy, memset, nvtx (or 'all')");
    any = true;
  }
  if (!any) fail("record kinds '", text, "': empty; expected kernel, memcpy, memset, nvtx or all");
  return kinds;
}

TraceOptions options_from_env(const std::function<const char*(const char*)>& getenv) {
  TraceOptions options;
  auto value = [&](const char* name) -> std::optional<std::string> {
    const char* v = getenv(name);
    if (v == nullptr) return std::nullopt;
    return std::string(v);
  };
  if (auto v = value(kEnvOutput); v && !v->empty()) options.output = *v;
  if (auto v = value(kEnvKinds); v && !v->empty()) {
    try {
      options.kinds = parse_kinds(*v);
    } catch (const Error& e) {
      fail(kEnvKinds, ": ", e.what());
    }
  }
  if (auto v = value(kEnvRange); v && !v->empty()) {
    options.range_filter = RangeFilter{*v, 0};
  }
  if (auto v = value(kEnvRangeSkip); v && !v->empty()) {
    std::uint32_t skip = parse_u32(kEnvRangeSkip, *v, 0, 1000000);
    if (!options.range_filter) {
      fail(kEnvRangeSkip, "='", *v, "': needs ", kEnvRange, " (the range whose first occurrences to skip)");
    }
    options.range_filter->skip = skip;
  }
  if (auto v = value(kEnvBufferMb); v && !v->empty()) options.buffer_mb = parse_u32(kEnvBufferMb, *v, 1, 1024);
  if (auto v = value(kEnvFlushMs); v && !v->empty()) {
    options.flush_period_ms = parse_u32(kEnvFlushMs, *v, 0, 3600000);
  }
  if (auto v = value(kEnvKeepJournal)) options.keep_journal = parse_flag(kEnvKeepJournal, *v);
  if (auto v = value(kEnvQuiet)) options.quiet = parse_flag(kEnvQuiet, *v);
  return options;
}

std::map<std::string, std::string> options_to_env(const TraceOptions& options) {
  std::map<std::string, std::string> env;
  env[kEnvOutput] = options.output;
  env[kEnvKinds] = kinds_to_string(options.kinds);
  if (options.range_filter) {
    env[kEnvRange] = options.range_filter->name;
    env[kEnvRangeSkip] = std::to_string(options.range_filter->skip);
  }
  env[kEnvBufferMb] = std::to_string(options.buffer_mb);
  env[kEnvFlushMs] = std::to_string(options.flush_period_ms);
  env[kEnvKeepJournal] = options.keep_journal ? "1" : "0";
  env[kEnvQuiet] = options.quiet ? "1" : "0";
  return env;
}

std::string expand_output_path(const std::string& pattern, std::uint32_t pid, bool main_process) {
  const std::string pid_text = std::to_string(pid);
  std::string out;
  bool had_pid = false;
  for (std::size_t i = 0; i < pattern.size(); ++i) {
    if (pattern[i] == '%' && i + 1 < pattern.size() && pattern[i + 1] == 'p') {
      out += pid_text;
      had_pid = true;
      ++i;
    } else {
      out += pattern[i];
    }
  }
  if (!had_pid && !main_process) {
    // Insert before the extension of the file name (not of a directory in the path).
    std::size_t slash = out.find_last_of('/');
    std::size_t dot = out.find_last_of('.');
    std::string suffix = ".pid" + pid_text;
    if (dot != std::string::npos && (slash == std::string::npos || dot > slash + 1)) {
      out.insert(dot, suffix);
    } else {
      out += suffix;
    }
  }
  return out;
}

}  // namespace pfx::trace

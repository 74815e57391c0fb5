// Process-wide state of the injection library and its exit path (see injection_state.h).
#include "trace/injection/injection_state.h"

#include <pthread.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <variant>
#include <vector>

#include "trace/assemble.h"
#include "trace/injection/cupti_check.h"
#include "trace/launcher.h"
#include "trace/trace_json.h"
#include "util/error.h"

namespace pfx::trace::injection {
namespace {

std::vector<std::string> read_command_line() {
  std::vector<std::string> out;
  std::ifstream in("/proc/self/cmdline", std::ios::binary);
  std::string arg;
  while (std::getline(in, arg, '\0')) out.push_back(arg);
  return out;
}

std::string host_name() {
  char buf[256] = {};
  if (gethostname(buf, sizeof buf - 1) != 0) return "";
  return buf;
}

// A forked child shares the journal's file descriptor; it must not write into the parent's
// journal. (If it execs a CUDA program, that program loads the library afresh.)
void on_fork_child() { state().closed.store(true); }

void finish();

void flush_thread_main(State* s) {
  std::unique_lock lock(s->flush_thread_mutex);
  const auto period = std::chrono::milliseconds(s->options.flush_period_ms);
  while (!s->flush_thread_stop) {
    s->flush_thread_wake.wait_for(lock, period, [&] { return s->flush_thread_stop; });
    if (s->flush_thread_stop) break;
    lock.unlock();
    // Default (unforced) flush: buffers whose records are all complete; then whatever NVTX and
    // launch records are pending, so a crash loses at most about one period.
    if (s->cupti_ready.load() && (!s->contexts_tracked.load() || s->live_contexts.load() > 0)) {
      flush_activity(/*forced=*/false);
    }
    write_to_journal();
    lock.lock();
  }
}

State* create_state() {
  auto* s = new State();  // never deleted: see injection_state.h
  try {
    s->options = options_from_env([](const char* name) { return std::getenv(name); });
  } catch (const Error& e) {
    std::fprintf(stderr, "kerneltrace: not tracing: %s\n", e.what());
    return s;
  }
  const std::uint32_t pid = static_cast<std::uint32_t>(getpid());
  bool main_process = true;
  if (const char* launcher = std::getenv(kEnvLauncherPid); launcher != nullptr && *launcher != '\0') {
    main_process = std::to_string(getppid()) == launcher;
  }
  s->trace_path = expand_output_path(s->options.output, pid, main_process);
  s->journal_path = journal_path_for(s->trace_path).string();
  if (std::string error = s->journal.open(s->journal_path); !error.empty()) {
    std::fprintf(stderr, "kerneltrace: not tracing: %s\n", error.c_str());
    return s;
  }
  JournalHeader header;
  header.tool_version = tool_version();
  header.pid = pid;
  header.hostname = host_name();
  header.command = read_command_line();
  header.options = s->options;
  header.start_ns = now_ns();
  if (std::string error = s->journal.append(journal_line(header)); !error.empty()) {
    std::fprintf(stderr, "kerneltrace: not tracing: %s: %s\n", s->journal_path.c_str(), error.c_str());
    return s;
  }
  s->enabled = true;
  pthread_atfork(nullptr, nullptr, on_fork_child);
  if (std::atexit(finish) != 0) std::fprintf(stderr, "kerneltrace: atexit failed; no trace will be written at exit\n");
  if (s->options.flush_period_ms > 0) s->flush_thread = std::thread(flush_thread_main, s);
  return s;
}

void finish() {
  State& s = state();
  if (!s.enabled || s.finishing.exchange(true) || s.closed.load()) return;
  if (s.flush_thread.joinable()) {
    {
      std::lock_guard lock(s.flush_thread_mutex);
      s.flush_thread_stop = true;
    }
    s.flush_thread_wake.notify_all();
    s.flush_thread.join();
  }
  // Contexts still alive: force out every buffer, incomplete records included. Contexts already
  // destroyed were flushed when their destruction started (cupti_hooks.cpp); flushing against a
  // context in teardown can deadlock, so no flush happens without a live one.
  // Without context callbacks we cannot know, and flush anyway (as NVIDIA's injection sample does).
  if (s.cupti_ready.load() && (!s.contexts_tracked.load() || s.live_contexts.load() > 0)) {
    flush_activity(/*forced=*/true);
  }
  std::string last = journal_counters_line(s.tracker.unmatched_ends());
  if (std::uint64_t n = s.incomplete_records.load(); n > 0) {
    last += journal_note_line(std::to_string(n) +
                              " activity records had no end time yet at the final flush (work still running at exit?) "
                              "and were left out");
  }
  close_journal(last + journal_end_line(now_ns()));
  try {
    Trace trace = assemble_trace(read_journal(s.journal_path));
    write_trace_file(trace, s.trace_path);
    if (!s.options.keep_journal) std::filesystem::remove(s.journal_path);
    log_message("wrote " + s.trace_path + " (" + std::to_string(trace.kernels.size()) + " kernels, " +
                std::to_string(trace.ranges.size()) + " NVTX ranges)");
  } catch (const std::exception& e) {
    log_message(std::string("could not write the trace: ") + e.what() + "; the journal stays at " + s.journal_path +
                " (kerneltrace recover JOURNAL)");
  }
}

}  // namespace

bool cupti_succeeded(CUptiResult result, const char* call_text, const char* file, int line) {
  if (result == CUPTI_SUCCESS) return true;
  const char* description = nullptr;
  if (cuptiGetResultString(result, &description) != CUPTI_SUCCESS || description == nullptr) {
    description = "unknown CUPTI result";
  }
  std::fprintf(stderr, "kerneltrace: %s:%d: %s -> %d (%s)\n", file, line, call_text, static_cast<int>(result),
               description);
  return false;
}

State& state() {
  static State* instance = create_state();
  return *instance;
}

std::uint32_t current_thread_id() {
  thread_local const std::uint32_t id = static_cast<std::uint32_t>(syscall(SYS_gettid));
  return id;
}

std::uint64_t now_ns() {
  std::uint64_t ts = 0;
  const CUptiResult result = cuptiGetTimestamp(&ts);
  if (result == CUPTI_SUCCESS) return ts;
  // Not expected (cuptiGetTimestamp needs no GPU); reported once, since this runs on every range.
  static std::once_flag reported;
  std::call_once(reported, [result] { cupti_succeeded(result, "cuptiGetTimestamp(&ts)", __FILE__, __LINE__); });
  // CUPTI's default clock is close to this one.
  timespec t{};
  clock_gettime(CLOCK_REALTIME, &t);
  return static_cast<std::uint64_t>(t.tv_sec) * 1000000000ull + static_cast<std::uint64_t>(t.tv_nsec);
}

void log_message(std::string_view text) {
  if (state().options.quiet) return;
  std::fprintf(stderr, "kerneltrace: %.*s\n", static_cast<int>(text.size()), text.data());
}

void note(std::string_view text) {
  log_message(text);
  write_to_journal(journal_note_line(text));
}

namespace {

// journal_order, locked, while the journal is open; an empty (unowning) lock once it is closed or
// tracing is off. Checked before locking too: a forked child (closed) must not touch a mutex the
// fork may have copied in the locked state.
std::unique_lock<std::mutex> lock_open_journal(State& s) {
  if (!s.enabled || s.closed.load()) return {};
  std::unique_lock lock(s.journal_order);
  if (s.closed.load()) return {};
  return lock;
}

// The tracker's pending events as journal lines; taken under journal_order so that they reach the
// journal before anything written after them.
std::string pending_event_lines(State& s) {
  std::string lines;
  for (const TrackerEvent& e : s.tracker.take_events()) lines += journal_line(e);
  return lines;
}

// Appends the pending events, then `tail`, to the open journal (the caller holds its lock); a
// failed write is said on stderr, `lost` telling what it costs.
void append_pending(State& s, const std::string& tail, const char* lost) {
  const std::string batch = pending_event_lines(s) + tail;
  if (batch.empty()) return;
  if (std::string error = s.journal.append(batch); !error.empty())
    std::fprintf(stderr, "kerneltrace: %s: %s%s\n", s.journal_path.c_str(), error.c_str(), lost);
}

}  // namespace

void write_to_journal(std::string extra) {
  State& s = state();
  const auto lock = lock_open_journal(s);
  if (lock.owns_lock()) append_pending(s, extra, "; later records are lost");
}

void close_journal(std::string last) {
  State& s = state();
  const auto lock = lock_open_journal(s);
  if (!lock.owns_lock()) return;
  append_pending(s, last, "");
  s.closed.store(true);
  s.journal.close();
}

void register_exit_handler() {
  if (std::atexit(finish) != 0) std::fprintf(stderr, "kerneltrace: atexit failed; no trace will be written at exit\n");
}

}  // namespace pfx::trace::injection

// The injection library's process-wide state: options (from KERNELTRACE_*), the NVTX range
// tracker, the journal, and the exit path that turns the journal into the trace.
//
// Lifetime: created on first use by either entry point (NVTX may come first: a program can push
// ranges before it touches CUDA) and never destroyed, because CUPTI's worker thread and other
// program threads may still call in while the process exits.
//
// Flush points (when records reach the journal file, and so survive a crash):
//  - each CUPTI activity buffer handed back (full buffer; CUDA context teardown, e.g.
//    cudaDeviceReset; every --flush-ms milliseconds when set); NVTX and launch records
//    pending at that moment are written first;
//  - normal exit (return from main or exit()): forced flush, then the trace is assembled.
#pragma once
#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <string>
#include <string_view>
#include <thread>

#include "trace/journal.h"
#include "trace/range_tracker.h"
#include "trace/trace_options.h"

namespace pfx::trace::injection {

struct State {
  bool enabled = false;  // false: bad options or no journal; every hook does nothing
  TraceOptions options;
  std::string trace_path;
  std::string journal_path;
  RangeTracker tracker;
  JournalWriter journal;
  std::mutex journal_order;  // one writer at a time, so the "end" record is always the last line
  std::atomic<bool> finishing{false};    // exit path started
  std::atomic<bool> closed{false};       // journal closed: later records are dropped
  std::atomic<bool> cupti_ready{false};  // activity callbacks registered
  std::atomic<bool> contexts_tracked{false};  // context callbacks enabled, so live_contexts is known
  std::atomic<int> live_contexts{0};     // CUDA contexts created and not yet being destroyed
  std::atomic<std::uint64_t> incomplete_records{0};  // delivered by a forced flush without timestamps

  std::mutex flush_thread_mutex;
  std::condition_variable flush_thread_wake;
  bool flush_thread_stop = false;
  std::thread flush_thread;
};

State& state();

std::uint32_t current_thread_id();
std::uint64_t now_ns();  // CUPTI's clock, the one its activity timestamps use

// "kerneltrace: <text>" on stderr unless quiet.
void log_message(std::string_view text);
// log_message + a note record in the journal (it ends up in the trace's notes).
void note(std::string_view text);

// Appends the tracker's pending NVTX/launch records (and `extra`) to the journal in one write;
// does nothing once the journal is closed.
void write_to_journal(std::string extra = {});
// The last write: pending records, `last`, then the journal is closed for good.
void close_journal(std::string last);

// Registers the exit handler (idempotent; also called after CUDA initializes so it runs before
// the CUDA runtime's own teardown where possible).
void register_exit_handler();

// CUPTI hooks (cupti_hooks.cpp) used by the exit path and the flush thread.
void flush_activity(bool forced);

}  // namespace pfx::trace::injection

// The journal: what the injection library appends, as JSON Lines, while the traced program runs
// (schema "kerneltrace-journal/2", docs/schemas/kerneltrace.md). It is the single source of a trace: at a clean exit the library
// reads it back and assembles the trace (assemble.h); after a crash `kerneltrace recover` does the
// same with whatever reached the file, and the trace says complete=false.
//
// One record per line, {"t": <type>, ...}: header (first line), range_begin, range_end, launch,
// kernel, memcpy, memset, device, dropped, counters, note, end (last line of a finished journal).
// A kernel and a device record carry the trace file's keys (json_fields.h writes both); every
// time is *_ns, every correlation id correlation_id. Version 1 (corr/start/end/ts) is not read.
#pragma once
#include <cstdint>
#include <filesystem>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

#include "trace/range_tracker.h"
#include "trace/trace_model.h"
#include "trace/trace_options.h"

namespace pfx::trace {

inline constexpr const char* kJournalSchema = "kerneltrace-journal/2";

struct JournalHeader {
  std::string tool_version;
  std::uint32_t pid = 0;
  std::string hostname;
  std::vector<std::string> command;
  TraceOptions options;
  std::uint64_t start_ns = 0;
};

// One memcpy or memset activity record.
struct TransferEvent {
  bool is_memset = false;
  std::string copy_kind;  // memcpy only: "HtoD", "DtoH", "DtoD", "PtoP", ...
  std::uint32_t correlation_id = 0;          // driver API correlation id
  std::uint32_t runtime_correlation_id = 0;  // memcpy only; 0 when unknown
  std::uint64_t bytes = 0;
  std::uint64_t start_ns = 0;
  std::uint64_t end_ns = 0;
  std::uint32_t device = 0;
  std::uint32_t stream = 0;
};

std::string journal_line(const JournalHeader& header);
std::string journal_line(const TrackerEvent& event);
std::string journal_line(const TraceKernel& kernel);  // thread/range are not written: launches carry them
std::string journal_line(const TransferEvent& transfer);
std::string journal_line(const TraceDevice& device);
std::string journal_dropped_line(std::uint64_t count);
std::string journal_counters_line(std::uint64_t unmatched_range_ends);
std::string journal_note_line(std::string_view text);
std::string journal_end_line(std::uint64_t ts);

struct JournalContents {
  JournalHeader header;
  std::vector<RangeBeginEvent> range_begins;
  std::vector<RangeEndEvent> range_ends;
  std::vector<LaunchEvent> launches;  // api is null after reading back
  std::vector<TraceKernel> kernels;
  std::vector<TransferEvent> transfers;
  std::vector<TraceDevice> devices;
  std::uint64_t dropped_records = 0;
  std::uint64_t unmatched_range_ends = 0;
  std::vector<std::string> notes;
  bool finished = false;  // the "end" record is there: the process flushed everything and exited cleanly
};

// Reads a journal. A last line cut short (the process died while writing it) is dropped with a
// note; any other bad line throws pfx::Error naming the file, the line number and the field.
JournalContents read_journal(const std::filesystem::path& path);

// Appends to a journal file with write(2), so each append reaches the kernel's page cache (and
// survives the process dying) before append() returns. Thread-safe.
class JournalWriter {
 public:
  JournalWriter() = default;
  ~JournalWriter();
  JournalWriter(const JournalWriter&) = delete;  // owns a file descriptor
  JournalWriter& operator=(const JournalWriter&) = delete;

  // Creates (truncates) the file. Returns an error message, or "" on success.
  std::string open(const std::filesystem::path& path);
  // Writes all of `text`; returns an error message, or "" on success. After an error the writer
  // stays failed and drops later appends (the caller reports the first error once).
  std::string append(std::string_view text);
  void close();
  bool is_open() const;

 private:
  mutable std::mutex mutex_;
  int fd_ = -1;
  bool failed_ = false;
};

}  // namespace pfx::trace

// The in-memory form of one kernel trace (schema "kerneltrace/1"): NVTX ranges, kernels attributed
// to the range stack of their launching thread, memcpy/memset totals, devices, and how the trace
// was taken. Timestamps are CUPTI nanoseconds (one clock for CPU-side NVTX and GPU-side kernels).
// README.md beside this file documents every JSON field.
#pragma once
#include <array>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "trace/trace_options.h"

namespace pfx::trace {

inline constexpr const char* kTraceSchema = "kerneltrace/1";

// Range ids start at 1; 0 means "no range" (a kernel launched outside every range, a root range).
using RangeId = std::uint64_t;
inline constexpr RangeId kNoRange = 0;

enum class RangeKind { push_pop, start_end };

// The NVTX payload of a range. The engine stores a FLOP count as uint64 (DESIGN.md seam 3).
struct Payload {
  enum class Type { none, u64, i64, f64, u32, i32, f32 };
  Type type = Type::none;
  std::uint64_t as_u64 = 0;  // valid for u64, u32
  std::int64_t as_i64 = 0;   // valid for i64, i32
  double as_f64 = 0;         // valid for f64, f32
  bool operator==(const Payload&) const = default;
};

const char* payload_type_name(Payload::Type type);
std::optional<Payload::Type> payload_type_from_name(const std::string& name);

struct TraceRange {
  RangeId id = kNoRange;
  std::string domain;  // "default" for NVTX's global domain
  std::string name;
  RangeKind kind = RangeKind::push_pop;
  std::uint32_t thread = 0;  // OS thread id that opened it
  RangeId parent = kNoRange; // innermost open range on that thread when it opened
  std::uint64_t start_ns = 0;
  std::optional<std::uint64_t> end_ns;  // empty: still open when the trace ended
  Payload payload;
  std::uint32_t occurrence = 0;  // 0-based count of earlier ranges with the same name
};

struct TraceKernel {
  std::string name;     // demangled
  std::string mangled;  // as CUPTI reports it (ptxas resource files use this spelling)
  std::uint32_t correlation_id = 0;
  std::uint32_t device = 0;
  std::uint32_t context = 0;
  std::uint32_t stream = 0;
  std::array<std::int32_t, 3> grid{};
  std::array<std::int32_t, 3> block{};
  std::uint32_t registers = 0;     // per thread
  std::int32_t static_smem = 0;    // bytes per block
  std::int32_t dynamic_smem = 0;   // bytes per block
  std::uint32_t local_mem_per_thread = 0;
  std::uint64_t start_ns = 0;
  std::uint64_t end_ns = 0;
  std::optional<std::uint32_t> thread;  // launching thread; empty when no launch callback was seen
  RangeId range = kNoRange;             // innermost range open on the launching thread at launch
  std::uint64_t duration_ns() const { return end_ns - start_ns; }
};

struct TransferTotals {
  std::uint64_t count = 0;
  std::uint64_t bytes = 0;
  std::uint64_t total_ns = 0;
  bool operator==(const TransferTotals&) const = default;
};

struct TraceDevice {
  std::uint32_t id = 0;
  std::string name;
  std::uint32_t cc_major = 0;
  std::uint32_t cc_minor = 0;
  std::uint32_t multiprocessors = 0;
  std::uint64_t global_memory_bytes = 0;
  std::uint32_t core_clock_khz = 0;
};

// Counts that tell a reader how much of what was recorded made it into the trace.
struct TraceStats {
  std::uint64_t kernels_recorded = 0;        // kernel activity records seen
  std::uint64_t kernels_without_launch = 0;  // no launch callback matched their correlation id
  std::uint64_t kernels_filtered_out = 0;    // dropped by the range filter
  std::uint64_t ranges_recorded = 0;
  std::uint64_t ranges_filtered_out = 0;
  std::uint64_t unmatched_range_ends = 0;    // pop/end with nothing open to close
  std::uint64_t dropped_activity_records = 0;  // CUPTI ran out of buffer space
  bool operator==(const TraceStats&) const = default;
};

struct Trace {
  bool complete = true;  // false: recovered from a journal the traced process never finished
  std::string tool_version;
  std::uint32_t pid = 0;
  std::string hostname;
  std::vector<std::string> command;
  TraceOptions options;
  std::vector<TraceDevice> devices;
  std::vector<TraceRange> ranges;    // sorted by id
  std::vector<TraceKernel> kernels;  // sorted by start_ns
  std::map<std::string, TransferTotals> memcpy_by_kind;  // "HtoD", "DtoH", "DtoD", ...
  TransferTotals memset;
  TraceStats stats;
  std::vector<std::string> notes;  // warnings from the tracer, in order

  // The range with this id, or nullptr (kNoRange, or not in the trace).
  const TraceRange* find_range(RangeId id) const;
};

}  // namespace pfx::trace

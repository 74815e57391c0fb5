// `trace summarize`: GPU time per kernel name, per NVTX range name and per tensor role, with FLOP
// rates from range payloads and the GPU busy time of the `prefill` range.
//
// Attribution: a kernel's time is *exclusive* to the innermost range open on its launching thread
// (so per-name and per-role exclusive times add up to the total kernel time) and *inclusive* to
// every range in that range's parent chain. A role's TFLOP/s is the FLOPs of its ranges that carry
// a uint64 payload divided by the inclusive kernel time of those same ranges.
// Busy time: the union of the execution intervals of kernels launched under a range named
// `busy_range` (overlapping kernels on several streams count once).
// A kernel's time is its OWN time (own_time_ns): from its start, or from the end of the kernel
// before it on the same stream if that is later, to its end. Kernels of one stream overlap only
// under programmatic dependent launch, where a kernel's blocks start early and mostly wait
// (griddepcontrol.wait) for the kernel before it: that wait is the earlier kernel's time, so the
// times of one stream add up to its busy time instead of counting the overlap twice (a PDL build's
// roles grew 30-350% on raw durations while the pass got faster: docs/perf-h200.md, session 9).
// Kernels on different streams overlap for real and each keeps its whole time.
#pragma once
#include <cstdint>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "trace/trace_model.h"

namespace pfx::trace {

// `k`'s own time given the latest end of the kernels before it on its stream (updated).
std::uint64_t own_time_ns(const TraceKernel& k, std::uint64_t& stream_end);

struct SummaryOptions {
  std::string busy_range = "prefill";
};

struct KernelStats {
  std::string name;
  std::uint64_t count = 0;
  std::uint64_t total_ns = 0;
  std::uint64_t min_ns = 0;
  std::uint64_t max_ns = 0;
  double mean_ns = 0;
  double share = 0;  // of all kernel time in the trace, 0..1
};

// One row per range name or per role.
struct RangeGroupStats {
  std::string key;
  std::uint64_t occurrences = 0;   // ranges with this name/role
  std::uint64_t kernels = 0;       // kernels whose innermost range has this name/role
  std::uint64_t exclusive_ns = 0;  // their kernel time
  std::uint64_t inclusive_ns = 0;  // kernel time under these ranges, nested ones included
  double mean_ns = 0;              // exclusive_ns per occurrence
  double share = 0;                // exclusive_ns of all kernel time, 0..1
  std::uint64_t flops = 0;         // sum of uint64 payloads
  std::uint64_t flop_ranges = 0;   // ranges that carried one
  std::uint64_t flop_time_ns = 0;  // inclusive kernel time of those ranges
  std::optional<double> tflops;    // flops / flop_time_ns, when both are non-zero
};

struct BusyTime {
  std::string range_name;
  bool found = false;          // some range had that name
  std::uint64_t passes = 0;    // how many
  std::uint64_t kernels = 0;   // kernels launched under one
  std::uint64_t kernel_ns = 0; // their summed own times
  std::uint64_t union_ns = 0;  // union of their intervals
};

struct TransferSummary {
  std::map<std::string, TransferTotals> memcpy_by_kind;
  TransferTotals memset;
};

struct Summary {
  std::string source;  // trace file, for headings
  bool complete = true;
  std::vector<std::string> command;
  std::string device;  // first device's name, "" when none recorded
  std::uint64_t kernel_count = 0;
  std::uint64_t total_kernel_ns = 0;
  std::uint64_t no_range_ns = 0;  // kernel time outside every range
  BusyTime busy;
  std::vector<KernelStats> kernels;     // by total_ns, largest first
  std::vector<RangeGroupStats> ranges;  // by range name; by exclusive_ns, largest first
  std::vector<RangeGroupStats> roles;   // by role, plus kNoRangeRole; same order
  TransferSummary transfers;
  std::vector<std::string> notes;       // from the trace
};

Summary summarize(const Trace& trace, const std::string& source, const SummaryOptions& options = {});

// `top` limits every ranked table — roles, ranges, kernels — to its first `top` rows (0: all).
// Numbers print with thousands separators.
std::string format_summary_text(const Summary& summary, std::size_t top = 0);
nlohmann::ordered_json summary_to_json(const Summary& summary);

// Union length of [start, end) intervals.
std::uint64_t interval_union_ns(std::vector<std::pair<std::uint64_t, std::uint64_t>> intervals);

}  // namespace pfx::trace

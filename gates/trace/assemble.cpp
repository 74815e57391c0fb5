// Builds a Trace from journal records (rules in assemble.h).
#include "trace/assemble.h"

#include <algorithm>
#include <unordered_map>
#include <unordered_set>

namespace pfx::trace {

const TraceRange* Trace::find_range(RangeId id) const {
  if (id == kNoRange) return nullptr;
  auto it = std::lower_bound(ranges.begin(), ranges.end(), id,
                             [](const TraceRange& r, RangeId value) { return r.id < value; });
  return it != ranges.end() && it->id == id ? &*it : nullptr;
}

namespace {

struct LaunchSite {
  std::uint32_t thread;
  RangeId range;
};

// The journal's ranges in id order with their ends, parents checked, occurrences counted.
struct RangeTable {
  std::vector<TraceRange> ranges;
  std::unordered_map<RangeId, std::size_t> index;  // id → position in ranges
  std::vector<char> in_scope;                      // under the range filter (all, without one)
  bool known(RangeId id) const { return index.count(id) > 0; }
};

// Process, options, devices, notes and the counters the journal carries.
void copy_header(const JournalContents& journal, Trace& trace) {
  trace.complete = journal.finished;
  trace.tool_version = journal.header.tool_version;
  trace.pid = journal.header.pid;
  trace.hostname = journal.header.hostname;
  trace.command = journal.header.command;
  trace.options = journal.header.options;
  trace.devices = journal.devices;
  trace.notes = journal.notes;
  trace.stats.dropped_activity_records = journal.dropped_records;
  trace.stats.unmatched_range_ends = journal.unmatched_range_ends;
  if (!journal.finished) {
    trace.notes.push_back("the traced process did not finish the trace (crash, kill, or _exit); records after its "
                          "last flush point are missing");
  }
  if (journal.dropped_records > 0) {
    trace.notes.push_back(std::to_string(journal.dropped_records) +
                          " CUPTI activity records were dropped for lack of buffer space (raise --buffer-mb)");
  }
}

// Ranges: begin records in id order (a reused id is ignored), then their ends; a parent that is
// not an earlier range makes the range a root; occurrences count per name in opening order.
RangeTable collect_ranges(const JournalContents& journal, Trace& trace) {
  RangeTable t;
  auto& ranges = t.ranges;
  ranges.reserve(journal.range_begins.size());
  for (const RangeBeginEvent& b : journal.range_begins) {
    TraceRange r;
    r.id = b.id;
    r.domain = b.domain;
    r.name = b.name;
    r.kind = b.kind;
    r.thread = b.thread;
    r.parent = b.parent;
    r.start_ns = b.ts;
    r.payload = b.payload;
    ranges.push_back(std::move(r));
  }
  std::sort(ranges.begin(), ranges.end(), [](const TraceRange& a, const TraceRange& b) { return a.id < b.id; });
  auto duplicate = std::unique(ranges.begin(), ranges.end(), [](const TraceRange& a, const TraceRange& b) { return a.id == b.id; });
  if (duplicate != ranges.end()) {
    trace.notes.push_back(std::to_string(ranges.end() - duplicate) + " range begin records reused an earlier id and were ignored");
    ranges.erase(duplicate, ranges.end());
  }
  for (std::size_t i = 0; i < ranges.size(); ++i) t.index.emplace(ranges[i].id, i);
  for (const RangeEndEvent& e : journal.range_ends) {
    auto it = t.index.find(e.id);
    if (it == t.index.end() || ranges[it->second].end_ns) {
      ++trace.stats.unmatched_range_ends;
      continue;
    }
    ranges[it->second].end_ns = e.ts;
  }
  for (TraceRange& r : ranges) {
    // A parent opens before its child, so it has a smaller id; anything else is a corrupt record.
    if (r.parent != kNoRange && (r.parent >= r.id || !t.known(r.parent))) {
      trace.notes.push_back("range " + std::to_string(r.id) + " (" + r.name + ") named parent " + std::to_string(r.parent) +
                            ", which is not an earlier range in the journal; made it a root");
      r.parent = kNoRange;
    }
  }
  std::unordered_map<std::string, std::uint32_t> seen_names;
  for (TraceRange& r : ranges) r.occurrence = seen_names[r.name]++;
  trace.stats.ranges_recorded = ranges.size();
  return t;
}

// The range filter's scope: a range is in when it is an anchor (the name, occurrence ≥ skip) or
// its parent is in; one pass suffices because parents have smaller ids.
void apply_range_filter(const std::optional<RangeFilter>& filter, RangeTable& t, Trace& trace) {
  t.in_scope.assign(t.ranges.size(), filter ? 0 : 1);
  if (!filter) return;
  for (std::size_t i = 0; i < t.ranges.size(); ++i) {
    const TraceRange& r = t.ranges[i];
    const bool anchor = r.name == filter->name && r.occurrence >= filter->skip;
    const bool parent_in = r.parent != kNoRange && t.in_scope[t.index.at(r.parent)];
    t.in_scope[i] = anchor || parent_in;
  }
  if (std::none_of(t.ranges.begin(), t.ranges.end(), [&](const TraceRange& r) { return r.name == filter->name; }))
    trace.notes.push_back("range filter: no range named '" + filter->name + "' was recorded; nothing was kept");
}

bool range_in_scope(const std::optional<RangeFilter>& filter, const RangeTable& t, RangeId id) {
  if (!filter) return true;
  if (id == kNoRange) return false;
  auto it = t.index.find(id);
  return it != t.index.end() && t.in_scope[it->second];
}

// Launch sites by correlation id; the first record wins (a runtime call and the driver call it
// makes may both report, from the same thread at the same moment).
std::unordered_map<std::uint32_t, LaunchSite> launch_sites(const JournalContents& journal, const RangeTable& t) {
  std::unordered_map<std::uint32_t, LaunchSite> launches;
  launches.reserve(journal.launches.size());
  for (const LaunchEvent& l : journal.launches) {
    RangeId range = l.range;
    if (range != kNoRange && !t.known(range)) range = kNoRange;
    launches.emplace(l.correlation_id, LaunchSite{l.thread, range});
  }
  return launches;
}

// Kernels attributed to their launch site, filtered, sorted by start.
void add_kernels(const JournalContents& journal, const RangeTable& t, const std::unordered_map<std::uint32_t, LaunchSite>& launches,
                 Trace& trace) {
  const auto& filter = journal.header.options.range_filter;
  trace.stats.kernels_recorded = journal.kernels.size();
  const bool attribution_expected = journal.header.options.kinds.nvtx;
  std::uint64_t backwards = 0;
  for (const TraceKernel& k : journal.kernels) {
    if (k.end_ns < k.start_ns) {  // not written by our library (it drops such records); never in a trace
      ++backwards;
      continue;
    }
    TraceKernel kernel = k;
    auto it = launches.find(k.correlation_id);
    if (it != launches.end()) {
      kernel.thread = it->second.thread;
      kernel.range = it->second.range;
    } else {
      kernel.thread.reset();
      kernel.range = kNoRange;
      if (attribution_expected) ++trace.stats.kernels_without_launch;
    }
    if (!range_in_scope(filter, t, kernel.range)) {
      ++trace.stats.kernels_filtered_out;
      continue;
    }
    trace.kernels.push_back(std::move(kernel));
  }
  if (backwards > 0) trace.notes.push_back(std::to_string(backwards) + " kernel records ended before they started and were dropped");
  std::stable_sort(trace.kernels.begin(), trace.kernels.end(),
                   [](const TraceKernel& a, const TraceKernel& b) { return a.start_ns < b.start_ns; });
  if (trace.stats.kernels_without_launch > 0) {
    trace.notes.push_back(std::to_string(trace.stats.kernels_without_launch) +
                          " kernels had no matching launch callback and count as outside every range");
  }
}

// memcpy/memset totals of the transfers in scope (attributed like kernels, by correlation id).
void add_transfers(const JournalContents& journal, const RangeTable& t, const std::unordered_map<std::uint32_t, LaunchSite>& launches,
                   Trace& trace) {
  for (const TransferEvent& x : journal.transfers) {
    RangeId range = kNoRange;
    auto it = launches.find(x.correlation_id);
    if (it == launches.end() && x.runtime_correlation_id != 0) it = launches.find(x.runtime_correlation_id);
    if (it != launches.end()) range = it->second.range;
    if (!range_in_scope(journal.header.options.range_filter, t, range)) continue;
    TransferTotals& totals = x.is_memset ? trace.memset : trace.memcpy_by_kind[x.copy_kind];
    totals.count += 1;
    totals.bytes += x.bytes;
    totals.total_ns += x.end_ns >= x.start_ns ? x.end_ns - x.start_ns : 0;
  }
}

// The ranges in scope; one whose parent fell out of scope becomes a root.
void add_ranges(RangeTable& t, Trace& trace) {
  for (std::size_t i = 0; i < t.ranges.size(); ++i) {
    if (!t.in_scope[i]) {
      ++trace.stats.ranges_filtered_out;
      continue;
    }
    TraceRange r = std::move(t.ranges[i]);
    if (r.parent != kNoRange && !t.in_scope[t.index.at(r.parent)]) r.parent = kNoRange;
    trace.ranges.push_back(std::move(r));
  }
}

}  // namespace

Trace assemble_trace(const JournalContents& journal) {
  Trace trace;
  copy_header(journal, trace);
  RangeTable ranges = collect_ranges(journal, trace);
  apply_range_filter(journal.header.options.range_filter, ranges, trace);
  const auto launches = launch_sites(journal, ranges);
  add_kernels(journal, ranges, launches, trace);
  add_transfers(journal, ranges, launches, trace);
  add_ranges(ranges, trace);
  return trace;
}

}  // namespace pfx::trace

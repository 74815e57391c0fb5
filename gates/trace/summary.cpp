// Per-kernel, per-range and per-role aggregation of a trace; text and JSON forms.
#include "trace/summary.h"

#include <algorithm>
#include <limits>
#include <sstream>
#include <tuple>
#include <unordered_map>

#include "trace/json_fields.h"
#include "trace/roles.h"
#include "util/text_format.h"

namespace pfx::trace {

std::uint64_t interval_union_ns(std::vector<std::pair<std::uint64_t, std::uint64_t>> intervals) {
  std::sort(intervals.begin(), intervals.end());
  std::uint64_t total = 0;
  bool open = false;
  std::uint64_t cur_start = 0, cur_end = 0;
  for (const auto& [start, end] : intervals) {
    if (end <= start) continue;
    if (!open || start > cur_end) {
      if (open) total += cur_end - cur_start;
      cur_start = start;
      cur_end = end;
      open = true;
    } else {
      cur_end = std::max(cur_end, end);
    }
  }
  if (open) total += cur_end - cur_start;
  return total;
}

std::uint64_t own_time_ns(const TraceKernel& k, std::uint64_t& stream_end) {
  const std::uint64_t from = std::max(k.start_ns, stream_end);
  stream_end = std::max(stream_end, k.end_ns);
  return k.end_ns > from ? k.end_ns - from : 0;
}

namespace {

bool by_time_then_key(const RangeGroupStats& a, const RangeGroupStats& b) {
  if (a.exclusive_ns != b.exclusive_ns) return a.exclusive_ns > b.exclusive_ns;
  if (a.inclusive_ns != b.inclusive_ns) return a.inclusive_ns > b.inclusive_ns;
  return a.key < b.key;
}

std::vector<RangeGroupStats> finish_groups(std::map<std::string, RangeGroupStats>& groups, std::uint64_t total_ns) {
  std::vector<RangeGroupStats> out;
  for (auto& [key, g] : groups) {
    g.key = key;
    g.mean_ns = g.occurrences > 0 ? static_cast<double>(g.exclusive_ns) / static_cast<double>(g.occurrences)
                                  : static_cast<double>(g.exclusive_ns);
    g.share = total_ns > 0 ? static_cast<double>(g.exclusive_ns) / static_cast<double>(total_ns) : 0.0;
    if (g.flops > 0 && g.flop_time_ns > 0) {
      // FLOP per ns is GFLOP/s; /1000 gives TFLOP/s.
      g.tflops = static_cast<double>(g.flops) / static_cast<double>(g.flop_time_ns) / 1000.0;
    }
    out.push_back(g);
  }
  std::sort(out.begin(), out.end(), by_time_then_key);
  return out;
}

}  // namespace

Summary summarize(const Trace& trace, const std::string& source, const SummaryOptions& options) {
  Summary s;
  s.source = source;
  s.complete = trace.complete;
  s.command = trace.command;
  if (!trace.devices.empty()) s.device = trace.devices.front().name;
  s.notes = trace.notes;
  s.transfers.memcpy_by_kind = trace.memcpy_by_kind;
  s.transfers.memset = trace.memset;
  s.busy.range_name = options.busy_range;

  std::unordered_map<RangeId, std::size_t> index;
  for (std::size_t i = 0; i < trace.ranges.size(); ++i) index.emplace(trace.ranges[i].id, i);
  std::vector<std::uint64_t> inclusive(trace.ranges.size(), 0);
  std::vector<std::uint64_t> exclusive(trace.ranges.size(), 0);
  std::vector<std::uint64_t> exclusive_kernels(trace.ranges.size(), 0);

  std::map<std::string, KernelStats> kernels;
  std::vector<std::pair<std::uint64_t, std::uint64_t>> busy_intervals;
  std::map<std::tuple<std::uint32_t, std::uint32_t, std::uint32_t>, std::uint64_t> stream_end;  // (device, context, stream)
  for (const TraceKernel& k : trace.kernels) {  // sorted by start
    const std::uint64_t ns = own_time_ns(k, stream_end[{k.device, k.context, k.stream}]);
    s.kernel_count += 1;
    s.total_kernel_ns += ns;
    KernelStats& ks = kernels[k.name];
    if (ks.count == 0) {
      ks.min_ns = ns;
      ks.max_ns = ns;
    }
    ks.count += 1;
    ks.total_ns += ns;
    ks.min_ns = std::min(ks.min_ns, ns);
    ks.max_ns = std::max(ks.max_ns, ns);

    auto it = index.find(k.range);
    if (it == index.end()) {
      s.no_range_ns += ns;
      continue;
    }
    exclusive[it->second] += ns;
    exclusive_kernels[it->second] += 1;
    bool under_busy = false;
    // Parents have smaller ids (validated on load), so this walk ends.
    for (std::size_t i = it->second;;) {
      inclusive[i] += ns;
      if (trace.ranges[i].name == options.busy_range) under_busy = true;
      auto parent = index.find(trace.ranges[i].parent);
      if (parent == index.end()) break;
      i = parent->second;
    }
    if (under_busy) {
      s.busy.kernels += 1;
      s.busy.kernel_ns += ns;
      busy_intervals.emplace_back(k.start_ns, k.end_ns);
    }
  }
  s.busy.union_ns = interval_union_ns(std::move(busy_intervals));

  for (auto& [name, ks] : kernels) {
    ks.name = name;
    ks.mean_ns = static_cast<double>(ks.total_ns) / static_cast<double>(ks.count);
    ks.share = s.total_kernel_ns > 0 ? static_cast<double>(ks.total_ns) / static_cast<double>(s.total_kernel_ns) : 0.0;
    s.kernels.push_back(ks);
  }
  std::sort(s.kernels.begin(), s.kernels.end(), [](const KernelStats& a, const KernelStats& b) {
    return a.total_ns != b.total_ns ? a.total_ns > b.total_ns : a.name < b.name;
  });

  std::map<std::string, RangeGroupStats> by_name, by_role;
  for (std::size_t i = 0; i < trace.ranges.size(); ++i) {
    const TraceRange& r = trace.ranges[i];
    if (r.name == options.busy_range) {
      s.busy.found = true;
      s.busy.passes += 1;
    }
    for (RangeGroupStats* g : {&by_name[r.name], &by_role[role_of(r.name)]}) {
      g->occurrences += 1;
      g->kernels += exclusive_kernels[i];
      g->exclusive_ns += exclusive[i];
      g->inclusive_ns += inclusive[i];
      if (r.payload.type == Payload::Type::u64) {
        g->flops += r.payload.as_u64;
        g->flop_ranges += 1;
        g->flop_time_ns += inclusive[i];
      }
    }
  }
  std::uint64_t no_range_kernels = 0;
  for (const TraceKernel& k : trace.kernels) no_range_kernels += index.count(k.range) ? 0 : 1;
  if (no_range_kernels > 0) {
    for (auto* groups : {&by_name, &by_role}) {
      RangeGroupStats& g = (*groups)[kNoRangeRole];
      g.kernels = no_range_kernels;
      g.exclusive_ns = s.no_range_ns;
      g.inclusive_ns = s.no_range_ns;
    }
  }
  s.ranges = finish_groups(by_name, s.total_kernel_ns);
  s.roles = finish_groups(by_role, s.total_kernel_ns);
  return s;
}

namespace {

std::string optional_tflops(const std::optional<double>& v) { return v ? fixed(*v, 1) : "-"; }

// A table's title, with "(top N)" where `top` (0: all) leaves rows out.
std::string titled(const std::string& title, std::size_t rows, std::size_t top) {
  return title + (top > 0 && rows > top ? " (top " + std::to_string(top) + ")" : "");
}

void add_group_table(std::ostringstream& out, const char* title, const char* key_header, const std::vector<RangeGroupStats>& groups,
                     std::size_t top) {
  out << titled(title, groups.size(), top) << "\n";
  TextTable table({key_header, "ranges", "kernels", "excl ns", "mean ns", "share", "incl ns", "GFLOP", "TFLOP/s"});
  std::size_t shown = 0;
  for (const RangeGroupStats& g : groups) {
    if (top > 0 && shown++ >= top) break;
    table.add({g.key, with_commas(g.occurrences), with_commas(g.kernels), with_commas(g.exclusive_ns),
               with_commas(static_cast<std::uint64_t>(g.mean_ns + 0.5)), percent(g.share), with_commas(g.inclusive_ns),
               g.flops > 0 ? fixed(static_cast<double>(g.flops) / 1e9, 2) : "-", optional_tflops(g.tflops)});
  }
  out << table.str() << "\n";
}

}  // namespace

std::string format_summary_text(const Summary& s, std::size_t top) {
  std::ostringstream out;
  out << "trace: " << s.source << (s.complete ? "" : "  (INCOMPLETE: the traced process did not finish the trace)")
      << "\n";
  if (!s.command.empty()) {
    out << "command:";
    for (const std::string& a : s.command) out << " " << a;
    out << "\n";
  }
  if (!s.device.empty()) out << "device: " << s.device << "\n";
  out << "kernels: " << with_commas(s.kernel_count) << "   kernel time: " << with_commas(s.total_kernel_ns)
      << " ns   outside every range: " << with_commas(s.no_range_ns) << " ns\n";
  if (s.busy.found) {
    out << "busy in '" << s.busy.range_name << "' (" << with_commas(s.busy.passes)
        << " passes): union " << with_commas(s.busy.union_ns) << " ns, kernel sum " << with_commas(s.busy.kernel_ns)
        << " ns over " << with_commas(s.busy.kernels) << " kernels";
    if (s.busy.union_ns > 0) {
      out << " (sum/union " << fixed(static_cast<double>(s.busy.kernel_ns) / static_cast<double>(s.busy.union_ns), 4)
          << ")";
    }
    out << "\n";
  } else {
    out << "busy: no range named '" << s.busy.range_name << "' in this trace\n";
  }
  out << "\n";
  if (!s.roles.empty()) {
    add_group_table(out, "by role (innermost NVTX range without blk.N.)", "role", s.roles, top);
    add_group_table(out, "by NVTX range name", "range", s.ranges, top);
  }
  out << titled("by kernel", s.kernels.size(), top) << "\n";
  TextTable table({"kernel", "count", "total ns", "mean ns", "min ns", "max ns", "share"});
  std::size_t shown = 0;
  for (const KernelStats& k : s.kernels) {
    if (top > 0 && shown++ >= top) break;
    table.add({k.name, with_commas(k.count), with_commas(k.total_ns), with_commas(static_cast<std::uint64_t>(k.mean_ns + 0.5)),
               with_commas(k.min_ns), with_commas(k.max_ns), percent(k.share)});
  }
  out << table.str();
  if (!s.transfers.memcpy_by_kind.empty() || s.transfers.memset.count > 0) {
    out << "\nmemcpy/memset\n";
    TextTable t({"kind", "count", "bytes", "total ns"});
    for (const auto& [kind, totals] : s.transfers.memcpy_by_kind) {
      t.add({"memcpy " + kind, with_commas(totals.count), with_commas(totals.bytes), with_commas(totals.total_ns)});
    }
    if (s.transfers.memset.count > 0) {
      t.add({"memset", with_commas(s.transfers.memset.count), with_commas(s.transfers.memset.bytes),
             with_commas(s.transfers.memset.total_ns)});
    }
    out << t.str();
  }
  if (!s.notes.empty()) {
    out << "\nnotes\n";
    for (const std::string& n : s.notes) out << "  - " << n << "\n";
  }
  return out.str();
}

namespace {

nlohmann::ordered_json group_to_json(const RangeGroupStats& g) {
  return nlohmann::ordered_json{{"key", g.key},
                        {"ranges", g.occurrences},
                        {"kernels", g.kernels},
                        {"exclusive_ns", g.exclusive_ns},
                        {"inclusive_ns", g.inclusive_ns},
                        {"mean_ns", g.mean_ns},
                        {"share", g.share},
                        {"flops", g.flops},
                        {"flop_ranges", g.flop_ranges},
                        {"flop_time_ns", g.flop_time_ns},
                        {"tflops", g.tflops ? nlohmann::ordered_json(*g.tflops) : nlohmann::ordered_json(nullptr)}};
}

}  // namespace

nlohmann::ordered_json summary_to_json(const Summary& s) {
  nlohmann::ordered_json kernels = nlohmann::ordered_json::array();
  for (const KernelStats& k : s.kernels) {
    kernels.push_back({{"name", k.name},
                       {"count", k.count},
                       {"total_ns", k.total_ns},
                       {"mean_ns", k.mean_ns},
                       {"min_ns", k.min_ns},
                       {"max_ns", k.max_ns},
                       {"share", k.share}});
  }
  nlohmann::ordered_json ranges = nlohmann::ordered_json::array(), roles = nlohmann::ordered_json::array();
  for (const auto& g : s.ranges) ranges.push_back(group_to_json(g));
  for (const auto& g : s.roles) roles.push_back(group_to_json(g));
  nlohmann::ordered_json memcpy = nlohmann::ordered_json::object();
  for (const auto& [kind, t] : s.transfers.memcpy_by_kind) {
    memcpy[kind] = {{"count", t.count}, {"bytes", t.bytes}, {"total_ns", t.total_ns}};
  }
  return nlohmann::ordered_json{
      {"schema", "kerneltrace-summary/1"},
      {"trace", s.source},
      {"complete", s.complete},
      {"command", s.command},
      {"device", s.device},
      {"kernel_count", s.kernel_count},
      {"total_kernel_ns", s.total_kernel_ns},
      {"no_range_ns", s.no_range_ns},
      {"busy",
       {{"range", s.busy.range_name},
        {"found", s.busy.found},
        {"passes", s.busy.passes},
        {"kernels", s.busy.kernels},
        {"kernel_ns", s.busy.kernel_ns},
        {"union_ns", s.busy.union_ns},
        {"sum_over_union", s.busy.union_ns > 0 ? nlohmann::ordered_json(static_cast<double>(s.busy.kernel_ns) /
                                                                          static_cast<double>(s.busy.union_ns))
                                               : nlohmann::ordered_json(nullptr)}}},
      {"kernels", kernels},
      {"ranges", ranges},
      {"roles", roles},
      {"memcpy", memcpy},
      {"memset", {{"count", s.transfers.memset.count}, {"bytes", s.transfers.memset.bytes}, {"total_ns", s.transfers.memset.total_ns}}},
      {"notes", s.notes}};
}

}  // namespace pfx::trace

// Trace exports (see export.h).
#include "trace/export.h"

#include <algorithm>
#include <map>
#include <set>
#include <sstream>

#include "trace/roles.h"

namespace pfx::trace {

using nlohmann::json;

namespace {

// Trace-event timestamps are microseconds; keep nanosecond precision as a fraction.
double us(std::uint64_t ns) { return static_cast<double>(ns) / 1000.0; }

// Chrome trace-event pids: the host process keeps its own; GPUs get 1'000'000 + device, far from any pid.
constexpr std::uint64_t kGpuPidBase = 1000000;
// Per stream two tracks: its kernels (tid = 2·stream) and the ranges over them (tid = 2·stream + 1);
// a range that would overlap another on that track without nesting goes to an overflow track.
std::uint64_t kernel_tid(std::uint32_t stream) { return 2ull * stream + 2; }
std::uint64_t range_tid(std::uint32_t stream, int level) { return 2ull * stream + 3 + 1000000ull * static_cast<unsigned>(level); }

json metadata(const char* what, std::uint64_t pid, std::uint64_t tid, const std::string& name) {
  json m = {{"ph", "M"}, {"name", what}, {"pid", pid}, {"args", {{"name", name}}}};
  if (tid) m["tid"] = tid;
  return m;
}

json payload_args(const TraceRange& r) {
  json a = {{"domain", r.domain}, {"range_id", r.id}};
  switch (r.payload.type) {
    case Payload::Type::u64:
    case Payload::Type::u32: a["payload"] = r.payload.as_u64; break;
    case Payload::Type::i64:
    case Payload::Type::i32: a["payload"] = r.payload.as_i64; break;
    case Payload::Type::f64:
    case Payload::Type::f32: a["payload"] = r.payload.as_f64; break;
    case Payload::Type::none: break;
  }
  return a;
}

std::string range_path(const Trace& t, RangeId id) {
  std::vector<std::string> names;
  for (const TraceRange* r = t.find_range(id); r; r = t.find_range(r->parent)) names.push_back(r->name);
  std::string path;
  for (auto it = names.rbegin(); it != names.rend(); ++it) path += (path.empty() ? "" : "/") + *it;
  return path;
}

std::string csv(const std::string& v) {
  if (v.find_first_of(",\"\n") == std::string::npos) return v;
  std::string q = "\"";
  for (char c : v) q += c == '"' ? std::string("\"\"") : std::string(1, c);
  return q + "\"";
}

}  // namespace

json export_chrome_trace(const Trace& t) {
  json events = json::array();
  // Processes and their tracks.
  std::set<std::uint32_t> devices;
  std::set<std::pair<std::uint32_t, std::uint32_t>> streams;
  for (const auto& k : t.kernels) {
    devices.insert(k.device);
    streams.insert({k.device, k.stream});
  }
  for (std::uint32_t d : devices) {
    std::string name = "GPU " + std::to_string(d);
    for (const auto& dev : t.devices)
      if (dev.id == d && !dev.name.empty()) name += " " + dev.name;
    events.push_back(metadata("process_name", kGpuPidBase + d, 0, name));
  }
  for (const auto& [d, s] : streams) {
    events.push_back(metadata("thread_name", kGpuPidBase + d, kernel_tid(s), "stream " + std::to_string(s) + " kernels"));
    events.push_back(metadata("thread_name", kGpuPidBase + d, range_tid(s, 0), "stream " + std::to_string(s) + " NVTX ranges"));
  }
  const std::uint64_t host_pid = t.pid ? t.pid : 1;
  events.push_back(metadata("process_name", host_pid, 0, "host " + t.hostname + (t.command.empty() ? "" : " " + t.command.front())));

  // Kernels on their stream's track.
  for (const auto& k : t.kernels)
    events.push_back({{"ph", "X"}, {"name", k.name}, {"cat", "kernel"}, {"pid", kGpuPidBase + k.device}, {"tid", kernel_tid(k.stream)},
                      {"ts", us(k.start_ns)}, {"dur", us(k.end_ns) - us(k.start_ns)},
                      {"args", {{"grid", k.grid}, {"block", k.block}, {"registers", k.registers},
                                {"static_smem", k.static_smem}, {"dynamic_smem", k.dynamic_smem},
                                {"correlation_id", k.correlation_id}, {"range", range_path(t, k.range)}}}});

  // NVTX ranges on the GPU: each range spans its kernels (and its descendants') on each stream.
  std::map<RangeId, std::map<std::pair<std::uint32_t, std::uint32_t>, std::pair<std::uint64_t, std::uint64_t>>> span;
  for (const auto& k : t.kernels)
    for (const TraceRange* r = t.find_range(k.range); r; r = t.find_range(r->parent)) {
      auto [it, fresh] = span[r->id].insert({{k.device, k.stream}, {k.start_ns, k.end_ns}});
      if (!fresh) it->second = {std::min(it->second.first, k.start_ns), std::max(it->second.second, k.end_ns)};
    }
  struct Slice {
    std::uint64_t start, end;
    const TraceRange* range;
  };
  std::map<std::pair<std::uint32_t, std::uint32_t>, std::vector<Slice>> per_stream;
  for (const auto& [id, by_stream] : span)
    for (const auto& [ds, se] : by_stream) per_stream[ds].push_back({se.first, se.second, t.find_range(id)});
  for (auto& [ds, slices] : per_stream) {
    // Outer first at equal starts, so nesting holds; a slice crossing an open one's end moves down a level.
    std::sort(slices.begin(), slices.end(), [](const Slice& a, const Slice& b) {
      return a.start != b.start ? a.start < b.start : a.end > b.end;
    });
    std::vector<std::vector<std::uint64_t>> open;  // per level: stack of end times
    std::set<int> named{0};
    for (const auto& s : slices) {
      int level = 0;
      for (;; ++level) {
        if (static_cast<size_t>(level) == open.size()) open.emplace_back();
        auto& stack = open[static_cast<size_t>(level)];
        while (!stack.empty() && stack.back() <= s.start) stack.pop_back();
        if (stack.empty() || s.end <= stack.back()) {
          stack.push_back(s.end);
          break;
        }
      }
      if (named.insert(level).second)
        events.push_back(metadata("thread_name", kGpuPidBase + ds.first, range_tid(ds.second, level),
                                  "stream " + std::to_string(ds.second) + " NVTX ranges (overlapping, " + std::to_string(level + 1) + ")"));
      events.push_back({{"ph", "X"}, {"name", s.range->name}, {"cat", "nvtx"}, {"pid", kGpuPidBase + ds.first},
                        {"tid", range_tid(ds.second, level)}, {"ts", us(s.start)}, {"dur", us(s.end) - us(s.start)},
                        {"args", payload_args(*s.range)}});
    }
  }

  // NVTX ranges as the host saw them: push/pop ranges nest on their thread; start/end ranges
  // may not, so they are async slices.
  std::set<std::uint32_t> threads;
  for (const auto& r : t.ranges) threads.insert(r.thread);
  for (std::uint32_t th : threads) events.push_back(metadata("thread_name", host_pid, th, "thread " + std::to_string(th)));
  for (const auto& r : t.ranges) {
    const std::uint64_t end = r.end_ns.value_or(r.start_ns);
    json args = payload_args(r);
    if (!r.end_ns) args["open_at_end"] = true;
    if (r.kind == RangeKind::push_pop) {
      events.push_back({{"ph", "X"}, {"name", r.name}, {"cat", "nvtx"}, {"pid", host_pid}, {"tid", r.thread}, {"ts", us(r.start_ns)},
                        {"dur", us(end) - us(r.start_ns)}, {"args", args}});
    } else {
      events.push_back({{"ph", "b"}, {"name", r.name}, {"cat", "nvtx"}, {"id", r.id}, {"pid", host_pid}, {"tid", r.thread},
                        {"ts", us(r.start_ns)}, {"args", args}});
      events.push_back({{"ph", "e"}, {"name", r.name}, {"cat", "nvtx"}, {"id", r.id}, {"pid", host_pid}, {"tid", r.thread}, {"ts", us(end)}});
    }
  }
  return {{"traceEvents", events},
          {"displayTimeUnit", "ns"},
          {"otherData", {{"schema", kTraceSchema}, {"tool_version", t.tool_version}, {"complete", t.complete}, {"hostname", t.hostname}}}};
}

std::string export_kernels_csv(const Trace& t) {
  std::ostringstream o;
  o << "name,device,stream,start_ns,end_ns,duration_ns,grid_x,grid_y,grid_z,block_x,block_y,block_z,registers,static_smem,"
       "dynamic_smem,range_path,role\n";
  for (const auto& k : t.kernels) {
    const TraceRange* r = t.find_range(k.range);
    o << csv(k.name) << "," << k.device << "," << k.stream << "," << k.start_ns << "," << k.end_ns << "," << k.duration_ns();
    for (int v : k.grid) o << "," << v;
    for (int v : k.block) o << "," << v;
    o << "," << k.registers << "," << k.static_smem << "," << k.dynamic_smem << "," << csv(range_path(t, k.range)) << ","
      << csv(r ? role_of(r->name) : std::string()) << "\n";
  }
  return o.str();
}

}  // namespace pfx::trace

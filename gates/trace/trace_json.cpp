// Trace <-> JSON ("kerneltrace/1") with strict validation on read.
#include "trace/trace_json.h"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <set>
#include <sstream>

#include "trace/json_fields.h"
#include "util/atomic_file.h"
#include "util/error.h"

namespace pfx::trace {
namespace {

json id_or_null(RangeId id) { return id == kNoRange ? json(nullptr) : json(id); }

nlohmann::ordered_json totals_to_json(const TransferTotals& t) {
  return nlohmann::ordered_json{{"count", t.count}, {"bytes", t.bytes}, {"total_ns", t.total_ns}};
}

TransferTotals totals_from_json(const json& v, const std::string& where) {
  return TransferTotals{json_u64(json_field(v, "count", where), where + ".count"),
                        json_u64(json_field(v, "bytes", where), where + ".bytes"),
                        json_u64(json_field(v, "total_ns", where), where + ".total_ns")};
}

const json& array_field(const json& obj, const char* key, const std::string& where) {
  const json& v = json_field(obj, key, where);
  if (!v.is_array()) fail(json_path(where, key), ": expected an array, got ", describe_json(v));
  return v;
}

}  // namespace

nlohmann::ordered_json trace_to_json(const Trace& trace) {
  using ojson = nlohmann::ordered_json;
  ojson devices = ojson::array();
  for (const TraceDevice& d : trace.devices) devices.push_back(device_to_json(d));
  ojson ranges = ojson::array();
  for (const TraceRange& r : trace.ranges) {
    ranges.push_back(ojson{{"id", r.id},
                          {"domain", r.domain},
                          {"name", r.name},
                          {"kind", range_kind_name(r.kind)},
                          {"thread", r.thread},
                          {"parent", id_or_null(r.parent)},
                          {"start_ns", r.start_ns},
                          {"end_ns", r.end_ns ? ojson(*r.end_ns) : ojson(nullptr)},
                          {"payload", payload_to_json(r.payload)},
                          {"occurrence", r.occurrence}});
  }
  ojson kernels = ojson::array();
  for (const TraceKernel& k : trace.kernels) kernels.push_back(kernel_to_json(k));
  ojson memcpy = ojson::object();
  for (const auto& [kind, totals] : trace.memcpy_by_kind) memcpy[kind] = totals_to_json(totals);
  const TraceStats& s = trace.stats;
  return ojson{{"schema", kTraceSchema},
              {"complete", trace.complete},
              {"tool", {{"name", "kerneltrace"}, {"version", trace.tool_version}}},
              {"process", {{"pid", trace.pid}, {"hostname", trace.hostname}, {"command", trace.command}}},
              {"options", options_to_json(trace.options)},
              {"devices", devices},
              {"stats",
               {{"kernels_recorded", s.kernels_recorded},
                {"kernels_without_launch", s.kernels_without_launch},
                {"kernels_filtered_out", s.kernels_filtered_out},
                {"ranges_recorded", s.ranges_recorded},
                {"ranges_filtered_out", s.ranges_filtered_out},
                {"unmatched_range_ends", s.unmatched_range_ends},
                {"dropped_activity_records", s.dropped_activity_records}}},
              {"notes", trace.notes},
              {"ranges", ranges},
              {"kernels", kernels},
              {"memcpy", memcpy},
              {"memset", totals_to_json(trace.memset)}};
}

Trace trace_from_json(const json& root, const std::string& source) {
  const std::string& w = source;
  if (!root.is_object()) fail(w, ": expected a JSON object at the top, got ", describe_json(root));
  const std::string schema = json_string(json_field(root, "schema", w + ": "), w + ": schema");
  if (schema != kTraceSchema) {
    fail(w, ": schema: expected \"", kTraceSchema, "\", got \"", schema,
         "\" (a journal? run `kerneltrace recover` on it first)");
  }
  Trace t;
  auto at = [&](const std::string& path) { return w + ": " + path; };
  t.complete = json_bool(json_field(root, "complete", at("")), at("complete"));
  const json& tool = json_field(root, "tool", at(""));
  t.tool_version = json_string(json_field(tool, "version", at("tool")), at("tool.version"));
  const json& process = json_field(root, "process", at(""));
  t.pid = json_u32(json_field(process, "pid", at("process")), at("process.pid"));
  t.hostname = json_string(json_field(process, "hostname", at("process")), at("process.hostname"));
  const json& command = array_field(process, "command", at("process"));
  for (std::size_t i = 0; i < command.size(); ++i) {
    t.command.push_back(json_string(command[i], at("process.command[" + std::to_string(i) + "]")));
  }
  t.options = options_from_json(json_field(root, "options", at("")), at("options"));

  const json& devices = array_field(root, "devices", at(""));
  for (std::size_t i = 0; i < devices.size(); ++i) t.devices.push_back(device_from_json(devices[i], at("devices[" + std::to_string(i) + "]")));

  const FieldReader stats(json_field(root, "stats", at("")), at("stats"));
  t.stats.kernels_recorded = stats.u64("kernels_recorded");
  t.stats.kernels_without_launch = stats.u64("kernels_without_launch");
  t.stats.kernels_filtered_out = stats.u64("kernels_filtered_out");
  t.stats.ranges_recorded = stats.u64("ranges_recorded");
  t.stats.ranges_filtered_out = stats.u64("ranges_filtered_out");
  t.stats.unmatched_range_ends = stats.u64("unmatched_range_ends");
  t.stats.dropped_activity_records = stats.u64("dropped_activity_records");

  const json& notes = array_field(root, "notes", at(""));
  for (std::size_t i = 0; i < notes.size(); ++i) t.notes.push_back(json_string(notes[i], at("notes[" + std::to_string(i) + "]")));

  const json& ranges = array_field(root, "ranges", at(""));
  std::set<RangeId> ids;
  for (std::size_t i = 0; i < ranges.size(); ++i) {
    const std::string rw = at("ranges[" + std::to_string(i) + "]");
    const json& r = ranges[i];
    const FieldReader f(r, rw);
    TraceRange range;
    range.id = f.u64("id");
    if (range.id == kNoRange) fail(rw, ".id: range ids start at 1");
    if (!ids.insert(range.id).second) fail(rw, ".id: range id ", range.id, " appears twice");
    range.domain = f.str("domain");
    range.name = f.str("name");
    range.kind = range_kind_from_json(f.field("kind"), f.path("kind"));
    range.thread = f.u32("thread");
    if (const json* parent = json_optional_field(r, "parent", rw)) range.parent = json_u64(*parent, rw + ".parent");
    range.start_ns = f.u64("start_ns");
    if (const json* end = json_optional_field(r, "end_ns", rw)) {
      range.end_ns = json_u64(*end, rw + ".end_ns");
      if (*range.end_ns < range.start_ns) fail(rw, ".end_ns: ", *range.end_ns, " is before start_ns ", range.start_ns);
    }
    range.payload = payload_from_json(f.field("payload"), f.path("payload"));
    range.occurrence = f.u32("occurrence");
    t.ranges.push_back(std::move(range));
  }
  for (std::size_t i = 0; i < t.ranges.size(); ++i) {
    const TraceRange& r = t.ranges[i];
    if (r.parent != kNoRange && !ids.count(r.parent)) {
      fail(at("ranges[" + std::to_string(i) + "].parent"), ": range ", r.parent, " is not in ranges");
    }
    if (r.parent != kNoRange && r.parent >= r.id) {
      fail(at("ranges[" + std::to_string(i) + "].parent"), ": parent ", r.parent,
           " must be an earlier range (smaller id) than ", r.id);
    }
  }
  std::sort(t.ranges.begin(), t.ranges.end(), [](const TraceRange& a, const TraceRange& b) { return a.id < b.id; });

  const json& kernels = array_field(root, "kernels", at(""));
  for (std::size_t i = 0; i < kernels.size(); ++i) {
    const std::string kw = at("kernels[" + std::to_string(i) + "]");
    TraceKernel kernel = kernel_from_json(kernels[i], kw);
    if (json_optional_field(kernels[i], "range", kw) && !ids.count(kernel.range))
      fail(kw, ".range: range ", kernel.range, " is not in ranges");
    t.kernels.push_back(std::move(kernel));
  }
  std::stable_sort(t.kernels.begin(), t.kernels.end(),
                   [](const TraceKernel& a, const TraceKernel& b) { return a.start_ns < b.start_ns; });

  const json& memcpy = json_field(root, "memcpy", at(""));
  if (!memcpy.is_object()) fail(at("memcpy"), ": expected an object of copy kinds, got ", describe_json(memcpy));
  for (const auto& [kind, totals] : memcpy.items()) t.memcpy_by_kind[kind] = totals_from_json(totals, at("memcpy." + kind));
  t.memset = totals_from_json(json_field(root, "memset", at("")), at("memset"));
  return t;
}

Trace load_trace(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) fail(path.string(), ": cannot open trace: ", std::strerror(errno));
  json root;
  try {
    root = json::parse(in);
  } catch (const json::parse_error& e) {
    fail(path.string(), ": not valid JSON (byte ", e.byte, "): ", e.what());
  }
  return trace_from_json(root, path.string());
}

void write_trace_file(const Trace& trace, const std::filesystem::path& path) {
  // Crash-safe (util/atomic_file.h): on a full disk the previous trace stays whole.
  write_file_atomic(path, trace_to_json(trace).dump(1, ' ', false, json::error_handler_t::replace) + "\n");
}

}  // namespace pfx::trace

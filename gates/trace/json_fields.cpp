// The JSON forms of trace and journal records (see json_fields.h).
#include "trace/json_fields.h"

#include <cmath>
#include <limits>
#include <sstream>

#include "util/enum_names.h"
#include "util/error.h"

namespace pfx::trace {

namespace {
constexpr EnumName<Payload::Type> kPayloadTypeNames[] = {
    {Payload::Type::none, "none"},  {Payload::Type::u64, "uint64"}, {Payload::Type::i64, "int64"},
    {Payload::Type::f64, "double"}, {Payload::Type::u32, "uint32"}, {Payload::Type::i32, "int32"},
    {Payload::Type::f32, "float"}};
}  // namespace

const char* payload_type_name(Payload::Type type) { return name_of(kPayloadTypeNames, type, "none"); }

// "none" names no payload type: a payload without one is written as null, never as {"type": "none"}.
std::optional<Payload::Type> payload_type_from_name(const std::string& name) {
  const auto type = value_named(kPayloadTypeNames, name);
  return type == Payload::Type::none ? std::nullopt : type;
}

json payload_to_json(const Payload& payload) {
  switch (payload.type) {
    case Payload::Type::none: return nullptr;
    case Payload::Type::u64:
    case Payload::Type::u32: return json{{"type", payload_type_name(payload.type)}, {"value", payload.as_u64}};
    case Payload::Type::i64:
    case Payload::Type::i32: return json{{"type", payload_type_name(payload.type)}, {"value", payload.as_i64}};
    case Payload::Type::f64:
    case Payload::Type::f32: return json{{"type", payload_type_name(payload.type)}, {"value", payload.as_f64}};
  }
  return nullptr;
}

Payload payload_from_json(const json& value, const std::string& where) {
  Payload payload;
  if (value.is_null()) return payload;
  std::string type_name = json_string(json_field(value, "type", where), json_path(where, "type"));
  auto type = payload_type_from_name(type_name);
  if (!type) {
    fail(json_path(where, "type"), ": unknown payload type \"", type_name, "\"; expected uint64, int64, double, uint32, int32 or float");
  }
  payload.type = *type;
  const json& v = json_field(value, "value", where);
  const std::string vwhere = json_path(where, "value");
  switch (payload.type) {
    case Payload::Type::u64: payload.as_u64 = json_u64(v, vwhere); break;
    case Payload::Type::u32: payload.as_u64 = json_u32(v, vwhere); break;
    case Payload::Type::i64:
      if (!v.is_number_integer()) fail(vwhere, ": expected an integer, got ", describe_json(v));
      payload.as_i64 = v.get<std::int64_t>();
      break;
    case Payload::Type::i32: payload.as_i64 = json_i32(v, vwhere); break;
    case Payload::Type::f64:
    case Payload::Type::f32: payload.as_f64 = json_number(v, vwhere); break;
    case Payload::Type::none: break;
  }
  return payload;
}

json options_to_json(const TraceOptions& options) {
  json kinds = json::array();
  if (options.kinds.kernel) kinds.push_back("kernel");
  if (options.kinds.memcpy) kinds.push_back("memcpy");
  if (options.kinds.memset) kinds.push_back("memset");
  if (options.kinds.nvtx) kinds.push_back("nvtx");
  json filter = nullptr;
  if (options.range_filter) filter = json{{"name", options.range_filter->name}, {"skip", options.range_filter->skip}};
  return json{{"kinds", kinds},
              {"range_filter", filter},
              {"buffer_mb", options.buffer_mb},
              {"flush_period_ms", options.flush_period_ms},
              {"output", options.output},
              {"keep_journal", options.keep_journal}};
}

TraceOptions options_from_json(const json& value, const std::string& where) {
  TraceOptions options;
  const json& kinds = json_field(value, "kinds", where);
  if (!kinds.is_array()) fail(json_path(where, "kinds"), ": expected an array of strings, got ", describe_json(kinds));
  std::string joined;
  for (std::size_t i = 0; i < kinds.size(); ++i) {
    if (!joined.empty()) joined += ',';
    joined += json_string(kinds[i], json_path(where, "kinds[" + std::to_string(i) + "]"));
  }
  if (joined.empty()) {
    options.kinds = RecordKinds{false, false, false, false};
  } else {
    try {
      options.kinds = parse_kinds(joined);
    } catch (const Error& e) {
      fail(json_path(where, "kinds"), ": ", e.what());
    }
  }
  if (const json* filter = json_optional_field(value, "range_filter", where)) {
    const std::string fwhere = json_path(where, "range_filter");
    options.range_filter = RangeFilter{json_string(json_field(*filter, "name", fwhere), json_path(fwhere, "name")),
                                       json_u32(json_field(*filter, "skip", fwhere), json_path(fwhere, "skip"))};
  }
  options.buffer_mb = json_u32(json_field(value, "buffer_mb", where), json_path(where, "buffer_mb"));
  options.flush_period_ms = json_u32(json_field(value, "flush_period_ms", where), json_path(where, "flush_period_ms"));
  if (const json* output = json_optional_field(value, "output", where)) options.output = json_string(*output, json_path(where, "output"));
  if (const json* keep = json_optional_field(value, "keep_journal", where)) {
    options.keep_journal = json_bool(*keep, json_path(where, "keep_journal"));
  }
  return options;
}

const char* range_kind_name(RangeKind kind) { return kind == RangeKind::push_pop ? "push_pop" : "start_end"; }

RangeKind range_kind_from_json(const json& value, const std::string& where) {
  const std::string kind = json_string(value, where);
  if (kind == "push_pop") return RangeKind::push_pop;
  if (kind == "start_end") return RangeKind::start_end;
  fail(where, ": expected \"push_pop\" or \"start_end\", got \"", kind, "\"");
}

namespace {

json id_or_null(RangeId id) { return id == kNoRange ? json(nullptr) : json(id); }

std::array<std::int32_t, 3> dim3_from_json(const json& v, const std::string& where) {
  if (!v.is_array() || v.size() != 3) fail(where, ": expected an array of 3 integers, got ", describe_json(v));
  return {json_i32(v[0], where + "[0]"), json_i32(v[1], where + "[1]"), json_i32(v[2], where + "[2]")};
}

}  // namespace

nlohmann::ordered_json kernel_to_json(const TraceKernel& k) {
  using ojson = nlohmann::ordered_json;
  return ojson{{"name", k.name},
               {"mangled", k.mangled},
               {"correlation_id", k.correlation_id},
               {"device", k.device},
               {"context", k.context},
               {"stream", k.stream},
               {"grid", k.grid},
               {"block", k.block},
               {"registers", k.registers},
               {"static_smem", k.static_smem},
               {"dynamic_smem", k.dynamic_smem},
               {"local_mem_per_thread", k.local_mem_per_thread},
               {"start_ns", k.start_ns},
               {"end_ns", k.end_ns},
               {"thread", k.thread ? ojson(*k.thread) : ojson(nullptr)},
               {"range", id_or_null(k.range)}};
}

TraceKernel kernel_from_json(const json& k, const std::string& kw) {
  const FieldReader f(k, kw);
  TraceKernel kernel;
  f.read({{"name", &kernel.name}, {"mangled", &kernel.mangled}, {"correlation_id", &kernel.correlation_id},
          {"device", &kernel.device}, {"context", &kernel.context}, {"stream", &kernel.stream}});
  kernel.grid = dim3_from_json(f.field("grid"), f.path("grid"));
  kernel.block = dim3_from_json(f.field("block"), f.path("block"));
  f.read({{"registers", &kernel.registers}, {"static_smem", &kernel.static_smem}, {"dynamic_smem", &kernel.dynamic_smem},
          {"local_mem_per_thread", &kernel.local_mem_per_thread}, {"start_ns", &kernel.start_ns}, {"end_ns", &kernel.end_ns}});
  if (kernel.end_ns < kernel.start_ns) fail(f.path("end_ns"), ": ", kernel.end_ns, " is before start_ns ", kernel.start_ns);
  if (const json* thread = json_optional_field(k, "thread", kw)) kernel.thread = json_u32(*thread, json_path(kw, "thread"));
  if (const json* range = json_optional_field(k, "range", kw)) kernel.range = json_u64(*range, json_path(kw, "range"));
  return kernel;
}

nlohmann::ordered_json device_to_json(const TraceDevice& d) {
  return nlohmann::ordered_json{{"id", d.id},
                                {"name", d.name},
                                {"compute_capability", std::to_string(d.cc_major) + "." + std::to_string(d.cc_minor)},
                                {"multiprocessors", d.multiprocessors},
                                {"global_memory_bytes", d.global_memory_bytes},
                                {"core_clock_khz", d.core_clock_khz}};
}

TraceDevice device_from_json(const json& d, const std::string& dw) {
  const FieldReader f(d, dw);
  TraceDevice dev;
  dev.id = f.u32("id");
  dev.name = f.str("name");
  const std::string cc = f.str("compute_capability");
  unsigned major = 0, minor = 0;
  char dot = 0;
  std::istringstream ccin(cc);
  if (!(ccin >> major >> dot >> minor) || dot != '.') fail(f.path("compute_capability"), ": expected \"MAJOR.MINOR\", got \"", cc, "\"");
  dev.cc_major = major;
  dev.cc_minor = minor;
  dev.multiprocessors = f.u32("multiprocessors");
  dev.global_memory_bytes = f.u64("global_memory_bytes");
  dev.core_clock_khz = f.u32("core_clock_khz");
  return dev;
}

}  // namespace pfx::trace

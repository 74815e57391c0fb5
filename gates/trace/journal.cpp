// Journal records as JSON Lines: writing (used by the injection library) and reading back.
#include "trace/journal.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fstream>

#include "trace/json_fields.h"
#include "util/error.h"

namespace pfx::trace {
namespace {

// ordered_json keeps "t" first, so a journal reads well in a pager.
std::string line(const nlohmann::ordered_json& record) {
  // Invalid UTF-8 in a kernel or range name must not stop the journal: replace it.
  return record.dump(-1, ' ', false, json::error_handler_t::replace) + "\n";
}

json id_or_null(RangeId id) { return id == kNoRange ? json(nullptr) : json(id); }

// {"t": type} followed by the record's fields.
nlohmann::ordered_json typed_record(const char* type, const nlohmann::ordered_json& fields) {
  nlohmann::ordered_json record{{"t", type}};
  for (const auto& [key, value] : fields.items()) record[key] = value;
  return record;
}

RangeId id_from(const json& record, const char* key, const std::string& where) {
  const json* v = json_optional_field(record, key, where);
  if (v == nullptr) return kNoRange;
  RangeId id = json_u64(*v, json_path(where, key));
  if (id == kNoRange) fail(json_path(where, key), ": range ids start at 1; use null for no range");
  return id;
}

}  // namespace

std::string journal_line(const JournalHeader& header) {
  return line(nlohmann::ordered_json{{"t", "header"},
                   {"schema", kJournalSchema},
                   {"tool_version", header.tool_version},
                   {"pid", header.pid},
                   {"hostname", header.hostname},
                   {"command", header.command},
                   {"options", options_to_json(header.options)},
                   {"start_ns", header.start_ns}});
}

std::string journal_line(const TrackerEvent& event) {
  if (const auto* begin = std::get_if<RangeBeginEvent>(&event)) {
    // The trace's range keys (trace_json.cpp): the begin time is the range's start_ns.
    return line(nlohmann::ordered_json{{"t", "range_begin"},
                     {"id", begin->id},
                     {"domain", begin->domain},
                     {"name", begin->name},
                     {"kind", range_kind_name(begin->kind)},
                     {"thread", begin->thread},
                     {"parent", id_or_null(begin->parent)},
                     {"start_ns", begin->ts},
                     {"payload", payload_to_json(begin->payload)}});
  }
  if (const auto* end = std::get_if<RangeEndEvent>(&event)) {
    return line(nlohmann::ordered_json{{"t", "range_end"}, {"id", end->id}, {"thread", end->thread}, {"end_ns", end->ts}});
  }
  const auto& launch = std::get<LaunchEvent>(event);
  return line(nlohmann::ordered_json{{"t", "launch"},
                   {"correlation_id", launch.correlation_id},
                   {"thread", launch.thread},
                   {"range", id_or_null(launch.range)},
                   {"api", launch.api ? json(launch.api) : json(nullptr)}});
}

std::string journal_line(const TraceKernel& k) { return line(typed_record("kernel", kernel_to_json(k))); }

std::string journal_line(const TransferEvent& t) {
  nlohmann::ordered_json record{{"t", t.is_memset ? "memset" : "memcpy"},
              {"correlation_id", t.correlation_id},
              {"bytes", t.bytes},
              {"start_ns", t.start_ns},
              {"end_ns", t.end_ns},
              {"device", t.device},
              {"stream", t.stream}};
  if (!t.is_memset) {
    record["copy_kind"] = t.copy_kind;
    record["runtime_correlation_id"] = t.runtime_correlation_id;
  }
  return line(record);
}

std::string journal_line(const TraceDevice& d) { return line(typed_record("device", device_to_json(d))); }

std::string journal_dropped_line(std::uint64_t count) { return line(nlohmann::ordered_json{{"t", "dropped"}, {"count", count}}); }

std::string journal_counters_line(std::uint64_t unmatched_range_ends) {
  return line(nlohmann::ordered_json{{"t", "counters"}, {"unmatched_range_ends", unmatched_range_ends}});
}

std::string journal_note_line(std::string_view text) { return line(nlohmann::ordered_json{{"t", "note"}, {"text", text}}); }

std::string journal_end_line(std::uint64_t ts) { return line(nlohmann::ordered_json{{"t", "end"}, {"end_ns", ts}}); }

namespace {

void read_record(const json& r, const std::string& where, JournalContents& out) {
  const FieldReader f(r, where);
  const std::string type = f.str("t");
  if (type == "header") {
    fail(where, "a second header record (two processes wrote one journal?)");
  } else if (type == "range_begin") {
    RangeBeginEvent b;
    b.id = f.u64("id");
    if (b.id == kNoRange) fail(json_path(where, "id"), ": range ids start at 1");
    b.domain = f.str("domain");
    b.name = f.str("name");
    b.kind = range_kind_from_json(f.field("kind"), f.path("kind"));
    b.thread = f.u32("thread");
    b.parent = id_from(r, "parent", where);
    b.ts = f.u64("start_ns");
    b.payload = payload_from_json(f.field("payload"), f.path("payload"));
    out.range_begins.push_back(std::move(b));
  } else if (type == "range_end") {
    const RangeId id = f.u64("id");  // first: a bad id is the error to report
    out.range_ends.push_back(RangeEndEvent{id, f.u32("thread"), f.u64("end_ns")});
  } else if (type == "launch") {
    out.launches.push_back(LaunchEvent{f.u32("correlation_id"), f.u32("thread"), id_from(r, "range", where), nullptr});
  } else if (type == "kernel") {
    TraceKernel k = kernel_from_json(r, where);
    k.thread.reset();  // attribution comes from the launch records at assembly
    k.range = kNoRange;
    out.kernels.push_back(std::move(k));
  } else if (type == "memcpy" || type == "memset") {
    TransferEvent t;
    t.is_memset = type == "memset";
    f.read({{"correlation_id", &t.correlation_id}, {"bytes", &t.bytes}, {"start_ns", &t.start_ns}, {"end_ns", &t.end_ns},
            {"device", &t.device}, {"stream", &t.stream}});
    if (!t.is_memset) f.read({{"copy_kind", &t.copy_kind}, {"runtime_correlation_id", &t.runtime_correlation_id}});
    out.transfers.push_back(std::move(t));
  } else if (type == "device") {
    out.devices.push_back(device_from_json(r, where));
  } else if (type == "dropped") {
    out.dropped_records += f.u64("count");
  } else if (type == "counters") {
    // Cumulative: the last one wins.
    out.unmatched_range_ends = f.u64("unmatched_range_ends");
  } else if (type == "note") {
    out.notes.push_back(f.str("text"));
  } else if (type == "end") {
    out.finished = true;
  } else {
    fail(json_path(where, "t"), ": unknown record type \"", type,
         "\"; expected range_begin, range_end, launch, kernel, memcpy, memset, device, dropped, counters, note or end");
  }
}

JournalHeader read_header(const json& r, const std::string& where) {
  const FieldReader f(r, where);
  const std::string type = f.str("t");
  if (type != "header") fail(where, "expected the header record first, got a \"", type, "\" record");
  const std::string schema = f.str("schema");
  if (schema != kJournalSchema) fail(json_path(where, "schema"), ": expected \"", kJournalSchema, "\", got \"", schema, "\"");
  JournalHeader h;
  h.tool_version = f.str("tool_version");
  h.pid = f.u32("pid");
  h.hostname = f.str("hostname");
  const json& command = f.field("command");
  if (!command.is_array()) fail(json_path(where, "command"), ": expected an array of strings, got ", describe_json(command));
  for (std::size_t i = 0; i < command.size(); ++i) {
    h.command.push_back(json_string(command[i], json_path(where, "command[" + std::to_string(i) + "]")));
  }
  h.options = options_from_json(f.field("options"), f.path("options"));
  h.start_ns = f.u64("start_ns");
  return h;
}

}  // namespace

JournalContents read_journal(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) fail(path.string(), ": cannot open journal: ", std::strerror(errno));
  std::vector<std::string> lines;
  std::string text;
  bool last_has_newline = true;
  while (std::getline(in, text)) {
    last_has_newline = !in.eof();
    lines.push_back(std::move(text));
  }
  JournalContents out;
  bool have_header = false;
  for (std::size_t i = 0; i < lines.size(); ++i) {
    const std::string where = path.string() + ": line " + std::to_string(i + 1) + ": ";
    if (lines[i].empty()) continue;
    const bool is_last = i + 1 == lines.size();
    json record = json::parse(lines[i], nullptr, /*allow_exceptions=*/false);
    if (record.is_discarded()) {
      if (is_last && !out.finished && have_header) {
        // The process died in the middle of a write: everything before this line is whole.
        out.notes.push_back("journal line " + std::to_string(i + 1) +
                            " was cut short (the traced process died while writing it) and was dropped");
        break;
      }
      fail(where, "not valid JSON", is_last && !last_has_newline ? " (cut short)" : "");
    }
    if (!have_header) {
      out.header = read_header(record, where);
      have_header = true;
      continue;
    }
    if (out.finished) fail(where, "record after the \"end\" record");
    read_record(record, where, out);
  }
  if (!have_header) fail(path.string(), ": empty journal (no header record)");
  return out;
}

JournalWriter::~JournalWriter() { close(); }

std::string JournalWriter::open(const std::filesystem::path& path) {
  std::lock_guard lock(mutex_);
  if (fd_ >= 0) ::close(fd_);
  failed_ = false;
  fd_ = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_APPEND | O_CLOEXEC, 0644);
  if (fd_ < 0) {
    failed_ = true;
    return path.string() + ": cannot create journal: " + std::strerror(errno);
  }
  return "";
}

std::string JournalWriter::append(std::string_view text) {
  std::lock_guard lock(mutex_);
  if (fd_ < 0 || failed_) return "";
  const char* p = text.data();
  std::size_t left = text.size();
  while (left > 0) {
    ssize_t n = ::write(fd_, p, left);
    if (n < 0) {
      if (errno == EINTR) continue;
      failed_ = true;
      return std::string("journal write failed: ") + std::strerror(errno);
    }
    p += n;
    left -= static_cast<std::size_t>(n);
  }
  return "";
}

void JournalWriter::close() {
  std::lock_guard lock(mutex_);
  if (fd_ >= 0) ::close(fd_);
  fd_ = -1;
}

bool JournalWriter::is_open() const {
  std::lock_guard lock(mutex_);
  return fd_ >= 0 && !failed_;
}

}  // namespace pfx::trace

// The bench writers (see bench_output.h). Layouts follow llama-bench's printers
// (tools/llama-bench/llama-bench.cpp: csv_printer, json_printer, jsonl_printer, markdown_printer,
// sql_printer); values come from bench_fields(), so every format carries the same columns.
#include "bench_output.h"

#include <cstdio>
#include <cstdlib>
#include <nlohmann/json.hpp>
#include <sstream>

#include "cli_common.h"

namespace pfx::cli {

namespace {

using ordered = nlohmann::ordered_json;

ordered typed_value(const BenchField& f, const std::string& text) {
  switch (f.type) {
    case FieldType::String: return text;
    case FieldType::Bool: return text != "0";
    case FieldType::Int: return std::strtoll(text.c_str(), nullptr, 10);
    case FieldType::Float: return std::strtod(text.c_str(), nullptr);
  }
  return text;
}

// One test as llama-bench's JSON object: every column, then samples_ns and samples_ts.
ordered row_object(const BenchRun& run, const BenchTest& t) {
  ordered o;
  for (const auto& f : bench_fields()) o[f.name] = typed_value(f, f.value(run, t));
  o["samples_ns"] = t.samples_ns;
  o["samples_ts"] = t.samples_ts();
  return o;
}

std::string csv_quoted(const std::string& v) {
  std::string q = "\"";
  for (char c : v) q += c == '"' ? std::string("\"\"") : std::string(1, c);
  return q + "\"";
}

std::string sql_quoted(const std::string& v) {
  std::string q = "'";
  for (char c : v) q += c == '\'' ? std::string("''") : std::string(1, c);
  return q + "'";
}

const char* sql_type(FieldType t) {
  switch (t) {
    case FieldType::String: return "TEXT";
    case FieldType::Bool:
    case FieldType::Int: return "INTEGER";
    case FieldType::Float: return "REAL";
  }
  return "TEXT";
}

std::string printf_text(const char* fmt, double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, fmt, v);
  return buf;
}

void write_markdown(std::ostream& out, const BenchRun& run) {
  const bool gpu = run.backend == "cuda";
  // Column: title, width (negative: left-aligned, as llama-bench's get_field_width), cell.
  struct Column {
    std::string title;
    int width;
    std::function<std::string(const BenchTest&)> cell;
  };
  const double gib = 1024.0 * 1024.0 * 1024.0;
  std::vector<Column> cols = {
      {"model", -30, [&](const BenchTest&) { return run.model_type; }},
      {"size", 10, [&](const BenchTest&) {
         return run.model_size < gib ? printf_text("%.2f MiB", static_cast<double>(run.model_size) / 1024.0 / 1024.0)
                                     : printf_text("%.2f GiB", static_cast<double>(run.model_size) / gib);
       }},
      {"params", 10, [&](const BenchTest&) {
         return run.model_n_params < 1000000000ull ? printf_text("%.2f M", static_cast<double>(run.model_n_params) / 1e6)
                                                   : printf_text("%.2f B", static_cast<double>(run.model_n_params) / 1e9);
       }},
      {"backend", -10, [&](const BenchTest&) { return std::string(gpu ? "CUDA" : "CPU"); }},
  };
  if (gpu) cols.push_back({"ngl", 3, [](const BenchTest&) { return std::string("99"); }});
  else cols.push_back({"threads", 7, [&](const BenchTest&) { return std::to_string(run.n_threads); }});
  cols.push_back({"path", -9, [&](const BenchTest&) { return run.path; }});
  cols.push_back({"gemm", -9, [&](const BenchTest&) { return run.gemm; }});
  cols.push_back({"test", 15, [](const BenchTest& t) { return t.name(); }});
  cols.push_back({"t/s", 20, [](const BenchTest& t) {
                    char buf[64];
                    std::snprintf(buf, sizeof buf, "%.2f ± %.2f", t.avg_ts(), t.stddev_ts());
                    return std::string(buf);
                  }});
  // Pads to |width| display columns (the ± is two bytes, one column).
  auto padded = [](const std::string& text, int width) {
    size_t shown = 0;
    for (unsigned char c : text) shown += (c & 0xC0) != 0x80;
    const size_t w = static_cast<size_t>(std::abs(width));
    const std::string pad(shown < w ? w - shown : 0, ' ');
    return width < 0 ? text + pad : pad + text;
  };
  out << "|";
  for (const auto& c : cols) out << " " << padded(c.title, c.width) << " |";
  out << "\n|";
  for (const auto& c : cols) out << " " << std::string(static_cast<size_t>(std::abs(c.width)) - 1, '-') << (c.width > 0 ? ":" : "-") << " |";
  out << "\n";
  for (const auto& t : run.tests) {
    out << "|";
    for (const auto& c : cols) out << " " << padded(c.cell(t), c.width) << " |";
    out << "\n";
  }
  out << "\nbuild: " << run.build_commit << " (" << run.build_number << ")\n";
}

ordered prefill_object(const BenchRun& run) {
  ordered device;
  if (run.backend == "cuda")
    device = {{"name", run.gpu_info}, {"sm_count", run.sm_count}, {"sm_clock_mhz", run.sm_clock_mhz},
              {"driver", run.driver_version}, {"runtime", run.runtime_version}};
  else
    device = {{"name", run.cpu_info}, {"threads", run.n_threads}};
  ordered results = ordered::array();
  for (const auto& t : run.tests) {
    ordered r;
    // prefill's own fields first (what the gates and scripts/gpu read), then llama-bench's.
    std::vector<double> ms;
    for (uint64_t ns : t.samples_ns) ms.push_back(static_cast<double>(ns) / 1e6);
    r["test"] = t.name();
    r["reps"] = run.repetitions;
    r["warmup"] = run.warmup;
    r["samples_tps"] = t.samples_ts();
    r["samples_ms"] = ms;
    r["mean_tps"] = t.avg_ts();
    r["stddev_tps"] = t.stddev_ts();
    const ordered llama = row_object(run, t);
    for (auto it = llama.begin(); it != llama.end(); ++it) r[it.key()] = it.value();
    results.push_back(r);
  }
  return {{"schema", kBenchSchema}, {"model", run.model_filename}, {"backend", run.backend}, {"path", run.path},
          {"gemm", run.gemm},        {"fallbacks", run.fallbacks},     {"device", device},
          {"decode_graph", run.decode_graph}, {"decode_graph_replays", run.decode_graph_replays},
          {"weight_matrix_bytes", run.weight_matrix_bytes},
          {"build", {{"commit", run.commit}, {"build_number", run.build_number}}},
          {"results", results}};
}

}  // namespace

BenchFormat parse_bench_format(const std::string& name) {
  if (name == "md") return BenchFormat::Markdown;
  if (name == "json") return BenchFormat::Json;
  if (name == "jsonl") return BenchFormat::Jsonl;
  if (name == "csv") return BenchFormat::Csv;
  if (name == "sql") return BenchFormat::Sql;
  throw UsageError("--output: '" + name + "' is not a format (expected md, json, jsonl, csv or sql)");
}

void write_bench(std::ostream& out, const BenchRun& run, BenchFormat format) {
  const auto& fields = bench_fields();
  switch (format) {
    case BenchFormat::Markdown:
      write_markdown(out, run);
      return;
    case BenchFormat::Json: {
      ordered all = ordered::array();
      for (const auto& t : run.tests) all.push_back(row_object(run, t));
      out << all.dump(2) << "\n";
      return;
    }
    case BenchFormat::Jsonl:
      for (const auto& t : run.tests) out << row_object(run, t).dump() << "\n";
      return;
    case BenchFormat::Csv:
      for (size_t i = 0; i < fields.size(); ++i) out << (i ? "," : "") << fields[i].name;
      out << "\n";
      for (const auto& t : run.tests) {
        for (size_t i = 0; i < fields.size(); ++i) out << (i ? "," : "") << csv_quoted(fields[i].value(run, t));
        out << "\n";
      }
      return;
    case BenchFormat::Sql: {
      out << "CREATE TABLE IF NOT EXISTS llama_bench (\n";
      for (size_t i = 0; i < fields.size(); ++i)
        out << "  " << fields[i].name << " " << sql_type(fields[i].type) << (i + 1 < fields.size() ? "," : "") << "\n";
      out << ");\n\n";
      std::string names;
      for (size_t i = 0; i < fields.size(); ++i) names += (i ? ", " : "") + std::string(fields[i].name);
      for (const auto& t : run.tests) {
        out << "INSERT INTO llama_bench (" << names << ") VALUES (";
        for (size_t i = 0; i < fields.size(); ++i) out << (i ? ", " : "") << sql_quoted(fields[i].value(run, t));
        out << ");\n";
      }
      return;
    }
    case BenchFormat::PrefillJson:
      out << prefill_object(run).dump(2) << "\n";
      return;
  }
}

}  // namespace pfx::cli

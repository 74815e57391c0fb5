// `prefill bench` output formats: llama-bench's five (-o md|json|jsonl|csv|sql, the same columns
// and types, so tools written for llama-bench read them) and prefill's own JSON object (--json),
// the shape the gates and the side-by-side script read: {"results": [{"test", "mean_tps",
// "stddev_tps", "samples_tps", "samples_ms", ...every llama-bench column...}], "device", ...}.
#pragma once
#include <ostream>
#include <string>

#include "bench_record.h"

namespace pfx::cli {

enum class BenchFormat { Markdown, Json, Jsonl, Csv, Sql, PrefillJson };

// "md", "json", "jsonl", "csv", "sql"; throws UsageError naming the accepted ones.
BenchFormat parse_bench_format(const std::string& name);
void write_bench(std::ostream& out, const BenchRun& run, BenchFormat format);

}  // namespace pfx::cli

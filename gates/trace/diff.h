// `trace diff A B`: per kernel name and per role, A's and B's GPU time, Δns and Δ%, sorted by |Δns|;
// kernels only in B are "added", only in A "removed".
//
// When both traces hold the busy range (`prefill`), times are per pass (total / number of
// `prefill` ranges), so a baseline run with 3 passes compares fairly with a candidate run with 5;
// otherwise raw totals are compared and the diff says so.
#pragma once
#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "trace/summary.h"

namespace pfx::trace {

struct DiffRow {
  enum class Status { changed, same, added, removed };
  std::string key;
  Status status = Status::changed;
  double a_ns = 0;  // normalized (per pass or total); 0 when absent
  double b_ns = 0;
  double a_count = 0;  // kernels, normalized like the times (per pass or total)
  double b_count = 0;
  double delta_ns = 0;                 // b - a
  std::optional<double> delta_percent; // 100 * (b - a) / a; empty when a is 0
};

struct TraceDiff {
  std::string a_source, b_source;
  bool per_pass = false;  // false: raw totals
  std::string busy_range;
  std::uint64_t a_passes = 0, b_passes = 0;
  double a_kernel_ns = 0, b_kernel_ns = 0;  // normalized totals
  double a_busy_ns = 0, b_busy_ns = 0;      // normalized busy unions (0 without the busy range)
  std::vector<DiffRow> kernels;  // by |delta_ns|, largest first
  std::vector<DiffRow> roles;    // exclusive time per role, same order
  std::vector<std::string> warnings;
};

TraceDiff diff_summaries(const Summary& a, const Summary& b);

std::string format_diff_text(const TraceDiff& diff, std::size_t top = 0);
nlohmann::ordered_json diff_to_json(const TraceDiff& diff);

}  // namespace pfx::trace

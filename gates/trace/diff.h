// `trace diff A B`: per kernel name and per role, A's and B's GPU time, Δns and Δ%, sorted by |Δns|;
// kernels only in B are "added", only in A "removed". Roles carry the FLOPs of their ranges (NVTX
// uint64 payloads, DESIGN.md seam 3) and so TFLOP/s per side; bytes where a caller knows them
// (the trace records none), and so GB/s.
//
// Roles the two sides launch in other groupings (Q, K and V in one launch on one side, "attn_q+
// attn_k+attn_v", one launch each on the other) are one row, their union, each side the sum of its
// members (merge rule in diff.cpp); sides that group alike keep their rows.
//
// When both traces hold the busy range (`prefill`), times are per pass (total / number of
// `prefill` ranges), so a baseline run with 3 passes compares fairly with a candidate run with 5;
// otherwise raw totals are compared and the diff says so.
//
// This is the one place a baseline/candidate trace difference is computed: `kerneltrace diff`
// (one repetition) and the timing gate (`combine_repetitions` of its alternating runs) both use it.
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
  double a_ns = 0;  // normalized (per pass or total); 0 when absent; the median over repetitions
  double b_ns = 0;
  double a_count = 0;  // kernels, normalized like the times (per pass or total)
  double b_count = 0;
  double delta_ns = 0;                 // b - a
  std::optional<double> delta_percent; // 100 * (b - a) / a; empty when a is 0
  std::vector<double> a_samples_ns;    // one time per repetition (0 where the key was absent)
  std::vector<double> b_samples_ns;
  double noise_percent = 0;  // run-to-run spread: the larger side's (max - min) / median, in percent
  // Roles: FLOPs of the ranges that carried a uint64 payload and the inclusive kernel time of those
  // ranges, normalized like the times (0 where none did).
  double a_flops = 0, b_flops = 0;
  double a_flop_ns = 0, b_flop_ns = 0;
  // Bytes the role moves per pass, where the caller knows them (the same model on both sides).
  std::optional<double> bytes;
  // A row merged from roles the two sides group differently: those roles, both sides' (sorted);
  // empty for every other row. Whatever is known per role (e.g. whether its code changed) must
  // hold for every member to hold for the row.
  std::vector<std::string> members;

  std::optional<double> a_tflops() const { return tflops(a_flops, a_flop_ns); }
  std::optional<double> b_tflops() const { return tflops(b_flops, b_flop_ns); }
  std::optional<double> a_gbps() const { return gbps(a_ns); }  // bytes / own kernel time
  std::optional<double> b_gbps() const { return gbps(b_ns); }

 private:
  // FLOP per ns is GFLOP/s; / 1000 gives TFLOP/s. Bytes per ns is GB/s.
  static std::optional<double> tflops(double flops, double ns) {
    return flops > 0 && ns > 0 ? std::optional<double>(flops / ns / 1000.0) : std::nullopt;
  }
  std::optional<double> gbps(double ns) const { return bytes && ns > 0 ? std::optional<double>(*bytes / ns) : std::nullopt; }
};

struct TraceDiff {
  std::string a_source, b_source;
  bool per_pass = false;  // false: raw totals
  std::string busy_range;
  std::uint64_t a_passes = 0, b_passes = 0;
  double a_kernel_ns = 0, b_kernel_ns = 0;  // normalized totals (medians over repetitions)
  double a_busy_ns = 0, b_busy_ns = 0;      // normalized busy unions (0 without the busy range)
  std::size_t repetitions = 1;
  std::vector<DiffRow> kernels;  // by |delta_ns|, largest first
  std::vector<DiffRow> roles;    // exclusive time per role, same order
  std::vector<std::string> warnings;
};

// The JSON keys of a DiffRow in one vocabulary: `kerneltrace diff --json` says a/b
// (kTraceDiffKeys), the timing gate's result baseline/candidate (kGateDiffKeys); the mapping is
// one (diff_row_to_json / diff_row_from_json), the key names two (docs/schemas/kerneltrace.md).
struct DiffRowKeys {
  const char *a_ns, *b_ns, *a_count, *b_count, *delta_percent, *a_samples, *b_samples, *noise;
  const char *a_flops, *b_flops, *a_flop_ns, *b_flop_ns, *a_tflops, *b_tflops, *a_gbps, *b_gbps;
};
inline constexpr DiffRowKeys kTraceDiffKeys{"a_ns", "b_ns", "a_count", "b_count", "delta_percent", "a_samples_ns", "b_samples_ns",
                                            "noise_percent", "a_flops", "b_flops", "a_flop_ns", "b_flop_ns", "a_tflops", "b_tflops",
                                            "a_gbps", "b_gbps"};
inline constexpr DiffRowKeys kGateDiffKeys{"baseline_ns", "candidate_ns", "baseline_count", "candidate_count", "delta_pct",
                                           "baseline_samples_ns", "candidate_samples_ns", "noise_pct", "baseline_flops",
                                           "candidate_flops", "baseline_flop_ns", "candidate_flop_ns", "baseline_tflops",
                                           "candidate_tflops", "baseline_gbps", "candidate_gbps"};
// `rates`: also FLOPs, TFLOP/s, bytes and GB/s (roles).
nlohmann::ordered_json diff_row_to_json(const DiffRow& row, const DiffRowKeys& keys, bool rates);
// Throws pfx::Error naming `where` and the field.
DiffRow diff_row_from_json(const nlohmann::json& j, const DiffRowKeys& keys, const std::string& where);

// "changed", "same", "added", "removed" (the JSON and text forms); nullopt for any other name.
const char* status_name(DiffRow::Status s);
std::optional<DiffRow::Status> status_from_name(const std::string& name);

TraceDiff diff_summaries(const Summary& a, const Summary& b);
// Repetitions of one comparison (baseline and candidate traced alternately): per key the median of
// each side over the repetitions (a repetition where the key is absent counts 0 ns), Δ from those
// medians, the samples and their noise; totals are medians too. Sources, passes and the
// normalization are the first repetition's; warnings are collected once each. No repetitions: an
// empty diff.
TraceDiff combine_repetitions(const std::vector<TraceDiff>& reps);

// `top` limits both tables, roles and kernels, to their first `top` rows by |delta| (0: all).
std::string format_diff_text(const TraceDiff& diff, std::size_t top = 0);
nlohmann::ordered_json diff_to_json(const TraceDiff& diff);

}  // namespace pfx::trace

// Difference of two trace summaries per kernel and per role (rules in diff.h).
#include "trace/diff.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <sstream>

#include "trace/text_format.h"

namespace pfx::trace {
namespace {

struct Side {
  double ns = 0;
  double count = 0;
  bool present = false;
};

std::vector<DiffRow> diff_rows(const std::map<std::string, Side>& a, const std::map<std::string, Side>& b) {
  std::map<std::string, std::pair<Side, Side>> joined;
  for (const auto& [k, v] : a) joined[k].first = v;
  for (const auto& [k, v] : b) joined[k].second = v;
  std::vector<DiffRow> rows;
  for (const auto& [key, sides] : joined) {
    DiffRow row;
    row.key = key;
    row.a_ns = sides.first.ns;
    row.b_ns = sides.second.ns;
    row.a_count = sides.first.count;
    row.b_count = sides.second.count;
    row.delta_ns = row.b_ns - row.a_ns;
    if (!sides.first.present) row.status = DiffRow::Status::added;
    else if (!sides.second.present) row.status = DiffRow::Status::removed;
    else if (row.delta_ns == 0) row.status = DiffRow::Status::same;
    if (row.a_ns > 0) row.delta_percent = 100.0 * row.delta_ns / row.a_ns;
    rows.push_back(std::move(row));
  }
  std::stable_sort(rows.begin(), rows.end(), [](const DiffRow& x, const DiffRow& y) {
    double ax = std::fabs(x.delta_ns), ay = std::fabs(y.delta_ns);
    if (ax != ay) return ax > ay;
    return x.key < y.key;
  });
  return rows;
}

const char* status_name(DiffRow::Status s) {
  switch (s) {
    case DiffRow::Status::changed: return "changed";
    case DiffRow::Status::same: return "same";
    case DiffRow::Status::added: return "added";
    case DiffRow::Status::removed: return "removed";
  }
  return "changed";
}

std::string ns_text(double ns) { return with_commas(static_cast<std::uint64_t>(std::llround(std::max(0.0, ns)))); }
std::string delta_text(double ns) { return with_commas_signed(static_cast<std::int64_t>(std::llround(ns))); }

// Whole numbers plainly ("4"), fractions of a per-pass average with one decimal ("1.5").
std::string count_text(double n) {
  if (n == std::floor(n)) return with_commas(static_cast<std::uint64_t>(n));
  return fixed(n, 1);
}

}  // namespace

TraceDiff diff_summaries(const Summary& a, const Summary& b) {
  TraceDiff d;
  d.a_source = a.source;
  d.b_source = b.source;
  d.busy_range = a.busy.range_name;
  d.a_passes = a.busy.passes;
  d.b_passes = b.busy.passes;
  d.per_pass = a.busy.passes > 0 && b.busy.passes > 0;
  if (!d.per_pass && (a.busy.passes > 0 || b.busy.passes > 0)) {
    d.warnings.push_back("only one trace has '" + d.busy_range + "' ranges; comparing raw totals");
  }
  if (!a.complete) d.warnings.push_back("A is incomplete (the traced process did not finish the trace)");
  if (!b.complete) d.warnings.push_back("B is incomplete (the traced process did not finish the trace)");
  const double a_div = d.per_pass ? static_cast<double>(a.busy.passes) : 1.0;
  const double b_div = d.per_pass ? static_cast<double>(b.busy.passes) : 1.0;
  d.a_kernel_ns = static_cast<double>(a.total_kernel_ns) / a_div;
  d.b_kernel_ns = static_cast<double>(b.total_kernel_ns) / b_div;
  d.a_busy_ns = static_cast<double>(a.busy.union_ns) / a_div;
  d.b_busy_ns = static_cast<double>(b.busy.union_ns) / b_div;

  std::map<std::string, Side> ka, kb, ra, rb;
  auto side = [](std::uint64_t ns, std::uint64_t count, double div) {
    return Side{static_cast<double>(ns) / div, static_cast<double>(count) / div, true};
  };
  for (const auto& k : a.kernels) ka[k.name] = side(k.total_ns, k.count, a_div);
  for (const auto& k : b.kernels) kb[k.name] = side(k.total_ns, k.count, b_div);
  for (const auto& r : a.roles) ra[r.key] = side(r.exclusive_ns, r.kernels, a_div);
  for (const auto& r : b.roles) rb[r.key] = side(r.exclusive_ns, r.kernels, b_div);
  d.kernels = diff_rows(ka, kb);
  d.roles = diff_rows(ra, rb);
  return d;
}

std::string format_diff_text(const TraceDiff& d, std::size_t top) {
  std::ostringstream out;
  out << "A: " << d.a_source << "\nB: " << d.b_source << "\n";
  if (d.per_pass) {
    out << "times and counts are per '" << d.busy_range << "' pass (A: " << d.a_passes << " passes, B: " << d.b_passes
        << " passes)\n";
  } else {
    out << "times are totals over each whole trace\n";
  }
  for (const std::string& w : d.warnings) out << "warning: " << w << "\n";
  auto pct = [](double a, double b) -> std::optional<double> {
    if (a <= 0) return std::nullopt;
    return 100.0 * (b - a) / a;
  };
  out << "kernel time: " << ns_text(d.a_kernel_ns) << " -> " << ns_text(d.b_kernel_ns) << " ns ("
      << delta_text(d.b_kernel_ns - d.a_kernel_ns) << " ns, " << signed_percent(pct(d.a_kernel_ns, d.b_kernel_ns)) << ")\n";
  if (d.a_busy_ns > 0 || d.b_busy_ns > 0) {
    out << "busy in '" << d.busy_range << "': " << ns_text(d.a_busy_ns) << " -> " << ns_text(d.b_busy_ns) << " ns ("
        << delta_text(d.b_busy_ns - d.a_busy_ns) << " ns, " << signed_percent(pct(d.a_busy_ns, d.b_busy_ns)) << ")\n";
  }
  auto table = [&](const char* title, const char* key_header, const std::vector<DiffRow>& rows, std::size_t limit) {
    out << "\n" << title << (limit > 0 && rows.size() > limit ? " (top " + std::to_string(limit) + ")" : "") << "\n";
    TextTable t({key_header, "A ns", "B ns", "delta ns", "delta %", "A n", "B n", "status"});
    std::size_t shown = 0;
    for (const DiffRow& r : rows) {
      if (limit > 0 && shown++ >= limit) break;
      std::string percent_cell = r.status == DiffRow::Status::added ? "new"
                        : r.delta_percent                    ? signed_percent(r.delta_percent)
                                                             : "-";
      t.add({r.key, ns_text(r.a_ns), ns_text(r.b_ns), delta_text(r.delta_ns), percent_cell, count_text(r.a_count),
             count_text(r.b_count), status_name(r.status)});
    }
    out << t.str();
  };
  if (!d.roles.empty()) table("by role (sorted by |delta|)", "role", d.roles, 0);
  table("by kernel (sorted by |delta|)", "kernel", d.kernels, top);
  return out.str();
}

nlohmann::ordered_json diff_to_json(const TraceDiff& d) {
  auto rows = [](const std::vector<DiffRow>& in) {
    nlohmann::ordered_json out = nlohmann::ordered_json::array();
    for (const DiffRow& r : in) {
      out.push_back({{"key", r.key},
                     {"status", status_name(r.status)},
                     {"a_ns", r.a_ns},
                     {"b_ns", r.b_ns},
                     {"a_count", r.a_count},
                     {"b_count", r.b_count},
                     {"delta_ns", r.delta_ns},
                     {"delta_percent", r.delta_percent ? nlohmann::ordered_json(*r.delta_percent) : nlohmann::ordered_json(nullptr)}});
    }
    return out;
  };
  return nlohmann::ordered_json{{"schema", "kerneltrace-diff/1"},
                        {"a", d.a_source},
                        {"b", d.b_source},
                        {"normalization", d.per_pass ? "per_pass" : "total"},
                        {"busy_range", d.busy_range},
                        {"a_passes", d.a_passes},
                        {"b_passes", d.b_passes},
                        {"a_kernel_ns", d.a_kernel_ns},
                        {"b_kernel_ns", d.b_kernel_ns},
                        {"a_busy_ns", d.a_busy_ns},
                        {"b_busy_ns", d.b_busy_ns},
                        {"kernels", rows(d.kernels)},
                        {"roles", rows(d.roles)},
                        {"warnings", d.warnings}};
}

}  // namespace pfx::trace

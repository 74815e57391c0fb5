// Difference of two trace summaries per kernel and per role (rules in diff.h).
#include "trace/diff.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <set>
#include <sstream>

#include "metrics/sample_stats.h"
#include "trace/roles.h"
#include "util/enum_names.h"
#include "util/error.h"
#include "util/json_read.h"
#include "util/text_format.h"

namespace pfx::trace {
namespace {

// One key on one side in one repetition.
struct Sample {
  double ns = 0, count = 0, flops = 0, flop_ns = 0;
  bool present = false;
  std::vector<std::string> members;  // a merged role's member roles (DiffRow::members)
};
// Per key, the samples of each side, one per repetition (absent: a zero sample).
using Samples = std::map<std::string, std::pair<std::vector<Sample>, std::vector<Sample>>>;

std::vector<double> times(const std::vector<Sample>& v) {
  std::vector<double> out;
  for (const Sample& s : v) out.push_back(s.ns);
  return out;
}
double median_of(const std::vector<Sample>& v, double Sample::*field) {
  std::vector<double> x;
  for (const Sample& s : v) x.push_back(s.*field);
  return median(std::move(x));
}
bool any_present(const std::vector<Sample>& v) {
  return std::any_of(v.begin(), v.end(), [](const Sample& s) { return s.present; });
}

// The one computation of a diff row: medians of each side, Δ, Δ%, status, noise; sorted by |Δ|.
std::vector<DiffRow> rows_from_samples(const Samples& samples) {
  std::vector<DiffRow> rows;
  for (const auto& [key, sides] : samples) {
    const auto& [a, b] = sides;
    DiffRow row;
    row.key = key;
    row.a_samples_ns = times(a);
    row.b_samples_ns = times(b);
    row.a_ns = median(row.a_samples_ns);
    row.b_ns = median(row.b_samples_ns);
    row.a_count = median_of(a, &Sample::count);
    row.b_count = median_of(b, &Sample::count);
    row.a_flops = median_of(a, &Sample::flops);
    row.b_flops = median_of(b, &Sample::flops);
    row.a_flop_ns = median_of(a, &Sample::flop_ns);
    row.b_flop_ns = median_of(b, &Sample::flop_ns);
    row.delta_ns = row.b_ns - row.a_ns;
    if (!any_present(a)) row.status = DiffRow::Status::added;
    else if (!any_present(b)) row.status = DiffRow::Status::removed;
    else if (row.delta_ns == 0) row.status = DiffRow::Status::same;
    if (row.a_ns > 0) row.delta_percent = 100.0 * row.delta_ns / row.a_ns;
    row.noise_percent = std::max(spread_pct(row.a_samples_ns, row.a_ns), spread_pct(row.b_samples_ns, row.b_ns));
    for (const auto* side : {&a, &b})
      for (const Sample& s : *side)
        if (row.members.empty()) row.members = s.members;
    rows.push_back(std::move(row));
  }
  std::stable_sort(rows.begin(), rows.end(), [](const DiffRow& x, const DiffRow& y) {
    double ax = std::fabs(x.delta_ns), ay = std::fabs(y.delta_ns);
    if (ax != ay) return ax > ay;
    return x.key < y.key;
  });
  return rows;
}

// Adds repetition `rep` of `reps` to `samples`: every key gets a sample on both sides.
void add_repetition(Samples& samples, const std::map<std::string, Sample>& a, const std::map<std::string, Sample>& b,
                    std::size_t rep, std::size_t reps) {
  for (const auto* side : {&a, &b})
    for (const auto& [key, unused] : *side) {
      auto& [sa, sb] = samples[key];
      sa.resize(reps);
      sb.resize(reps);
    }
  for (auto& [key, sides] : samples) {
    if (auto it = a.find(key); it != a.end()) sides.first[rep] = it->second;
    if (auto it = b.find(key); it != b.end()) sides.second[rep] = it->second;
  }
}

std::map<std::string, Sample> side_of(const std::vector<DiffRow>& rows, bool b) {
  std::map<std::string, Sample> out;
  for (const DiffRow& r : rows) {
    const bool present = b ? r.status != DiffRow::Status::removed : r.status != DiffRow::Status::added;
    if (!present) continue;
    out[r.key] = b ? Sample{r.b_ns, r.b_count, r.b_flops, r.b_flop_ns, true, r.members}
                   : Sample{r.a_ns, r.a_count, r.a_flops, r.a_flop_ns, true, r.members};
  }
  return out;
}

// Roles the two builds launch in other groupings (one kernel for Q, K and V on one side, one per
// matrix on the other: ranges named "attn_q+attn_k+attn_v" vs "attn_q", "attn_k", "attn_v") are
// compared as their union, one row named by the parts joined with '+' (in the order of the widest
// group), each side the sum of its members. Roles share a union when their '+'-separated parts
// overlap; a union is merged only where the two sides hold different role names in it, so builds
// that group alike keep their rows.
void merge_regrouped_roles(std::map<std::string, Sample>& a, std::map<std::string, Sample>& b) {
  std::map<std::string, std::string> parent;  // union-find over part names
  const auto find = [&](std::string x) {
    while (parent.at(x) != x) x = parent.at(x) = parent.at(parent.at(x));
    return x;
  };
  for (const auto* side : {&a, &b})
    for (const auto& [key, unused] : *side) {
      const std::vector<std::string> parts = role_parts(key);
      for (const std::string& p : parts) parent.emplace(p, p);
      for (const std::string& p : parts) parent.at(find(p)) = find(parts.front());
    }
  struct Union {
    std::set<std::string> a_keys, b_keys;
  };
  std::map<std::string, Union> unions;
  for (const auto& [key, unused] : a) unions[find(role_parts(key).front())].a_keys.insert(key);
  for (const auto& [key, unused] : b) unions[find(role_parts(key).front())].b_keys.insert(key);
  for (const auto& [root, u] : unions) {
    std::set<std::string> keys = u.a_keys;
    keys.insert(u.b_keys.begin(), u.b_keys.end());
    if (u.a_keys == u.b_keys || keys.size() < 2) continue;
    std::vector<std::string> by_width(keys.begin(), keys.end());
    std::stable_sort(by_width.begin(), by_width.end(),
                     [&](const std::string& x, const std::string& y) { return role_parts(x).size() > role_parts(y).size(); });
    std::vector<std::string> parts;
    for (const std::string& key : by_width)
      for (const std::string& p : role_parts(key))
        if (std::find(parts.begin(), parts.end(), p) == parts.end()) parts.push_back(p);
    std::string merged;
    for (const std::string& p : parts) merged += (merged.empty() ? "" : "+") + p;
    for (auto* side : {&a, &b}) {
      Sample sum;
      sum.members.assign(keys.begin(), keys.end());
      for (auto it = side->begin(); it != side->end();) {
        if (!keys.count(it->first)) {
          ++it;
          continue;
        }
        const Sample& s = it->second;
        sum.ns += s.ns, sum.count += s.count, sum.flops += s.flops, sum.flop_ns += s.flop_ns;
        sum.present = sum.present || s.present;
        it = side->erase(it);
      }
      if (sum.present) (*side)[merged] = sum;
    }
  }
}

std::string ns_text(double ns) { return with_commas(static_cast<std::uint64_t>(std::llround(std::max(0.0, ns)))); }
std::string delta_text(double ns) { return with_commas_signed(static_cast<std::int64_t>(std::llround(ns))); }

// Whole numbers plainly ("4"), fractions of a per-pass average with one decimal ("1.5").
std::string count_text(double n) {
  if (n == std::floor(n)) return with_commas(static_cast<std::uint64_t>(n));
  return fixed(n, 1);
}

}  // namespace

namespace {
constexpr EnumName<DiffRow::Status> kStatusNames[] = {{DiffRow::Status::changed, "changed"},
                                                      {DiffRow::Status::same, "same"},
                                                      {DiffRow::Status::added, "added"},
                                                      {DiffRow::Status::removed, "removed"}};
}  // namespace

const char* status_name(DiffRow::Status s) { return name_of(kStatusNames, s, "changed"); }

std::optional<DiffRow::Status> status_from_name(const std::string& name) { return value_named(kStatusNames, name); }

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

  std::map<std::string, Sample> ka, kb, ra, rb;
  for (const auto& k : a.kernels) ka[k.name] = Sample{k.total_ns / a_div, k.count / a_div, 0, 0, true};
  for (const auto& k : b.kernels) kb[k.name] = Sample{k.total_ns / b_div, k.count / b_div, 0, 0, true};
  for (const auto& r : a.roles) ra[r.key] = Sample{r.exclusive_ns / a_div, r.kernels / a_div, r.flops / a_div, r.flop_time_ns / a_div, true};
  for (const auto& r : b.roles) rb[r.key] = Sample{r.exclusive_ns / b_div, r.kernels / b_div, r.flops / b_div, r.flop_time_ns / b_div, true};
  merge_regrouped_roles(ra, rb);
  Samples ks, rs;
  add_repetition(ks, ka, kb, 0, 1);
  add_repetition(rs, ra, rb, 0, 1);
  d.kernels = rows_from_samples(ks);
  d.roles = rows_from_samples(rs);
  return d;
}

TraceDiff combine_repetitions(const std::vector<TraceDiff>& reps) {
  if (reps.empty()) return TraceDiff{};
  // The sources, the busy range and the pass counts are the first repetition's; the times, rows
  // and warnings are made anew from all of them below.
  TraceDiff d = reps.front();
  d.repetitions = reps.size();
  d.warnings.clear();
  std::vector<double> ak, bk, ab, bb;
  Samples ks, rs;
  for (std::size_t i = 0; i < reps.size(); ++i) {
    const TraceDiff& r = reps[i];
    ak.push_back(r.a_kernel_ns);
    bk.push_back(r.b_kernel_ns);
    ab.push_back(r.a_busy_ns);
    bb.push_back(r.b_busy_ns);
    add_repetition(ks, side_of(r.kernels, false), side_of(r.kernels, true), i, reps.size());
    add_repetition(rs, side_of(r.roles, false), side_of(r.roles, true), i, reps.size());
    for (const std::string& w : r.warnings)
      if (std::find(d.warnings.begin(), d.warnings.end(), w) == d.warnings.end()) d.warnings.push_back(w);
  }
  d.a_kernel_ns = median(ak);
  d.b_kernel_ns = median(bk);
  d.a_busy_ns = median(ab);
  d.b_busy_ns = median(bb);
  d.kernels = rows_from_samples(ks);
  d.roles = rows_from_samples(rs);
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
  auto change = [](double a, double b) -> std::optional<double> {
    if (a <= 0) return std::nullopt;
    return 100.0 * (b - a) / a;
  };
  out << "kernel time: " << ns_text(d.a_kernel_ns) << " -> " << ns_text(d.b_kernel_ns) << " ns ("
      << delta_text(d.b_kernel_ns - d.a_kernel_ns) << " ns, " << signed_percent(change(d.a_kernel_ns, d.b_kernel_ns)) << ")\n";
  if (d.a_busy_ns > 0 || d.b_busy_ns > 0) {
    out << "busy in '" << d.busy_range << "': " << ns_text(d.a_busy_ns) << " -> " << ns_text(d.b_busy_ns) << " ns ("
        << delta_text(d.b_busy_ns - d.a_busy_ns) << " ns, " << signed_percent(change(d.a_busy_ns, d.b_busy_ns)) << ")\n";
  }
  // Roles also show their FLOP rates (from the ranges' payloads); kernels have none.
  auto table = [&](const char* title, const char* key_header, const std::vector<DiffRow>& rows, std::size_t limit, bool rates) {
    out << "\n" << title << (limit > 0 && rows.size() > limit ? " (top " + std::to_string(limit) + ")" : "") << "\n";
    std::vector<std::string> header = {key_header, "A ns", "B ns", "delta ns", "delta %", "A n", "B n", "status"};
    if (rates) header.insert(header.end(), {"A TFLOP/s", "B TFLOP/s"});
    TextTable t(header);
    std::size_t shown = 0;
    auto rate = [](const std::optional<double>& v) { return v ? fixed(*v, 1) : std::string("-"); };
    for (const DiffRow& r : rows) {
      if (limit > 0 && shown++ >= limit) break;
      std::string percent_cell = r.status == DiffRow::Status::added ? "new"
                        : r.delta_percent                    ? signed_percent(r.delta_percent)
                                                             : "-";
      std::vector<std::string> cells = {r.key, ns_text(r.a_ns), ns_text(r.b_ns), delta_text(r.delta_ns), percent_cell,
                                        count_text(r.a_count), count_text(r.b_count), status_name(r.status)};
      if (rates) cells.insert(cells.end(), {rate(r.a_tflops()), rate(r.b_tflops())});
      t.add(cells);
    }
    out << t.str();
  };
  if (!d.roles.empty()) table("by role (sorted by |delta|)", "role", d.roles, top, true);
  table("by kernel (sorted by |delta|)", "kernel", d.kernels, top, false);
  return out.str();
}

nlohmann::ordered_json diff_row_to_json(const DiffRow& r, const DiffRowKeys& k, bool rates) {
  using ojson = nlohmann::ordered_json;
  auto opt = [](const std::optional<double>& v) { return v ? ojson(*v) : ojson(nullptr); };
  ojson row = {{"key", r.key},          {"status", status_name(r.status)}, {k.a_ns, r.a_ns},
               {k.b_ns, r.b_ns},        {k.a_count, r.a_count},            {k.b_count, r.b_count},
               {"delta_ns", r.delta_ns}, {k.delta_percent, opt(r.delta_percent)}, {k.a_samples, r.a_samples_ns},
               {k.b_samples, r.b_samples_ns}, {k.noise, r.noise_percent}};
  if (rates) {
    row[k.a_flops] = r.a_flops;
    row[k.b_flops] = r.b_flops;
    row[k.a_flop_ns] = r.a_flop_ns;
    row[k.b_flop_ns] = r.b_flop_ns;
    row[k.a_tflops] = opt(r.a_tflops());
    row[k.b_tflops] = opt(r.b_tflops());
    row["bytes"] = opt(r.bytes);
    row[k.a_gbps] = opt(r.a_gbps());
    row[k.b_gbps] = opt(r.b_gbps());
  }
  if (!r.members.empty()) row["members"] = r.members;
  return row;
}

DiffRow diff_row_from_json(const nlohmann::json& j, const DiffRowKeys& k, const std::string& where) {
  const FieldReader f(j, where);
  DiffRow r;
  r.key = f.str("key");
  const std::string status = f.str_or("status", "changed");
  if (auto s = status_from_name(status)) r.status = *s;
  else fail(f.path("status"), ": '", status, "' is not one of changed, same, added, removed");
  auto number = [&](const char* key) { return f.number_or_null(key).value_or(0.0); };
  auto samples = [&](const char* key) {
    std::vector<double> out;
    if (const nlohmann::json* v = f.optional(key)) {
      if (!v->is_array()) fail(f.path(key), ": expected an array of numbers");
      for (size_t i = 0; i < v->size(); ++i) out.push_back(json_number((*v)[i], f.path(key) + "[" + std::to_string(i) + "]"));
    }
    return out;
  };
  r.a_ns = number(k.a_ns);
  r.b_ns = number(k.b_ns);
  r.delta_ns = f.number_or_null("delta_ns").value_or(r.b_ns - r.a_ns);
  r.delta_percent = f.number_or_null(k.delta_percent);
  r.a_count = number(k.a_count);
  r.b_count = number(k.b_count);
  r.a_samples_ns = samples(k.a_samples);
  r.b_samples_ns = samples(k.b_samples);
  r.noise_percent = number(k.noise);
  r.a_flops = number(k.a_flops);
  r.b_flops = number(k.b_flops);
  r.a_flop_ns = number(k.a_flop_ns);
  r.b_flop_ns = number(k.b_flop_ns);
  r.bytes = f.number_or_null("bytes");
  if (const nlohmann::json* m = f.optional("members")) {
    if (!m->is_array()) fail(f.path("members"), ": expected an array of role names");
    for (size_t i = 0; i < m->size(); ++i) {
      if (!(*m)[i].is_string()) fail(f.path("members"), "[", i, "]: expected a role name (string)");
      r.members.push_back((*m)[i].get<std::string>());
    }
  }
  return r;
}

nlohmann::ordered_json diff_to_json(const TraceDiff& d) {
  auto rows = [](const std::vector<DiffRow>& in, bool rates) {
    nlohmann::ordered_json out = nlohmann::ordered_json::array();
    for (const DiffRow& r : in) out.push_back(diff_row_to_json(r, kTraceDiffKeys, rates));
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
                        {"repetitions", d.repetitions},
                        {"kernels", rows(d.kernels, false)},
                        {"roles", rows(d.roles, true)},
                        {"warnings", d.warnings}};
}

}  // namespace pfx::trace

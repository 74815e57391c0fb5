// Bench comparison (see bench_compare.h).
#include "landing/bench_compare.h"

#include <cmath>
#include <cstdio>
#include <fstream>
#include <map>
#include <set>
#include <sstream>

#include "stats/rank_test.h"
#include "util/error.h"

namespace pfx::gates {

namespace fs = std::filesystem;
using nlohmann::json;

namespace {

std::string test_name(const json& r, const std::string& where) {
  if (r.contains("test") && r["test"].is_string()) return r["test"].get<std::string>();
  if (!r.contains("n_prompt") || !r.contains("n_gen") || !r["n_prompt"].is_number_integer() || !r["n_gen"].is_number_integer())
    fail(where, ": neither \"test\" nor integer \"n_prompt\" and \"n_gen\"");
  const auto p = r["n_prompt"].get<long long>(), g = r["n_gen"].get<long long>();
  std::string name = p > 0 && g == 0   ? "pp" + std::to_string(p)
                     : g > 0 && p == 0 ? "tg" + std::to_string(g)
                                       : "pp" + std::to_string(p) + "+tg" + std::to_string(g);
  if (r.value("n_depth", 0LL) > 0) name += " @ d" + std::to_string(r["n_depth"].get<long long>());
  return name;
}

std::vector<double> numbers(const json& r, const char* key, const std::string& where) {
  std::vector<double> out;
  if (!r.contains(key)) return out;
  if (!r[key].is_array()) fail(where, ": \"", key, "\" is not an array");
  for (const auto& v : r[key]) {
    if (!v.is_number()) fail(where, ": \"", key, "\" holds a non-number");
    out.push_back(v.get<double>());
  }
  return out;
}

BenchRow read_row(const json& r, const std::string& file_model, const std::string& where) {
  if (!r.is_object()) fail(where, ": not an object");
  BenchRow row;
  row.test = test_name(r, where);
  row.model = r.value("model_type", r.value("model_filename", file_model));
  row.samples_ts = numbers(r, "samples_ts", where);
  if (row.samples_ts.empty()) row.samples_ts = numbers(r, "samples_tps", where);  // prefill --json before schema 2
  const char* avg = r.contains("avg_ts") ? "avg_ts" : "mean_tps";
  if (r.contains(avg) && r[avg].is_number()) row.avg_ts = r[avg].get<double>();
  else if (!row.samples_ts.empty()) {
    for (double x : row.samples_ts) row.avg_ts += x;
    row.avg_ts /= static_cast<double>(row.samples_ts.size());
  } else {
    fail(where, ": no t/s (neither avg_ts, mean_tps nor samples)");
  }
  if (!std::isfinite(row.avg_ts) || row.avg_ts <= 0) fail(where, ": t/s ", row.avg_ts, " is not a positive number");
  return row;
}

// The smallest two-sided p the U test can give for sizes m, n: both extremes, 2 / C(m+n, m).
double best_possible_p(size_t m, size_t n) {
  if (m == 0 || n == 0) return 1.0;
  double c = 1;
  for (size_t i = 1; i <= m; ++i) c = c * static_cast<double>(n + i) / static_cast<double>(i);
  return std::min(1.0, 2.0 / c);
}

std::string fixed(double v, int decimals) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f", decimals, v);
  return buf;
}

std::string label(const BenchFile& f, const BenchFile& other) {
  if (!f.build.empty() && f.build != other.build) return f.build;
  return f.path.filename().string();
}

}  // namespace

BenchFile read_bench_file(const fs::path& path) {
  std::ifstream in(path);
  if (!in) fail(path.string(), ": cannot read");
  std::stringstream ss;
  ss << in.rdbuf();
  const std::string text = ss.str();
  BenchFile f;
  f.path = path;
  std::vector<json> rows;
  std::string file_model;
  json whole = json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (!whole.is_discarded() && whole.is_object() && whole.contains("results")) {  // prefill bench --json
    if (!whole["results"].is_array()) fail(path.string(), ": \"results\" is not an array");
    file_model = whole.value("model", std::string());
    for (const auto& r : whole["results"]) rows.push_back(r);
    if (whole.contains("build") && whole["build"].is_object())
      f.build = whole["build"].value("commit", std::string()).substr(0, 8);
    if (f.backend.empty()) f.backend = whole.value("backend", std::string());
  } else if (!whole.is_discarded() && whole.is_array()) {  // -o json
    for (const auto& r : whole) rows.push_back(r);
  } else {  // -o jsonl: one object per line
    std::stringstream lines(text);
    int n = 0;
    for (std::string line; std::getline(lines, line);) {
      ++n;
      if (line.find_first_not_of(" \t\r") == std::string::npos) continue;
      json r = json::parse(line, nullptr, false);
      if (r.is_discarded()) fail(path.string(), ":", n, ": not JSON (expected prefill bench --json, -o json or -o jsonl)");
      rows.push_back(r);
    }
  }
  if (rows.empty()) fail(path.string(), ": no bench results in it");
  for (size_t i = 0; i < rows.size(); ++i) {
    const std::string where = path.string() + ": result " + std::to_string(i + 1);
    f.rows.push_back(read_row(rows[i], file_model, where));
    if (rows[i].is_object() && rows[i].contains("build_commit") && rows[i]["build_commit"].is_string())
      f.build = rows[i]["build_commit"].get<std::string>();
    if (rows[i].is_object() && rows[i].contains("backends") && rows[i]["backends"].is_string())
      f.backend = rows[i]["backends"].get<std::string>();
  }
  return f;
}

std::vector<CompareRow> compare_benches(const BenchFile& a, const BenchFile& b, double alpha) {
  auto models = [](const BenchFile& f) {
    std::set<std::string> m;
    for (const auto& r : f.rows) m.insert(r.model);
    return m;
  };
  // One model per file: join on the test alone (ours vs llama.cpp name the same model differently).
  const bool by_test = models(a).size() == 1 && models(b).size() == 1;
  std::vector<CompareRow> out;
  for (const auto& ra : a.rows)
    for (const auto& rb : b.rows) {
      if (ra.test != rb.test || (!by_test && ra.model != rb.model)) continue;
      CompareRow c;
      c.model = ra.model == rb.model ? ra.model : ra.model + " / " + rb.model;
      c.test = ra.test;
      c.a_ts = ra.avg_ts;
      c.b_ts = rb.avg_ts;
      c.speedup = rb.avg_ts / ra.avg_ts;
      c.a_n = ra.samples_ts.size();
      c.b_n = rb.samples_ts.size();
      c.best_p = best_possible_p(c.a_n, c.b_n);
      c.p = mann_whitney_u(rb.samples_ts, ra.samples_ts).p_two_sided;
      if (c.best_p >= alpha) c.verdict = "undecided";
      else if (c.p < alpha) c.verdict = c.speedup > 1 ? "faster" : "slower";
      else c.verdict = "no significant change";
      out.push_back(c);
    }
  return out;
}

std::string render_compare_markdown(const BenchFile& a, const BenchFile& b, const std::vector<CompareRow>& rows,
                                    double alpha) {
  const std::string la = label(a, b), lb = label(b, a);
  std::ostringstream os;
  os << "| Model | Test | t/s " << la << " | t/s " << lb << " | Speedup | p | Change |\n"
     << "|---|---|---:|---:|---:|---:|---|\n";
  bool undecided = false;
  for (const auto& r : rows) {
    undecided |= r.verdict == "undecided";
    os << "| " << r.model << " | " << r.test << " | " << fixed(r.a_ts, 2) << " | " << fixed(r.b_ts, 2) << " | "
       << fixed(r.speedup, 2) << " | " << (r.a_n && r.b_n ? fixed(r.p, 3) : std::string("–")) << " | " << r.verdict << " |\n";
  }
  os << "\nA: " << a.path.string() << (a.build.empty() ? "" : " (build " + a.build + ")") << (a.backend.empty() ? "" : ", " + a.backend)
     << "\nB: " << b.path.string() << (b.build.empty() ? "" : " (build " + b.build + ")") << (b.backend.empty() ? "" : ", " + b.backend)
     << "\nSpeedup = t/s B / t/s A. p: two-sided Mann-Whitney U test on the per-repetition t/s; a change is "
        "significant when p < " << fixed(alpha, 3) << ".\n";
  if (undecided) os << "undecided: too few repetitions for p to reach " << fixed(alpha, 3) << " (give both benches -r 5 or more).\n";
  return os.str();
}

json compare_to_json(const BenchFile& a, const BenchFile& b, const std::vector<CompareRow>& rows, double alpha) {
  json j = {{"schema", "landing-compare/1"},
            {"a", {{"file", a.path.string()}, {"build", a.build}, {"backend", a.backend}}},
            {"b", {{"file", b.path.string()}, {"build", b.build}, {"backend", b.backend}}},
            {"test", "two-sided Mann-Whitney U on per-repetition t/s"},
            {"alpha", alpha},
            {"rows", json::array()}};
  for (const auto& r : rows)
    j["rows"].push_back({{"model", r.model}, {"test", r.test}, {"a_ts", r.a_ts}, {"b_ts", r.b_ts}, {"speedup", r.speedup},
                         {"a_n", r.a_n}, {"b_n", r.b_n}, {"p", r.p}, {"best_p", r.best_p}, {"verdict", r.verdict}});
  return j;
}

}  // namespace pfx::gates

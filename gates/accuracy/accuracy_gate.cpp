// accuracy gate (see accuracy_gate.h).
#include "accuracy/accuracy_gate.h"

#include <algorithm>
#include <optional>

#include "contract/prefill_cli.h"
#include "logits/logits_compare.h"
#include "logits/logits_limits.h"
#include "metrics/compare.h"
#include "util/text_format.h"

namespace pfx::gates {

namespace fs = std::filesystem;
using nlohmann::json;

namespace {

// gates.accuracy.* as the gate uses them.
struct AccuracySettings {
  std::string backend;
  std::vector<std::string> paths;
  LogitsLimits limits;
  long greedy_n = 8;

  explicit AccuracySettings(const GateProfile& p)
      : backend(p.string("accuracy", "backend", "cuda")),
        paths(accuracy_paths(p)),
        limits(logits_limits(p, "accuracy")),
        greedy_n(p.integer("accuracy", "greedy_tokens", 8)) {}
  std::vector<Capability> needs() const {
    namespace cap = contract::capability;
    std::vector<Capability> n = {{cap::kSubcommands, "logits"}, {cap::kBackends, backend}};
    for (const auto& p : paths)
      if (!p.empty()) n.push_back({cap::kPaths, p});
    return n;
  }
};

// The greedy continuation vs the oracle's: reported, not judged (fixtures README: "report the
// first divergence"); a greedy call that breaks (not: is unavailable) fails the check.
void greedy_vs_oracle(const EngineRunner& eng, const GateContext& ctx, const AccuracySettings& s, const fs::path& model, const GateCase& cs,
                      const std::string& path, Check& c) {
  if (s.greedy_n <= 0 || cs.oracle_greedy.empty()) return;
  const int n = static_cast<int>(std::min<long>(s.greedy_n, static_cast<long>(cs.oracle_greedy.size())));
  const auto g = eng.greedy(model, cs.input, n, s.backend, path, ctx.deadline.remaining());
  c.metrics["duration_s"] = c.metrics.value("duration_s", 0.0) + g.process.wall_s;
  if (g.ok()) {
    // Reported, not judged, but a continuation of another path than asked is no report of this one.
    const VerifiedCall ran = verify_call(accuracy_ask(ctx.profile, path, "greedy"), g, ctx.candidate);
    c.metrics["ran"]["greedy"] = ran.evidence;
    if (!ran.verdict.ok()) {
      fail_hard(c, "greedy: " + ran.verdict.reason());
      c.command += "\n" + g.command;
      return;
    }
    c.reason += ran.verdict.note();
  }
  if (g.ok() && g.output.contains(contract::field::kGeneratedIds)) {
    const auto ids = g.output[contract::field::kGeneratedIds].get<std::vector<int32_t>>();
    const std::vector<int32_t> expected(cs.oracle_greedy.begin(), cs.oracle_greedy.begin() + n);
    const std::vector<int32_t> got(ids.begin(), ids.begin() + std::min<size_t>(ids.size(), static_cast<size_t>(n)));
    const int64_t first = pfx::first_divergence(got, expected);
    c.metrics["greedy_vs_oracle"] = {{"tokens", n}, {"first_divergence", first < 0 ? json(nullptr) : json(first)}};
    c.reason += first < 0 ? "; greedy " + std::to_string(n) + " tokens = oracle"
                          : "; greedy diverges from oracle at token " + std::to_string(first);
  } else if (!g.ok() && g.outcome != RunOutcome::Unavailable) {
    fail_hard(c, "greedy " + g.reason);
    c.command += "\n" + g.command;
  }
}

// One case on one path against the oracle logits: the check, and the comparison where the logits
// were compared; `unavailable` is set when the backend cannot run here.
struct PathResult {
  Check check;
  std::optional<LogitsComparison> cmp;  // set where the shapes matched and the numbers were compared
};

PathResult check_path(const GateContext& ctx, const EngineRunner& eng, const AccuracySettings& s, const GateCase& cs, size_t index,
                 const fs::path& model, const NpyArray& oracle, const std::string& path, std::string& unavailable) {
  const std::string label = s.backend + (path.empty() ? "" : "/" + path);
  Check c;
  c.name = accuracy_check_name(ctx.profile, cs.name, path);
  const fs::path out = ctx.work_dir / ("accuracy-" + std::to_string(index) + "-" + (path.empty() ? s.backend : path) + ".npy");
  const auto call = eng.logits(model, cs.input, s.backend, path, out, ctx.deadline.remaining());
  if (!call.ok()) {
    Check failed = failed_call_check(c.name, call, label);
    if (call.outcome == RunOutcome::Unavailable) unavailable = failed.reason;
    return {failed, std::nullopt};
  }
  c.command = call.command;
  // Logits of another path or backend than asked are no evidence for this check: FAIL, not waivable.
  const VerifiedCall ran = verify_call(accuracy_ask(ctx.profile, path, "logits"), call, ctx.candidate);
  if (!ran.verdict.ok()) {
    fail_hard(c, label + ": " + ran.verdict.reason());
    c.metrics["ran"]["run"] = ran.evidence;
    return {c, std::nullopt};
  }
  NpyArray got;
  if (auto err = load_finite_logits(out, got); !err.empty()) {
    fail_hard(c, err);
    return {c, std::nullopt};
  }
  const auto cmp = compare_logits(got, oracle);
  c.metrics = to_json(cmp);
  c.metrics["duration_s"] = call.process.wall_s;
  c.metrics["ran"]["run"] = ran.evidence;
  if (!cmp.shape_match) {
    fail_hard(c, "vs oracle: " + cmp.shape_error);
    return {c, std::nullopt};
  }
  const std::string why = limits_exceeded(cmp, s.limits);
  c.status = why.empty() ? Status::Pass : Status::Fail;
  c.reason = (why.empty() ? limits_within(cmp.max_rel_dev, cmp.nmse, cmp.top1_agreement) : why) + ran.verdict.note();
  greedy_vs_oracle(eng, ctx, s, model, cs, path, c);
  return {c, cmp};
}

Table accuracy_table() {
  Table t;
  t.id = "accuracy";
  t.title = "accuracy: each path vs the float64 oracle";
  t.columns = {{"case", "", {}}, {"path", "", {}}};
  for (const auto& col : comparison_columns()) t.columns.push_back(col);
  t.columns.push_back({"greedy first divergence", "", kInteger});
  return t;
}

TableRow table_row(const std::string& case_name, const std::string& label, const Check& c, const LogitsComparison& cmp) {
  TableRow tr{{text_cell(case_name), text_cell(label)}};
  for (const auto& cell : comparison_cells(cmp)) tr.cells.push_back(cell);
  const json greedy = c.metrics.value("greedy_vs_oracle", json::object());
  tr.cells.push_back(!greedy.contains("first_divergence")   ? Cell{}
                     : greedy["first_divergence"].is_null() ? text_cell("none")
                                                             : number_cell(greedy["first_divergence"].get<double>()));
  tr.check = c.name;
  return tr;
}

}  // namespace

std::vector<std::string> accuracy_paths(const GateProfile& profile) {
  auto paths = profile.strings("accuracy", "paths");
  if (paths.empty())
    paths = profile.string("accuracy", "backend", "cuda") == "cpu" ? std::vector<std::string>{""} : std::vector<std::string>{"fast", "generic"};
  return paths;
}

std::string accuracy_check_name(const GateProfile& profile, const std::string& case_name, const std::string& path) {
  return case_name + " " + profile.string("accuracy", "backend", "cuda") + (path.empty() ? "" : "/" + path);
}

AskedRun accuracy_ask(const GateProfile& profile, const std::string& path, const std::string& subcommand) {
  return {subcommand, profile.string("accuracy", "backend", "cuda"), path, "", ""};
}

GateResult run_accuracy_gate(const GateContext& ctx) {
  GateResult r = ctx.start();
  const AccuracySettings s(ctx.profile);
  r.details["thresholds"] = to_json(s.limits);
  r.details["backend"] = s.backend;
  r.details["paths"] = s.paths;
  if (ctx.skipped_without(r, {&ctx.candidate}, s.needs())) return r;
  const auto cases = parse_cases(ctx.profile, "accuracy", ctx.fixtures_dir, project_fixtures(ctx.candidate));
  fs::create_directories(ctx.work_dir);
  const auto eng = ctx.engine(ctx.candidate);
  std::string unavailable;  // once the backend says "not here", the other cases skip without asking
  json rows = json::array();
  Table table = accuracy_table();
  double worst = -1;
  std::string worst_name;
  for (size_t i = 0; i < cases.size(); ++i) {
    const auto& cs = cases[i];
    if (cs.oracle.empty()) {
      r.checks.push_back(hard_failure(cs.name, "accuracy cases must name a fixtures oracle case (oracle: NAME)"));
      continue;
    }
    const auto model = ctx.models.resolve(cs.model, ctx.deadline.remaining());
    NpyArray oracle;
    const std::string oracle_err = load_finite_logits(cs.oracle_root / "oracle" / (cs.oracle + ".logits.npy"), oracle);
    for (const auto& path : s.paths) {
      const std::string label = s.backend + (path.empty() ? "" : "/" + path);
      const std::string name = accuracy_check_name(ctx.profile, cs.name, path);
      ctx.say("case " + std::to_string(i + 1) + "/" + std::to_string(cases.size()) + " " + name);
      if (!unavailable.empty()) {
        r.checks.push_back({name, Status::Skipped, unavailable});
        continue;
      }
      if (!model.ok || !oracle_err.empty()) {  // a fixture that is missing is a failure, not a skip
        r.checks.push_back(hard_failure(name, !model.ok ? model.error : "oracle: " + oracle_err));
        continue;
      }
      const auto [c, cmp] = check_path(ctx, eng, s, cs, i, model.path, oracle, path, unavailable);
      r.checks.push_back(c);
      if (!cmp) continue;
      if (cmp->max_rel_dev > worst) {
        worst = cmp->max_rel_dev;
        worst_name = c.name;
      }
      rows.push_back({{"case", cs.name}, {"path", label}, {"metrics", c.metrics}});
      table.rows.push_back(table_row(cs.name, label, c, *cmp));
    }
  }
  r.details["cases"] = rows;
  if (!table.rows.empty()) r.tables.push_back(table);
  int passed = 0;
  for (const auto& c : r.checks) passed += c.status == Status::Pass;
  if (worst >= 0)
    r.evidence = std::to_string(passed) + "/" + std::to_string(r.checks.size()) + " case×path within bounds vs float64 oracle (rel " +
                 sci(s.limits.max_rel_dev) + ", NMSE " + (s.limits.max_nmse ? sci(*s.limits.max_nmse) : std::string("unchecked")) +
                 ", top-1 " + (s.limits.min_top1 ? percent(*s.limits.min_top1) : std::string("unchecked")) + "); worst rel dev " +
                 sci(worst) + " (" + worst_name + ")";
  finish(r, ctx.profile, ctx.deadline.elapsed());
  return r;
}

}  // namespace pfx::gates

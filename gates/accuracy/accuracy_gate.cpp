// accuracy gate (see accuracy_gate.h).
#include "accuracy/accuracy_gate.h"

#include "contract/prefill_cli.h"

#include "core/format.h"
#include "core/logits_compare.h"
#include "core/logits_limits.h"

namespace pfx::gates {

namespace fs = std::filesystem;
using nlohmann::json;

GateResult run_accuracy_gate(const GateContext& ctx) {
  GateResult r = ctx.start();
  const std::string backend = ctx.profile.string("accuracy", "backend", "cuda");
  auto paths = ctx.profile.strings("accuracy", "paths");
  if (paths.empty()) paths = backend == "cpu" ? std::vector<std::string>{""} : std::vector<std::string>{"fast", "generic"};
  const LogitsLimits limits = logits_limits(ctx.profile, "accuracy");
  const long greedy_n = ctx.profile.integer("accuracy", "greedy_tokens", 8);
  r.details["thresholds"] = to_json(limits);
  r.details["backend"] = backend;
  r.details["paths"] = paths;
  std::vector<std::pair<std::string, std::string>> needs = {{"subcommands", "logits"}, {"backends", backend}};
  for (const auto& p : paths)
    if (!p.empty()) needs.push_back({"paths", p});
  for (const auto& [list, name] : needs)
    if (auto miss = missing_capability(ctx.candidate, list, name)) return skip_gate(r, *miss, ctx.deadline.elapsed());
  const auto cases = parse_cases(ctx.profile, "accuracy", ctx.fixtures_dir, project_fixtures(ctx.candidate));
  fs::create_directories(ctx.work_dir);
  const auto eng = ctx.engine(ctx.candidate);
  std::string unavailable;
  json rows = json::array();
  Table table;
  table.id = "accuracy";
  table.title = "accuracy: each path vs the float64 oracle";
  table.columns = {{"case", "", {}}, {"path", "", {}}};
  for (const auto& col : comparison_columns()) table.columns.push_back(col);
  table.columns.push_back({"greedy first divergence", "", kInteger});
  double worst = -1;
  std::string worst_name;
  for (size_t i = 0; i < cases.size(); ++i) {
    const auto& cs = cases[i];
    if (cs.oracle.empty()) {
      Check c;
      c.name = cs.name;
      c.status = Status::Fail;
      c.waivable = false;
      c.reason = "accuracy cases must name a fixtures oracle case (oracle: NAME)";
      r.checks.push_back(c);
      continue;
    }
    const auto model = ctx.models.resolve(cs.model, ctx.deadline.remaining());
    NpyArray oracle;
    const std::string oracle_err =
        load_finite_logits(cs.oracle_root / "oracle" / (cs.oracle + ".logits.npy"), oracle);
    for (const auto& path : paths) {
      const std::string label = backend + (path.empty() ? "" : "/" + path);
      Check c;
      c.name = cs.name + " " + label;
      ctx.say("case " + std::to_string(i + 1) + "/" + std::to_string(cases.size()) + " " + c.name);
      if (!unavailable.empty()) {
        c.status = Status::Skipped;
        c.reason = unavailable;
        r.checks.push_back(c);
        continue;
      }
      if (!model.ok || !oracle_err.empty()) {
        c.status = Status::Fail;  // a fixture that is missing is a failure, not a skip
        c.waivable = false;
        c.reason = !model.ok ? model.error : "oracle: " + oracle_err;
        r.checks.push_back(c);
        continue;
      }
      const fs::path out = ctx.work_dir / ("accuracy-" + std::to_string(i) + "-" + (path.empty() ? backend : path) + ".npy");
      const auto call = eng.logits(model.path, cs.input, backend, path, out, ctx.deadline.remaining());
      if (!call.ok()) {
        r.checks.push_back(failed_call_check(c.name, call, label));
        if (call.outcome == RunOutcome::Unavailable) unavailable = r.checks.back().reason;
        continue;
      }
      c.command = call.command;
      NpyArray got;
      if (auto err = load_finite_logits(out, got); !err.empty()) {
        c.status = Status::Fail;
        c.waivable = false;
        c.reason = err;
        r.checks.push_back(c);
        continue;
      }
      const auto cmp = compare_logits(got, oracle);
      c.metrics = to_json(cmp);
      if (!cmp.shape_match) {
        c.status = Status::Fail;
        c.waivable = false;
        c.reason = "vs oracle: " + cmp.shape_error;
        r.checks.push_back(c);
        continue;
      }
      const std::string why = limits_exceeded(cmp, limits);
      c.status = why.empty() ? Status::Pass : Status::Fail;
      c.reason = why.empty() ? limits_within(cmp.max_rel_dev, cmp.nmse, cmp.top1_agreement) : why;
      // Greedy continuation vs the oracle's: reported, not judged (the README's "report first divergence").
      if (greedy_n > 0 && !cs.oracle_greedy.empty()) {
        const int n = static_cast<int>(std::min<long>(greedy_n, static_cast<long>(cs.oracle_greedy.size())));
        const auto g = eng.greedy(model.path, cs.input, n, backend, path, ctx.deadline.remaining());
        if (g.ok() && g.output.contains(contract::field::kGeneratedIds)) {
          const auto ids = g.output[contract::field::kGeneratedIds].get<std::vector<int>>();
          int first = -1;
          for (int k = 0; k < n; ++k)
            if (k >= static_cast<int>(ids.size()) || ids[k] != cs.oracle_greedy[k]) {
              first = k;
              break;
            }
          c.metrics["greedy_vs_oracle"] = {{"tokens", n}, {"first_divergence", first < 0 ? json(nullptr) : json(first)}};
          c.reason += first < 0 ? "; greedy " + std::to_string(n) + " tokens = oracle"
                                : "; greedy diverges from oracle at token " + std::to_string(first);
        } else if (!g.ok() && g.outcome != RunOutcome::Unavailable) {
          c.status = Status::Fail;
          c.waivable = false;
          c.reason = "greedy " + g.reason;
          c.command += "\n" + g.command;
        }
      }
      if (cmp.max_rel_dev > worst) {
        worst = cmp.max_rel_dev;
        worst_name = c.name;
      }
      rows.push_back({{"case", cs.name}, {"path", label}, {"metrics", c.metrics}});
      TableRow tr{{text_cell(cs.name), text_cell(label)}};
      for (const auto& cell : comparison_cells(cmp)) tr.cells.push_back(cell);
      const json greedy = c.metrics.value("greedy_vs_oracle", json::object());
      tr.cells.push_back(!greedy.contains("first_divergence") ? Cell{}
                         : greedy["first_divergence"].is_null() ? text_cell("none")
                                                                : number_cell(greedy["first_divergence"].get<double>()));
      tr.check = c.name;
      table.rows.push_back(tr);
      r.checks.push_back(c);
    }
  }
  r.details["cases"] = rows;
  if (!table.rows.empty()) r.tables.push_back(table);
  int passed = 0;
  for (const auto& c : r.checks) passed += c.status == Status::Pass;
  if (worst >= 0)
    r.evidence = std::to_string(passed) + "/" + std::to_string(r.checks.size()) +
                               " case×path within bounds vs float64 oracle (rel " + sci(limits.max_rel_dev) + ", NMSE " +
                               (limits.max_nmse ? sci(*limits.max_nmse) : std::string("unchecked")) + ", top-1 " +
                               (limits.min_top1 ? pct(*limits.min_top1) : std::string("unchecked")) + "); worst rel dev " + sci(worst) + " (" +
                               worst_name + ")";
  finish(r, ctx.profile, ctx.deadline.elapsed());
  return r;
}

}  // namespace pfx::gates

// greedy gate (see greedy_gate.h).
#include "greedy/greedy_gate.h"

#include "contract/prefill_cli.h"
#include "greedy/greedy_judge.h"

namespace pfx::gates {

using nlohmann::json;

AskedRun greedy_ask(const GateProfile& profile, const std::string& backend) {
  return {"greedy", backend, backend == "cuda" ? profile.string("greedy", "path", "fast") : "", "", ""};
}

GateResult run_greedy_gate(const GateContext& ctx) {
  GateResult r = ctx.start();
  const int n = static_cast<int>(ctx.profile.integer("greedy", "tokens", 32));
  std::string backend = ctx.profile.string("greedy", "backend", "auto");
  std::string path = ctx.profile.string("greedy", "path", "fast");
  if (ctx.skipped_without(r, {&ctx.candidate, &ctx.baseline}, {{contract::capability::kSubcommands, "greedy"}})) return r;
  const auto cases = parse_cases(ctx.profile, "greedy", ctx.fixtures_dir, project_fixtures(ctx.candidate));
  const auto cand = ctx.engine(ctx.candidate);
  const auto base = ctx.engine(ctx.baseline);
  std::string backend_note;
  if (backend == "auto") {
    // CUDA fast path where both builds have it and a GPU answers; the CPU backend otherwise.
    backend = "cpu";
    backend_note = "CPU backend";
    const bool both_cuda = ctx.candidate.has_capability("backends", "cuda") && ctx.baseline.has_capability("backends", "cuda");
    if (!both_cuda) backend_note += " (a build lacks the CUDA backend)";
    if (both_cuda && !cases.empty()) {
      const auto m = ctx.models.resolve(cases.front().model, ctx.deadline.remaining());
      if (m.ok) {
        const auto probe = cand.greedy(m.path, cases.front().input, 1, "cuda", path, ctx.deadline.remaining());
        if (probe.ok()) {
          backend = "cuda";
          backend_note = "CUDA " + path + " path";
        } else if (probe.outcome == RunOutcome::Unavailable) {
          backend_note += " (no usable GPU: " + probe.reason + ")";
        } else {
          backend = "cuda";  // the GPU exists but the call broke: judge it on CUDA, it will fail there
          backend_note = "CUDA " + path + " path";
        }
      }
    }
  } else {
    backend_note = backend + (backend == "cuda" ? " " + path + " path" : "");
  }
  const AskedRun ask = greedy_ask(ctx.profile, backend);
  path = ask.path;
  r.details["backend"] = backend;
  r.details["backend_note"] = backend_note;
  r.details["tokens"] = n;
  json rows = json::array();
  Table table;
  table.id = "greedy";
  table.title = "greedy: baseline vs candidate token streams (" + backend_note + ")";
  table.columns = {{"case", "", {}}, {"baseline tokens", "", kInteger}, {"candidate tokens", "", kInteger},
                   {"first divergence", "", kInteger}};
  int identical = 0;
  std::string first_divergence;
  for (size_t i = 0; i < cases.size(); ++i) {
    const auto& cs = cases[i];
    ctx.say("case " + std::to_string(i + 1) + "/" + std::to_string(cases.size()) + " " + cs.name + " (" + backend_note + ")");
    Check c;
    c.name = cs.name;
    const auto model = ctx.model_or_check(r, cs.name, cs.model);
    if (!model) continue;
    const auto gb = base.greedy(*model, cs.input, n, backend, path, ctx.deadline.remaining());
    if (!gb.ok()) {
      r.checks.push_back(failed_call_check(cs.name, gb, "baseline greedy"));
      continue;
    }
    const auto gc = cand.greedy(*model, cs.input, n, backend, path, ctx.deadline.remaining());
    if (!gc.ok()) {
      r.checks.push_back(failed_call_check(cs.name, gc, "candidate greedy"));
      continue;
    }
    c.command = gb.command + "\n" + gc.command;
    // Both streams must come from what was asked: a candidate running the generic path, or a
    // baseline on another backend, would be compared under the wrong name.
    const VerifiedCall ran_b = verify_call(ask, gb, ctx.baseline), ran_c = verify_call(ask, gc, ctx.candidate);
    const json ran = {{"baseline", ran_b.evidence}, {"candidate", ran_c.evidence}};
    const RanAsAsked both = RanAsAsked(ran_b.verdict).add(ran_c.verdict);
    if (!both.ok()) {
      fail_hard(c, both.reason());
      c.metrics["ran"] = ran;
      r.checks.push_back(c);
      continue;
    }
    std::vector<int> ib, ic;
    try {
      ib = gb.output.at(contract::field::kGeneratedIds).get<std::vector<int>>();
      ic = gc.output.at(contract::field::kGeneratedIds).get<std::vector<int>>();
    } catch (const json::exception& e) {
      fail_hard(c, std::string("greedy --json output lacks generated_ids: ") + e.what());
      r.checks.push_back(c);
      continue;
    }
    json row = {{"case", cs.name}, {"baseline_ids", ib}, {"candidate_ids", ic}, {"baseline_text", gb.output.value(contract::field::kText, "")},
                {"candidate_text", gc.output.value(contract::field::kText, "")}};
    judge_greedy_case(c, row);
    if (c.status == Status::Pass) ++identical;
    if (row.contains("first_divergence") && first_divergence.empty())
      first_divergence = cs.name + " at token " + std::to_string(row["first_divergence"].get<size_t>());
    c.reason += both.note();  // what an older baseline could not report
    c.metrics = row;
    c.metrics["duration_s"] = gb.process.wall_s + gc.process.wall_s;
    c.metrics["ran"] = ran;
    rows.push_back(row);
    table.rows.push_back({{text_cell(cs.name), number_cell(static_cast<double>(ib.size())), number_cell(static_cast<double>(ic.size())),
                           row.contains("first_divergence") ? number_cell(row["first_divergence"].get<double>()) : text_cell("none")},
                          cs.name});
    r.checks.push_back(c);
  }
  r.details["cases"] = rows;
  if (!table.rows.empty()) r.tables.push_back(table);
  r.evidence = "greedy " + std::to_string(cases.size()) + " prompts × " + std::to_string(n) + " tokens on the " + backend_note +
               ": " + std::to_string(identical) + "/" + std::to_string(cases.size()) + " byte-identical" +
               (first_divergence.empty() ? "" : "; first divergence " + first_divergence);
  finish(r, ctx.profile, ctx.deadline.elapsed());
  return r;
}

}  // namespace pfx::gates

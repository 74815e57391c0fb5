// The landing run orchestration (see landing_run.h).
#include "landing/landing_run.h"

#include <cstdlib>
#include <fstream>
#include <iostream>
#include <sstream>

#include "run/build_cache.h"
#include "host/environment.h"
#include "run/git.h"
#include "landing/gate_lines.h"
#include "host/gpu_monitor.h"
#include "landing/gate_registry.h"
#include "landing/harness.h"
#include "report/ledger.h"
#include "util/error.h"
#include "util/escape.h"
#include "util/fixtures.h"
#include "util/unique_name.h"

namespace pfx::gates {

namespace fs = std::filesystem;
using nlohmann::json;

namespace {

struct Prepared {
  fs::path repo, cache, fixtures;
  std::string profile_rel;
  GateProfile profile;
  json baseline_profile;
  std::string baseline_profile_note;
  std::vector<ProfileChange> changes;
  Build baseline, candidate;
  HarnessId harness;
};

fs::path resolve_fixtures(const RunOptions& opt, const fs::path& repo) {
  if (const char* env = std::getenv("PFX_FIXTURES"); env && *env) return fs::absolute(env);
  if (!opt.fixtures.empty()) return fs::absolute(opt.fixtures);
  const fs::path beside = repo.parent_path() / "shared" / "fixtures";
  if (fs::exists(beside)) return beside;
  return pfx::fixtures_dir();
}

// The profile text as the candidate sees it: the working tree for WORKTREE, else the commit.
std::string profile_text(const fs::path& repo, const std::string& rev, const std::string& sha, const std::string& rel, bool& found) {
  found = false;
  std::string text;
  if (fs::path(rel).is_absolute()) {
    std::ifstream in(rel);
    if (!in) return {};
    std::stringstream ss;
    ss << in.rdbuf();
    found = true;
    return ss.str();
  }
  if (rev == kWorktreeRev) {
    std::ifstream in(repo / rel);
    if (!in) return {};
    std::stringstream ss;
    ss << in.rdbuf();
    found = true;
    return ss.str();
  }
  found = show_file(repo, sha, rel, text);
  return text;
}

std::string suite_share_flag(const RunOptions& opt, const std::string& gate) {
  if (gate != "suite" || opt.suite_labels.empty()) return "";
  std::string labels;
  for (const auto& l : opt.suite_labels) labels += (labels.empty() ? "" : ",") + l;
  return " --suite-labels " + labels;
}

std::string reproduce_command(const RunOptions& opt, const std::string& gate, const Build& base, const Build& cand) {
  // The build folders as they were given (relative to where landing ran), never this machine's
  // absolute paths.
  if (!opt.candidate_build.empty())
    return "landing gate " + gate + " --baseline-build " + opt.baseline_build.string() + " --candidate-build " +
           opt.candidate_build.string() + " --baseline-id " + base.id + " --candidate-id " + cand.id + " --gates " +
           opt.gates_profile + suite_share_flag(opt, gate);
  return "landing gate " + gate + " --baseline " + base.sha.substr(0, 12) + " --candidate " +
         (cand.worktree ? std::string("WORKTREE") : cand.sha.substr(0, 12)) + " --gates " + opt.gates_profile +
         suite_share_flag(opt, gate);
}

// An A/A landing (a revision against itself) is legitimate — it measures the noise floor — but
// rarely what was meant (e.g. `--candidate WORKTREE` on a clean tree): say so, even with --quiet.
void warn_if_same(const RunOptions& opt, const std::string& baseline_id, const std::string& candidate_id) {
  if (baseline_id != candidate_id || opt.same_expected) return;
  std::cerr << "landing: warning: the baseline and the candidate are the same (" << baseline_id
            << "): an A/A landing — every difference it reports is noise\n";
}

// Builds made elsewhere: no git; the profile is one file (so there is no profile diff to show).
Prepared prepare_prebuilt(const RunOptions& opt, const Progress& progress) {
  if (opt.baseline_build.empty() || opt.candidate_build.empty())
    fail("--baseline-build and --candidate-build go together");
  Prepared p;
  p.repo = opt.repo.empty() ? fs::current_path() : fs::absolute(opt.repo);
  p.cache = opt.cache.empty() ? p.repo / ".landing" : fs::absolute(opt.cache);
  p.fixtures = resolve_fixtures(opt, p.repo);
  p.profile_rel = opt.gates_profile;
  const fs::path profile_file = fs::path(p.profile_rel).is_absolute() ? fs::path(p.profile_rel) : p.repo / p.profile_rel;
  p.profile = GateProfile::load(profile_file);
  p.baseline_profile = p.profile.data();
  p.baseline_profile_note = "Prebuilt builds: one gate profile file (" + profile_file.string() + ") for both; no diff.";
  p.baseline = prebuilt_build("baseline", opt.baseline_build, p.profile.prefill_relpath(), p.repo, opt.baseline_id);
  p.candidate = prebuilt_build("candidate", opt.candidate_build, p.profile.prefill_relpath(), p.repo, opt.candidate_id);
  progress.say("baseline " + p.baseline.id + ": prebuilt " + p.baseline.dir.string());
  progress.say("candidate " + p.candidate.id + ": prebuilt " + p.candidate.dir.string());
  warn_if_same(opt, p.baseline.id, p.candidate.id);
  return p;
}

Prepared prepare(const RunOptions& opt, const Progress& progress) {
  if (!opt.baseline_build.empty() || !opt.candidate_build.empty()) return prepare_prebuilt(opt, progress);
  Prepared p;
  p.repo = repo_root(opt.repo.empty() ? fs::current_path() : fs::absolute(opt.repo));
  p.cache = opt.cache.empty() ? p.repo / ".landing" : fs::absolute(opt.cache);
  p.fixtures = resolve_fixtures(opt, p.repo);
  p.profile_rel = opt.gates_profile;
  // Paths given relative to the current directory but inside the repo are made repo-relative.
  if (!fs::path(p.profile_rel).is_absolute() && !fs::exists(p.repo / p.profile_rel) && fs::exists(fs::absolute(p.profile_rel))) {
    const auto rel = fs::relative(fs::absolute(p.profile_rel), p.repo);
    if (!rel.empty() && rel.string().rfind("..", 0) != 0) p.profile_rel = rel.string();
  }
  const std::string cand_sha = opt.candidate == kWorktreeRev ? resolve_commit(p.repo, "HEAD") : resolve_commit(p.repo, opt.candidate);
  const std::string base_sha = resolve_commit(p.repo, opt.baseline);
  BuildSpec spec;
  // What landing writes inside the repository is not part of the candidate's change.
  for (const fs::path& own : {opt.out.empty() ? p.repo / "reports" : fs::absolute(opt.out), p.cache}) {
    const auto rel = fs::relative(own, p.repo);
    if (!rel.empty() && rel.string().rfind("..", 0) != 0) spec.exclude.push_back(rel.string());
  }
  warn_if_same(opt, revision_id(p.repo, opt.baseline, spec.exclude), revision_id(p.repo, opt.candidate, spec.exclude));
  bool found = false;
  const std::string cand_text = profile_text(p.repo, opt.candidate, cand_sha, p.profile_rel, found);
  if (!found) fail(p.profile_rel, ": the candidate (", opt.candidate, ") has no gate profile at this path");
  p.profile = GateProfile::parse(cand_text, p.profile_rel + " (candidate " + opt.candidate + ")");
  const std::string base_text = profile_text(p.repo, opt.baseline, base_sha, p.profile_rel, found);
  if (!found) {
    p.baseline_profile = nullptr;
    p.baseline_profile_note = "The baseline has no gate profile at this path: every setting is new.";
    p.changes = diff_profiles(json::object(), p.profile.data());
  } else {
    try {
      // Lenient: a baseline written before a schema change still diffs (the candidate's is strict).
      p.baseline_profile = GateProfile::parse(base_text, p.profile_rel + " (baseline)", false).data();
      p.changes = diff_profiles(p.baseline_profile, p.profile.data());
    } catch (const Error& e) {
      p.baseline_profile = nullptr;
      p.baseline_profile_note = std::string("The baseline's gate profile does not load (") + e.what() + "): compared with nothing.";
      p.changes = diff_profiles(json::object(), p.profile.data());
    }
  }
  spec.repo = p.repo;
  spec.cache_dir = p.cache;
  spec.fixtures_dir = p.fixtures;
  spec.cmake_args = p.profile.cmake_args();
  spec.prefill_relpath = p.profile.prefill_relpath();
  spec.timeout_s = p.profile.build_timeout_s();
  spec.jobs = p.profile.build_jobs();
  // Build the commits resolved above, not the names: a commit made while the baseline builds
  // must not move "HEAD" under the candidate.
  spec.rev = opt.baseline == kWorktreeRev ? opt.baseline : base_sha;
  spec.label = "baseline";
  p.baseline = prepare_build(spec, progress);
  spec.rev = opt.candidate == kWorktreeRev ? opt.candidate : cand_sha;
  spec.label = "candidate";
  p.candidate = prepare_build(spec, progress);
  return p;
}

// What every result is bound to: both prefill binaries and the effective profile by sha256, and
// the harness that judged (landing/import_rules.h checks these on import).
json binding_of(const Prepared& p) {
  return {{"profile_sha256", p.profile.sha256()},
          {"baseline", {{"id", p.baseline.id}, {"prefill_sha256", p.baseline.prefill_sha256}}},
          {"candidate", {{"id", p.candidate.id}, {"prefill_sha256", p.candidate.prefill_sha256}}},
          {"harness", to_json(p.harness)}};
}

// The SM clock range a gate ran at, for the report's Environment: the idle sample taken as it
// started, one as it ended, and the A/B gate's per-run samples where it has them.
void note_clock_range(GateResult& r) {
  unsigned lo = ~0u, hi = 0;
  auto add = [&](unsigned mhz) {
    if (!mhz) return;
    lo = std::min(lo, mhz);
    hi = std::max(hi, mhz);
  };
  if (r.host.contains("gpu") && r.host["gpu"].is_object() && r.host["gpu"].contains("idle_sample"))
    add(r.host["gpu"]["idle_sample"].value("sm_clock_mhz", 0u));
  if (r.details.contains("sm_clock_range_mhz") && r.details["sm_clock_range_mhz"].is_array() && r.details["sm_clock_range_mhz"].size() == 2) {
    add(r.details["sm_clock_range_mhz"][0].get<unsigned>());
    add(r.details["sm_clock_range_mhz"][1].get<unsigned>());
  }
  GpuMonitor gpu;
  if (gpu.available())
    if (auto s = gpu.sample()) add(s->sm_clock_mhz);
  if (hi) r.host["sm_clock_range_mhz"] = {lo, hi};
}

std::vector<std::string> gates_to_run(const RunOptions& opt, const GateProfile& profile) {
  std::vector<std::string> out;
  for (const auto& g : known_gates()) {
    if (!opt.only.empty()) {
      for (const auto& o : opt.only)
        if (o == g) out.push_back(g);
    } else if (profile.enabled(g)) {
      out.push_back(g);
    }
  }
  return out;
}

// Runs the gates; a failed build is the pseudo-gate "build" and nothing else runs.
std::vector<GateResult> run_gates(const RunOptions& opt, Prepared& p, const std::vector<std::string>& names,
                                  const Progress& progress, const fs::path& work_root) {
  std::vector<GateResult> results;
  if (!p.baseline.ok || !p.candidate.ok) {
    GateResult b;
    b.gate = "build";
    b.status = Status::Fail;
    b.required = true;
    b.candidate_id = p.candidate.id;
    b.baseline_id = p.baseline.id;
    b.started = utc_now_iso8601();
    std::string sides;
    for (const Build* x : {&p.baseline, &p.candidate})
      if (!x->ok) {
        sides += (sides.empty() ? "" : " and ") + x->label + " " + x->id;
        b.details["errors"][x->label] = x->error;
        b.details["logs"][x->label] = x->log.string();
      }
    b.reason = "build failed: " + sides + " (compiler errors below; full log in the build folder)";
    b.evidence = b.reason;
    b.command = p.candidate.ok ? p.baseline.command : p.candidate.command;
    b.checks.push_back(hard_failure("build", b.reason, b.command));
    results.push_back(b);
    return results;
  }
  ModelStore models(p.profile, p.candidate, p.fixtures, p.cache, progress);
  const fs::path landing_exe = fs::read_symlink("/proc/self/exe");
  for (size_t i = 0; i < names.size(); ++i) {
    const auto& name = names[i];
    progress.say("gate " + name + " (" + std::to_string(i + 1) + "/" + std::to_string(names.size()) + "), timeout " +
                 std::to_string(static_cast<long>(p.profile.timeout_s(name))) + " s");
    GateContext ctx{name,          p.profile,  p.baseline, p.candidate, p.repo,
                    p.cache,       p.fixtures, work_root / name,       progress,
                    models,        reproduce_command(opt, name, p.baseline, p.candidate),
                    Deadline(p.profile.timeout_s(name)),
                    opt.suite_labels};
    GateResult r = run_gate(name, ctx, landing_exe);
    if (r.command.empty()) r.command = ctx.reproduce;
    r.required = p.profile.required(name);
    r.candidate_id = p.candidate.id;
    r.baseline_id = p.baseline.id;
    r.binding = binding_of(p);
    note_clock_range(r);
    progress.say("gate " + name + ": " + std::string(to_string(r.status)) + " — " + r.reason);
    results.push_back(r);
  }
  return results;
}

}  // namespace

// Who judges: hands over to the pinned harness when that is another binary (never returns
// then); otherwise records this one, pinned or not.
void settle_harness(const RunOptions& opt, Prepared& p, const Progress& progress) {
  HarnessPlan plan = plan_harness(opt.harness, opt.handed_over, p.baseline, p.candidate);
  if (plan.exec && opt.judge_here) {
    // A bisect evaluates many commits in one process: it cannot hand over, and says so.
    const std::string other = plan.exec->string();
    plan.id = self_identity();
    plan.id.how = "not pinned: judged in this process (bisect), not by " + other;
  } else if (plan.exec) {
    progress.say("harness: handing over to " + plan.exec->string() + " (" + plan.id.how + ")");
    hand_over(*plan.exec, pin_revisions(opt.argv, p.baseline.worktree ? "" : p.baseline.sha,
                                        p.candidate.worktree ? "" : p.candidate.sha));
  }
  p.harness = plan.id;
  progress.say("harness: " + std::string(plan.id.pinned ? "" : "NOT PINNED — ") + plan.id.how + ", commit " + plan.id.commit +
               ", sha256 " + plan.id.sha256.substr(0, 12));
}

int landing_run(const RunOptions& opt) {
  Progress progress(opt.quiet);
  Prepared p = prepare(opt, progress);
  settle_harness(opt, p, progress);
  const auto names = gates_to_run(opt, p.profile);
  const fs::path reports = opt.out.empty() ? p.repo / "reports" : fs::absolute(opt.out);
  const fs::path work = create_unique_directory(p.cache / "work", p.candidate.id + "-" + std::to_string(::time(nullptr)));
  auto results = run_gates(opt, p, names, progress, work);

  LandingRecord rec;
  rec.candidate_id = p.candidate.id;
  rec.created = utc_now_iso8601();
  rec.repo = p.repo.string();
  rec.baseline = to_json(p.baseline);
  rec.candidate = to_json(p.candidate);
  rec.environment = capture_environment();
  rec.profile_path = p.profile_rel;
  rec.profile = p.profile.data();
  rec.baseline_profile = p.baseline_profile;
  rec.baseline_profile_note = p.baseline_profile_note;
  rec.profile_changes = p.changes;
  rec.profile_sha256 = p.profile.sha256();
  rec.harness = to_json(p.harness);
  rec.enabled_gates = names;
  for (const auto& r : results) rec.put(r);
  rec.recompute_verdict();

  Ledger ledger(reports);
  rec.id = ledger.reserve(rec.candidate_id);
  ledger.append(rec);
  progress.say("report " + (reports / rec.id).string() + ": " + std::string(to_string(rec.verdict)) + " — " + rec.verdict_reason);
  std::cout << "report: " << (reports / rec.id).string() << "\n"
            << "verdict: " << to_string(rec.verdict) << "\n";
  std::cout << gate_lines(rec.gates);
  return exit_code_for(rec.verdict);
}

GateEvaluation evaluate_gates(const RunOptions& opt) {
  Progress progress(opt.quiet);
  Prepared p = prepare(opt, progress);
  settle_harness(opt, p, progress);
  GateEvaluation e;
  e.baseline = p.baseline;
  e.candidate = p.candidate;
  e.cache = p.cache;
  const fs::path work = create_unique_directory(p.cache / "work", p.candidate.id + "-" + std::to_string(::time(nullptr)));
  e.results = run_gates(opt, p, opt.only, progress, work);
  return e;
}

int landing_gate(const RunOptions& opt) {
  const GateEvaluation e = evaluate_gates(opt);
  const fs::path out = opt.out.empty() ? e.cache / "results" / e.candidate.id : fs::absolute(opt.out);
  const auto& results = e.results;
  int code = kExitPass;
  for (const auto& r : results) {
    write_text_atomic(out / "gates" / (r.gate + ".json"), to_json(r).dump(1) + "\n");
    // Reasons and check names may carry candidate output: escaped for the terminal.
    std::cout << r.gate << ": " << to_string(r.status) << " — " << escape_control(r.reason) << "\n";
    if (!r.evidence.empty()) std::cout << "  evidence: " << escape_control(r.evidence) << "\n";
    for (const auto& c : r.checks)
      if (c.status == Status::Fail) std::cout << "  FAIL " << escape_control(c.name) << ": " << escape_control(c.reason) << "\n";
    const int c = exit_code_for(r.status);
    if (c == kExitFail || (c == kExitIncomplete && code == kExitPass)) code = c;
  }
  std::cout << "results: " << (out / "gates").string() << "  (add them to a report with `landing import " << out.string() << "`)\n";
  return code;
}

}  // namespace pfx::gates

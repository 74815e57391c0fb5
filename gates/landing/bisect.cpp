// git bisect driven by a gate (see bisect.h).
#include "landing/bisect.h"

#include <fnmatch.h>

#include <ctime>
#include <iostream>
#include <regex>
#include <sstream>

#include "run/git.h"
#include "util/process.h"
#include "core/progress.h"
#include "report/landing_record.h"
#include "util/enum_names.h"
#include "util/error.h"
#include "util/unique_name.h"

namespace pfx::gates {

namespace fs = std::filesystem;
using nlohmann::json;

constexpr EnumName<StepVerdict> kStepVerdictNames[] = {
    {StepVerdict::Good, "good"}, {StepVerdict::Bad, "bad"}, {StepVerdict::Skip, "skip"}};

const char* to_string(StepVerdict v) { return name_of(kStepVerdictNames, v, "skip"); }

StepVerdict classify(const GateResult& r, const std::string& metric, std::string& why) {
  if (r.gate == "build") {
    why = "does not build (" + r.reason + "): untestable, skipped";
    return StepVerdict::Skip;
  }
  if (!metric.empty()) {
    bool matched = false, undecided = false;
    for (const auto& c : r.checks) {
      if (fnmatch(metric.c_str(), c.name.c_str(), 0) != 0) continue;
      matched = true;
      if (c.status == Status::Fail) {
        why = "check " + c.name + " FAIL: " + c.reason;
        return StepVerdict::Bad;
      }
      undecided |= c.status == Status::Skipped || c.status == Status::Inconclusive;
    }
    if (!matched) {
      why = "no check of " + r.gate + " matches '" + metric + "' (" + std::string(to_string(r.status)) + ": " + r.reason + ")";
      return StepVerdict::Skip;
    }
    why = undecided ? "checks matching '" + metric + "' undecided" : "checks matching '" + metric + "' pass";
    return undecided ? StepVerdict::Skip : StepVerdict::Good;
  }
  why = std::string(to_string(r.status)) + ": " + r.reason;
  switch (r.status) {
    case Status::Fail: return StepVerdict::Bad;
    case Status::Pass:
    case Status::Waived: return StepVerdict::Good;
    default: return StepVerdict::Skip;
  }
}

namespace {

std::string two_digits(size_t n) { return (n < 10 ? "0" : "") + std::to_string(n); }

// The bisect's own worktree: no checkout, git's bisect state only (refs/bisect are per worktree).
class BisectWorktree {
 public:
  BisectWorktree(fs::path repo, fs::path dir) : repo_(std::move(repo)), dir_(std::move(dir)) {
    remove();
    fs::create_directories(dir_.parent_path());
    git(repo_, {"worktree", "add", "--detach", "--no-checkout", dir_.string(), "HEAD"});
  }
  ~BisectWorktree() { remove(); }
  BisectWorktree(const BisectWorktree&) = delete;  // owns (and removes) the worktree
  BisectWorktree& operator=(const BisectWorktree&) = delete;
  const fs::path& dir() const { return dir_; }

 private:
  void remove() {
    if (fs::exists(dir_)) git_result(repo_, {"worktree", "remove", "--force", dir_.string()});
    std::error_code ec;
    fs::remove_all(dir_, ec);
    git_result(repo_, {"worktree", "prune"});
  }
  fs::path repo_, dir_;
};

}  // namespace

BisectOutcome landing_bisect(const BisectOptions& opt) {
  Progress progress(opt.run.quiet);
  const fs::path repo = repo_root(opt.run.repo.empty() ? fs::current_path() : fs::absolute(opt.run.repo));
  const fs::path cache = opt.run.cache.empty() ? repo / ".landing" : fs::absolute(opt.run.cache);
  const std::string good = resolve_commit(repo, opt.good), bad = resolve_commit(repo, opt.bad);
  if (good == bad) fail("--good and --bad are the same commit (", short_sha(good), "): nothing to bisect");
  if (!git_result(repo, {"merge-base", "--is-ancestor", good, bad}).ok())
    fail("--good ", opt.good, " (", short_sha(good), ") is not an ancestor of --bad ", opt.bad, " (", short_sha(bad), ")");

  BisectOutcome o;
  o.good = good;
  o.bad = bad;
  o.out = !opt.out.empty() ? fs::absolute(opt.out)
                           : create_unique_directory(cache / "bisect", short_sha(good) + "-" + short_sha(bad) + "-" +
                                                                            opt.gate + "-" + std::to_string(::time(nullptr)));
  if (fs::exists(o.out) && !fs::is_empty(o.out)) fail(o.out.string(), ": exists and is not empty (nothing is overwritten)");
  fs::create_directories(o.out / "steps");

  auto evaluate = [&](const std::string& sha, const std::string& role) {
    BisectStep s;
    s.sha = sha;
    s.role = role;
    s.subject = git(repo, {"log", "-1", "--format=%s", sha});
    progress.say("bisect " + role + ": " + short_sha(sha) + " " + s.subject + " — gate " + opt.gate);
    RunOptions run = opt.run;
    run.baseline = good;
    run.candidate = sha;
    run.only = {opt.gate};
    run.same_expected = sha == good;
    run.judge_here = true;  // one process judges every step (landing/harness.h)
    GateEvaluation e = evaluate_gates(run);
    s.result = e.results.empty() ? skipped_result(opt.gate, "no result") : e.results.front();
    s.verdict = classify(s.result, opt.metric, s.why);
    s.evidence = "steps/" + two_digits(o.steps.size()) + "-" + short_sha(sha) + "-" + to_string(s.verdict) + ".json";
    json j = {{"schema", "landing-bisect-step/1"}, {"sha", sha}, {"subject", s.subject}, {"role", role},
              {"verdict", to_string(s.verdict)}, {"why", s.why}, {"result", to_json(s.result)}};
    write_text_atomic(o.out / s.evidence, j.dump(1) + "\n");
    progress.say("bisect " + role + ": " + short_sha(sha) + " is " + to_string(s.verdict) + " — " + s.why);
    o.steps.push_back(s);
    return s.verdict;
  };

  // Both ends first: a bisect over a range whose ends do not differ finds nothing real.
  if (evaluate(bad, "bad end") != StepVerdict::Bad) {
    o.problem = "the gate does not mark --bad " + short_sha(bad) + " bad (" + o.steps.back().why + "): nothing to bisect";
  } else if (evaluate(good, "good end") != StepVerdict::Good) {
    o.problem = "the gate does not mark --good " + short_sha(good) + " good (" + o.steps.back().why + ")";
  }
  if (!o.problem.empty()) {
    write_text_atomic(o.out / "bisect.md", render_bisect_markdown(opt, o));
    write_text_atomic(o.out / "bisect.json", bisect_to_json(opt, o).dump(1) + "\n");
    return o;
  }

  BisectWorktree wt(repo, cache / "bisect-worktree" / (short_sha(good) + "-" + short_sha(bad)));
  auto step = [&](const std::vector<std::string>& args) {
    const auto r = git_result(wt.dir(), args);
    // `git bisect skip` exits 2 when only skipped commits are left: an answer, not a failure.
    if (!r.ok() && !(r.exited && r.exit_code == 2)) fail("git bisect ", args.size() > 1 ? args[1] : "", ": ", r.tail(6));
    return r.out;
  };
  std::string said = step({"bisect", "start", "--no-checkout", bad, good});
  const std::regex first_bad("([0-9a-f]{40}) is the first bad commit");
  for (int n = 1;; ++n) {
    std::smatch m;
    if (std::regex_search(said, m, first_bad)) {
      o.first_bad = m[1];
      break;
    }
    if (said.find("only 'skip'ped commits left") != std::string::npos) {
      std::stringstream ss(said.substr(said.find("could be any of:")));
      for (std::string line; std::getline(ss, line);)
        if (std::regex_match(line, std::regex("[0-9a-f]{40}"))) o.could_be.push_back(line);
      break;
    }
    const std::string next = git(wt.dir(), {"rev-parse", "BISECT_HEAD"});
    const StepVerdict v = evaluate(next, "step " + std::to_string(n));
    said = step({"bisect", to_string(v)});
  }
  write_text_atomic(o.out / "bisect.md", render_bisect_markdown(opt, o));
  write_text_atomic(o.out / "bisect.json", bisect_to_json(opt, o).dump(1) + "\n");
  return o;
}

}  // namespace pfx::gates

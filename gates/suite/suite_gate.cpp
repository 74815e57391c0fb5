// suite gate (see suite_gate.h).
#include "suite/suite_gate.h"

#include <thread>

#include "suite/suite_report.h"
#include "util/error.h"

namespace pfx::gates {

namespace fs = std::filesystem;

void judge_junit(GateResult& r, const JUnitReport& rep) {
  nlohmann::json failed = nlohmann::json::array(), skipped = nlohmann::json::array();
  for (const auto& c : rep.cases) {
    if (c.outcome == TestOutcome::Failed) {
      Check ch;
      ch.name = c.name;
      ch.status = Status::Fail;
      ch.reason = "test failed" + (c.message.empty() ? std::string() : ": " + c.message.substr(0, 600));
      ch.metrics = {{"time_s", c.time_s}, {"suite", c.suite}};
      r.checks.push_back(ch);
      failed.push_back(c.name);
    } else if (c.outcome == TestOutcome::Skipped) {
      skipped.push_back({{"name", c.name}, {"reason", c.message}});
    }
  }
  const int total = rep.passed + rep.failed + rep.skipped;
  if (total > 0 && rep.passed + rep.failed > 0) {
    Check all;
    all.name = "ctest";
    all.status = Status::Pass;
    all.reason = std::to_string(rep.passed) + " passed, " + std::to_string(rep.failed) + " failed, " +
                 std::to_string(rep.skipped) + " skipped";
    all.metrics = {{"passed", rep.passed}, {"failed", rep.failed}, {"skipped", rep.skipped}};
    r.checks.push_back(all);
  } else if (total > 0) {
    r.checks.push_back(hard_failure("ctest", "all " + std::to_string(total) + " tests were skipped: nothing was checked"));
  }
  r.details["passed"] = rep.passed;
  r.details["failed"] = rep.failed;
  r.details["skipped"] = rep.skipped;
  r.details["failed_tests"] = failed;
  r.details["skipped_tests"] = skipped;
  r.evidence = "suite " + std::to_string(rep.passed) + "/" + std::to_string(rep.failed) + "/" +
               std::to_string(rep.skipped) + " (passed/failed/skipped)";
  add_suite_output(r, rep);
  if (!failed.empty()) {
    r.evidence += "; failing: ";
    for (size_t i = 0; i < failed.size() && i < 5; ++i) r.evidence += (i ? ", " : "") + failed[i].get<std::string>();
    if (failed.size() > 5) r.evidence += ", +" + std::to_string(failed.size() - 5) + " more";
  }
}

GateResult run_suite_gate(const GateContext& ctx) {
  GateResult r = ctx.start();
  fs::create_directories(ctx.work_dir);
  const fs::path junit = fs::absolute(ctx.work_dir / "ctest-junit.xml");
  fs::remove(junit);
  const long jobs = ctx.profile.integer("suite", "jobs", 0);
  std::vector<std::string> argv = {"ctest", "--test-dir", ctx.candidate.dir.string(), "--output-junit", junit.string(),
                                   "--no-tests=error", "-j",
                                   std::to_string(jobs > 0 ? jobs : std::max(1u, std::thread::hardware_concurrency()))};
  auto labels = ctx.profile.strings("suite", "exclude_labels");
  bool has_e2e = false;
  for (const auto& l : labels) has_e2e |= l == "landing-e2e";
  if (!has_e2e) labels.push_back("landing-e2e");  // never recurse into landing's own e2e tests
  std::string regex;
  for (const auto& l : labels) regex += (regex.empty() ? "" : "|") + ("^" + l + "$");
  argv.insert(argv.end(), {"-LE", regex});
  const double per_test = ctx.profile.number("suite", "test_timeout_s", 0);
  if (per_test > 0) argv.insert(argv.end(), {"--timeout", std::to_string(static_cast<long>(per_test))});
  ProcessSpec spec;
  spec.argv = argv;
  spec.timeout_s = ctx.deadline.remaining();
  spec.env = {{"PFX_FIXTURES", ctx.fixtures_dir.string()}};
  spec.merge_stderr_into_stdout = true;
  ctx.say("ctest " + ctx.candidate.dir.string() + " (excluding labels " + regex + ")");
  const auto p = run_process(spec);
  const std::string cmd = shell_join(argv, spec.env);
  r.details["ctest_command"] = cmd;
  r.details["ctest_exit"] = p.describe();
  r.details["junit"] = junit.string();
  if (p.timed_out || p.signal) {
    r.checks.push_back(hard_failure("ctest",
                                    (p.timed_out ? "hang: ctest " : "crash: ctest ") + p.describe() + " (gate timeout " +
                                        std::to_string(static_cast<long>(ctx.deadline.limit())) + " s)",
                                    cmd));
  } else if (!fs::exists(junit)) {
    r.checks.push_back(hard_failure("ctest", "ctest " + p.describe() + " and wrote no JUnit file: " + p.tail(6), cmd));
  } else {
    try {
      judge_junit(r, read_junit(junit));
      for (auto& c : r.checks) c.command = cmd + " -R '^" + c.name + "$'";
    } catch (const Error& e) {
      r.checks.push_back(hard_failure("ctest", e.what()));
    }
  }
  finish(r, ctx.profile, ctx.deadline.elapsed());
  return r;
}

}  // namespace pfx::gates

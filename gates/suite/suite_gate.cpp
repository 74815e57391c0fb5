// suite gate (see suite_gate.h).
#include "suite/suite_gate.h"

#include <thread>

#include "suite/suite_judge.h"
#include "util/error.h"

namespace pfx::gates {

namespace fs = std::filesystem;

void judge_junit(GateResult& r, const JUnitReport& rep, int ctest_exit) {
  r.details["tests"] = suite_tests(rep);
  if (!r.details.contains("runs"))
    r.details["runs"] = nlohmann::json::array({{{"host", r.host.value("host", std::string("here"))}, {"ctest_exit", ctest_exit}}});
  judge_suite(r);
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
  // A GPU host's share: only the tests with these labels (suite_judge.cpp judges it incomplete
  // until it is joined with a run of the whole suite).
  std::string share;
  for (const auto& l : ctx.suite_labels) share += (share.empty() ? "" : "|") + ("^" + l + "$");
  if (!share.empty()) argv.insert(argv.end(), {"-L", share});
  const double per_test = ctx.profile.number("suite", "test_timeout_s", 0);
  if (per_test > 0) argv.insert(argv.end(), {"--timeout", std::to_string(static_cast<long>(per_test))});
  ProcessSpec spec;
  spec.argv = argv;
  spec.timeout_s = ctx.deadline.remaining();
  spec.env = {{"PFX_FIXTURES", ctx.fixtures_dir.string()}};
  spec.merge_stderr_into_stdout = true;
  ctx.say("ctest " + ctx.candidate.dir.string() + " (excluding labels " + regex + (share.empty() ? "" : ", only " + share) + ")");
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
      r.details["runs"] = nlohmann::json::array(
          {{{"host", r.host.value("host", std::string("?"))}, {"ctest_exit", p.exited ? p.exit_code : -1}, {"note", p.tail(3)},
            {"labels", ctx.suite_labels}}});
      judge_junit(r, read_junit(junit), p.exited ? p.exit_code : -1);
      for (auto& c : r.checks) c.command = cmd + " -R '^" + c.name + "$'";
    } catch (const Error& e) {
      r.checks.push_back(hard_failure("ctest", e.what()));
    }
  }
  finish(r, ctx.profile, ctx.deadline.elapsed());
  return r;
}

}  // namespace pfx::gates

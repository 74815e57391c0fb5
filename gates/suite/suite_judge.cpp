// Suite judgement and the join of two hosts' runs (see suite_judge.h).
#include "suite/suite_judge.h"

#include <map>

#include "suite/suite_report.h"
#include "util/enum_names.h"
#include "util/error.h"

namespace pfx::gates {

using nlohmann::json;

namespace {

constexpr EnumName<TestOutcome> kOutcomeNames[] = {
    {TestOutcome::Passed, "passed"}, {TestOutcome::Failed, "failed"}, {TestOutcome::Skipped, "skipped"}};

const char* outcome_text(TestOutcome o) { return name_of(kOutcomeNames, o, "?"); }

// failed beats passed beats skipped: a test that ran somewhere says more than one that did not.
int rank(const std::string& outcome) { return outcome == "failed" ? 2 : outcome == "passed" ? 1 : 0; }

// A test's time as ctest's JUnit gave it (seconds; 0 when absent).
double test_seconds(const json& t) { return t.contains("time_s") && t["time_s"].is_number() ? t["time_s"].get<double>() : 0.0; }

}  // namespace

json suite_tests(const JUnitReport& rep) {
  json tests = json::array();
  for (const auto& c : rep.cases) {
    json t = {{"name", c.name}, {"outcome", outcome_text(c.outcome)}, {"time_s", c.time_s}};
    if (!c.message.empty()) t["message"] = c.message.substr(0, 600);
    tests.push_back(t);
  }
  return tests;
}

namespace {

// True when one of the joined runs ran the whole suite (no label filter).
bool covers_whole_suite(const json& runs) {
  if (runs.empty()) return true;  // a result from before shares existed ran everything
  for (const auto& run : runs)
    if (run.value("labels", json::array()).empty()) return true;
  return false;
}

std::string share_labels(const json& runs) {
  std::string out;
  for (const auto& run : runs)
    for (const auto& l : run.value("labels", json::array()))
      if (l.is_string()) out += (out.empty() ? "" : ",") + l.get<std::string>();
  return out;
}

}  // namespace

void judge_suite(GateResult& r) {
  r.checks.clear();
  const json tests = r.details.value("tests", json::array());
  const json runs = r.details.value("runs", json::array());
  int passed = 0, failed = 0, skipped = 0;
  double seconds = 0;  // ctest's own per-test times, summed: the "ctest" check's time
  json failed_names = json::array(), skipped_list = json::array();
  for (const auto& t : tests) {
    seconds += test_seconds(t);
    const std::string name = t.value("name", std::string("?")), outcome = t.value("outcome", std::string());
    if (outcome == "failed") {
      ++failed;
      Check ch;
      ch.name = name;
      ch.status = Status::Fail;
      ch.reason = "test failed" + (t.value("message", std::string()).empty() ? std::string() : ": " + t.value("message", std::string()));
      ch.metrics["duration_s"] = test_seconds(t);
      r.checks.push_back(ch);
      failed_names.push_back(name);
    } else if (outcome == "passed") {
      ++passed;
    } else {
      ++skipped;
      skipped_list.push_back({{"name", name}, {"reason", t.value("message", std::string())}});
    }
  }
  // ctest said something failed but named no test: the failure is real (a test that did not
  // start, a fixture that broke, --no-tests=error) even if no <testcase> shows it.
  for (const auto& run : runs) {
    const int code = run.value("ctest_exit", 0);
    if (code != 0 && failed == 0) {
      Check c;
      c.name = "ctest";
      c.status = Status::Fail;
      c.waivable = false;
      c.reason = "ctest exited " + std::to_string(code) + " on " + run.value("host", std::string("?")) +
                 " but no test is named as failing: " + run.value("note", std::string("see its output"));
      r.checks.push_back(c);
    }
  }
  Check all;
  all.name = "ctest";
  all.metrics = {{"passed", passed}, {"failed", failed}, {"skipped", skipped}, {"duration_s", seconds}};
  const std::string counts = std::to_string(passed) + " passed, " + std::to_string(failed) + " failed, " +
                             std::to_string(skipped) + " skipped";
  if (passed + failed == 0) {
    all.status = Status::Fail;
    all.waivable = false;
    all.reason = tests.empty() ? "no test ran: nothing was checked" : "all " + std::to_string(skipped) + " tests were skipped: nothing was checked";
  } else if (!covers_whole_suite(runs)) {
    // A GPU host's share (landing gate suite --suite-labels) lists only the tests it ran: the
    // others are absent, not passed, until a run of the whole suite is joined to it.
    all.status = Status::Inconclusive;
    all.reason = counts + " in a share of the suite (only labels " + share_labels(runs) +
                 "); `landing import` it into the report whose suite ran everything";
  } else if (skipped > 0) {
    all.status = Status::Inconclusive;
    all.reason = counts + ": " + std::to_string(skipped) + " required tests did not run (first: " +
                 skipped_list[0].value("name", std::string()) + " — " + skipped_list[0].value("reason", std::string()).substr(0, 120) +
                 "); run `landing gate suite` where they can run (the GPU host) and `landing import` it";
  } else {
    all.status = Status::Pass;
    all.reason = counts;
  }
  r.checks.push_back(all);
  r.details["passed"] = passed;
  r.details["failed"] = failed;
  r.details["skipped"] = skipped;
  r.details["failed_tests"] = failed_names;
  r.details["skipped_tests"] = skipped_list;
  r.evidence = "suite " + std::to_string(passed) + "/" + std::to_string(failed) + "/" + std::to_string(skipped) +
               " (passed/failed/skipped)" + (runs.size() > 1 ? " over " + std::to_string(runs.size()) + " joined runs" : "");
  if (!failed_names.empty()) {
    r.evidence += "; failing: ";
    for (size_t i = 0; i < failed_names.size() && i < 5; ++i) r.evidence += (i ? ", " : "") + failed_names[i].get<std::string>();
    if (failed_names.size() > 5) r.evidence += ", +" + std::to_string(failed_names.size() - 5) + " more";
  }
  // The figures follow the judged evidence (here or re-judged on import), never a file's own.
  JUnitReport rep;
  rep.passed = passed;
  rep.failed = failed;
  rep.skipped = skipped;
  for (const auto& t : tests) {
    JUnitCase c;
    c.name = t.value("name", std::string("?"));
    const std::string outcome = t.value("outcome", std::string());
    c.outcome = outcome == "failed" ? TestOutcome::Failed : outcome == "passed" ? TestOutcome::Passed : TestOutcome::Skipped;
    c.message = t.value("message", std::string());
    c.time_s = test_seconds(t);
    rep.cases.push_back(c);
  }
  r.rows.clear();
  r.tables.clear();
  add_suite_output(r, rep);
}

GateResult join_suite(const GateResult& local, const GateResult& imported) {
  GateResult j = local;
  std::map<std::string, json> by_name;
  std::vector<std::string> order;
  for (const GateResult* r : {&local, &imported})
    for (const auto& t : r->details.value("tests", json::array())) {
      const std::string name = t.value("name", std::string());
      auto it = by_name.find(name);
      if (it == by_name.end()) {
        by_name[name] = t;
        order.push_back(name);
      } else if (rank(t.value("outcome", std::string())) > rank(it->second.value("outcome", std::string()))) {
        it->second = t;
      }
    }
  json tests = json::array();
  for (const auto& n : order) tests.push_back(by_name[n]);
  json runs = json::array();
  for (const GateResult* r : {&local, &imported})
    for (const auto& run : r->details.value("runs", json::array())) runs.push_back(run);
  j.details["tests"] = tests;
  j.details["runs"] = runs;
  j.reason.clear();
  judge_suite(j);
  return j;
}

}  // namespace pfx::gates

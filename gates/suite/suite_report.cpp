// The suite gate's typed figures (see suite_report.h).
#include "suite/suite_report.h"

namespace pfx::gates {

using nlohmann::json;

void add_suite_output(GateResult& r, const JUnitReport& rep) {
  Row row;
  row.metric = "suite passed/failed/skipped";
  row.candidate = text_cell(std::to_string(rep.passed) + "/" + std::to_string(rep.failed) + "/" + std::to_string(rep.skipped));
  row.check = "ctest";
  r.rows.push_back(row);
  Table t;
  t.id = "suite";
  t.title = "suite: tests that did not pass";
  t.columns = {{"test", "", {}}, {"outcome", "", {}}, {"time", "s", fixed_format(1)}, {"message", "", {}}};
  for (const TestOutcome want : {TestOutcome::Failed, TestOutcome::Skipped})
    for (const auto& c : rep.cases) {
      if (c.outcome != want) continue;
      TableRow tr{{text_cell(c.name), text_cell(want == TestOutcome::Failed ? "failed" : "skipped"), number_cell(c.time_s),
                   text_cell(c.message.substr(0, 300))}};
      if (want == TestOutcome::Failed) tr.check = c.name;
      t.rows.push_back(tr);
    }
  if (!t.rows.empty()) r.tables.push_back(t);
}

void read_legacy_suite_output(GateResult& r) {
  const json& d = r.details;
  if (!d.contains("passed")) return;
  JUnitReport rep;
  rep.passed = d.value("passed", 0);
  rep.failed = d.value("failed", 0);
  rep.skipped = d.value("skipped", 0);
  for (const auto& name : d.value("failed_tests", json::array()))
    if (name.is_string()) {
      JUnitCase c;
      c.name = name.get<std::string>();
      c.outcome = TestOutcome::Failed;
      for (const auto& ch : r.checks)
        if (ch.name == c.name) c.message = ch.reason;
      rep.cases.push_back(c);
    }
  for (const auto& s : d.value("skipped_tests", json::array()))
    if (s.is_object()) {
      JUnitCase c;
      c.name = s.value("name", std::string());
      c.message = s.value("reason", std::string());
      c.outcome = TestOutcome::Skipped;
      rep.cases.push_back(c);
    }
  add_suite_output(r, rep);
}

}  // namespace pfx::gates

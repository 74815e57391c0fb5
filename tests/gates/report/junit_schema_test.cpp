// junit.xml against the JUnit schema Jenkins and GitLab read (junit.xsd beside this file, written
// from the format's public description), with xmllint (Debian's libxml2-utils): the sample record and
// every report of the project's own ledger (reports/), re-rendered; then what landing's JUnit carries
// on top of the schema: a testsuite per gate with time, timestamp and hostname, a testcase per check
// (classname = the gate), failure type, skipped message.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <unistd.h>

#include "util/process.h"
#include "junit/xml.h"
#include "landing/gate_registry.h"
#include "report/junit_out.h"
#include "report/landing_record.h"
#include "sample_record.h"

using namespace pfx;
using namespace pfx::gates;
namespace fs = std::filesystem;

namespace {
ProcessResult xmllint(const fs::path& xml) {
  ProcessSpec s;
  s.argv = {"xmllint", "--noout", "--schema", PFX_JUNIT_XSD, xml.string()};
  s.timeout_s = 60;
  s.merge_stderr_into_stdout = true;
  return run_process(s);
}

// The landing-specific structure, over the parsed document.
void expect_landing_shape(const std::string& xml, const LandingRecord& r, const std::string& what) {
  const auto root = parse_xml(xml, what);
  ASSERT_EQ(root->name, "testsuites") << what;
  size_t suites = 0;
  for (const auto& suite : root->children) {
    if (suite->name != "testsuite") continue;
    ++suites;
    const std::string gate = suite->attr("name");
    const GateResult* g = r.gate(gate);
    EXPECT_FALSE(suite->attr("time").empty()) << what << " " << gate;
    EXPECT_FALSE(suite->attr("hostname").empty()) << what << " " << gate;
    size_t cases = 0;
    for (const auto& tc : suite->children) {
      if (tc->name != "testcase") continue;
      ++cases;
      EXPECT_EQ(tc->attr("classname"), gate) << what;
      EXPECT_FALSE(tc->attr("time").empty()) << what;
      if (const auto* f = tc->child("failure")) {
        EXPECT_EQ(f->attr("type"), "FAIL") << what;
      }
      if (const auto* s = tc->child("skipped")) {
        EXPECT_FALSE(s->attr("message").empty()) << what;
      }
    }
    if (g) {
      EXPECT_EQ(cases, g->checks.empty() ? 1u : g->checks.size()) << what << " " << gate;
      EXPECT_FALSE(suite->attr("timestamp").empty() && !g->started.empty()) << what << " " << gate;
    }
  }
  EXPECT_GE(suites, r.gates.size()) << what;
}
}  // namespace

TEST(JUnitSchema, SampleRecordIsValidJUnit) {
  const fs::path dir = fs::temp_directory_path() / ("pfx-junit-" + std::to_string(::getpid()));
  fs::create_directories(dir);
  auto r = sample_record();
  r.enabled_gates.push_back("race");  // a gate of the profile without a result: a skipped suite
  const std::string xml = render_junit(r);
  std::ofstream(dir / "junit.xml") << xml;
  const auto res = xmllint(dir / "junit.xml");
  EXPECT_TRUE(res.ok()) << res.describe() << "\n" << res.out;
  expect_landing_shape(xml, r, "sample");
  // The schema does refuse what the readers refuse: a testcase without its classname.
  std::string bad = xml;
  bad.replace(bad.find(" classname=\""), 12, " klassname=\"");
  std::ofstream(dir / "bad.xml") << bad;
  EXPECT_FALSE(xmllint(dir / "bad.xml").ok());
  fs::remove_all(dir);
}

TEST(JUnitSchema, EveryReportOfTheRealLedger) {
  register_legacy_output_readers();
  const fs::path dir = fs::temp_directory_path() / ("pfx-junit-ledger-" + std::to_string(::getpid()));
  fs::create_directories(dir);
  size_t reports = 0;
  for (const auto& e : fs::directory_iterator(PFX_LEDGER_DIR)) {
    if (!fs::exists(e.path() / "landing.json")) continue;
    ++reports;
    const auto rec = read_landing_record(e.path() / "landing.json");
    const std::string xml = render_junit(rec);
    const fs::path out = dir / (e.path().filename().string() + ".xml");
    std::ofstream(out) << xml;
    const auto res = xmllint(out);
    EXPECT_TRUE(res.ok()) << e.path().filename() << ": " << res.out;
    expect_landing_shape(xml, rec, e.path().filename().string());
  }
  EXPECT_EQ(reports, 2u);
  fs::remove_all(dir);
}

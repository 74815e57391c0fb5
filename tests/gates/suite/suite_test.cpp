// The suite gate's reading of JUnit: a real CTest JUnit file from this repository's own build
// (gates core tests run with the fixtures hidden, so three fail), and a JUnit that a live CTest run
// of a scratch project writes (pass, fail, skip via SKIP_RETURN_CODE, and a landing-e2e test).
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <unistd.h>

#include "suite/suite_gate.h"
#include "util/error.h"
#include "util/process.h"

using namespace pfx;
using namespace pfx::gates;
namespace fs = std::filesystem;

TEST(JUnit, ReadsRealCtestOutputOfThisRepo) {
  const auto rep = read_junit(fs::path(PFX_SUITE_DATA) / "ctest-junit-real.xml");
  EXPECT_EQ(rep.cases.size(), 16u);
  EXPECT_EQ(rep.failed, 3);
  EXPECT_EQ(rep.passed, 13);
  EXPECT_EQ(rep.skipped, 0);
  int with_reason = 0;
  for (const auto& c : rep.cases)
    if (c.outcome == TestOutcome::Failed) {
      EXPECT_EQ(c.name.rfind("LogitsCompare.", 0), 0u) << c.name;
      with_reason += c.message.find("fixture missing") != std::string::npos;
    }
  EXPECT_EQ(with_reason, 3);  // the exception text, not GoogleTest's banner, is what the report shows
}

TEST(JUnit, JudgeListsFailingTestsAndCounts) {
  GateResult r;
  r.gate = "suite";
  judge_junit(r, read_junit(fs::path(PFX_SUITE_DATA) / "ctest-junit-real.xml"));
  settle_from_checks(r);
  EXPECT_EQ(r.status, Status::Fail);
  EXPECT_NE(r.evidence.find("suite 13/3/0 (passed/failed/skipped)"), std::string::npos) << r.evidence;
  EXPECT_NE(r.evidence.find("LogitsCompare.NonFiniteValuesAreLocated"), std::string::npos);
  EXPECT_EQ(r.details["failed_tests"].size(), 3u);
}

TEST(JUnit, LiveCtestRunWithSkipAndExcludedLabel) {
  const fs::path dir = fs::temp_directory_path() / ("pfx-suite-" + std::to_string(::getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir);
  std::ofstream(dir / "CMakeLists.txt") << R"(cmake_minimum_required(VERSION 3.20)
project(s NONE)
enable_testing()
add_test(NAME passes COMMAND ${CMAKE_COMMAND} -E true)
add_test(NAME fails COMMAND ${CMAKE_COMMAND} -E false)
add_test(NAME skips COMMAND sh -c "echo no GPU; exit 77")
set_tests_properties(skips PROPERTIES SKIP_RETURN_CODE 77)
add_test(NAME e2e COMMAND ${CMAKE_COMMAND} -E false)
set_tests_properties(e2e PROPERTIES LABELS landing-e2e)
)";
  ProcessSpec cfg;
  cfg.argv = {"cmake", "-S", dir.string(), "-B", (dir / "b").string()};
  ASSERT_TRUE(run_process(cfg).ok());
  ProcessSpec ct;
  ct.argv = {"ctest", "--test-dir", (dir / "b").string(), "-LE", "^landing-e2e$", "--output-junit", (dir / "j.xml").string()};
  run_process(ct);
  const auto rep = read_junit(dir / "j.xml");
  EXPECT_EQ(rep.passed, 1);
  EXPECT_EQ(rep.failed, 1);
  EXPECT_EQ(rep.skipped, 1);
  for (const auto& c : rep.cases) EXPECT_NE(c.name, "e2e");
  fs::remove_all(dir);
}

TEST(JUnit, AllSkippedOrMalformedFails) {
  GateResult r;
  r.gate = "suite";
  judge_junit(r, parse_junit("<testsuite><testcase name=\"a\" status=\"notrun\"><skipped message=\"x\"/></testcase></testsuite>", "j.xml"));
  settle_from_checks(r);
  EXPECT_EQ(r.status, Status::Fail);
  EXPECT_THROW(parse_junit("<html></html>", "j.xml"), pfx::Error);
  EXPECT_THROW(parse_junit("<testsuite><testcase/></testsuite>", "j.xml"), pfx::Error);
}

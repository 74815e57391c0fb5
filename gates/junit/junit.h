// JUnit XML test reports (CTest's --output-junit, GoogleTest's --gtest_output=xml, and others):
// every test case with its outcome, time and failure message.
#pragma once
#include <filesystem>
#include <string>
#include <vector>

namespace pfx::gates {

enum class TestOutcome { Passed, Failed, Skipped };

struct JUnitCase {
  std::string suite, classname, name;
  TestOutcome outcome = TestOutcome::Passed;
  double time_s = 0;
  std::string message;  // failure/error/skipped message, plus the tail of system-out for failures
};

struct JUnitReport {
  std::vector<JUnitCase> cases;
  int passed = 0, failed = 0, skipped = 0;
};

JUnitReport parse_junit(const std::string& xml, const std::string& origin);
JUnitReport read_junit(const std::filesystem::path& path);

}  // namespace pfx::gates

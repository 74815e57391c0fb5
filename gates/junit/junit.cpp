// JUnit XML reader (see junit.h).
#include "junit/junit.h"

#include <fstream>
#include <sstream>

#include "junit/xml.h"
#include "util/error.h"

namespace pfx::gates {

namespace {

// The informative part of a failing test's output: GoogleTest's failure lines (the assertion, the
// values, an exception's description) when there are any, else the last lines.
std::string tail_lines(const std::string& s, size_t n) {
  std::vector<std::string> lines;
  std::stringstream ss(s);
  for (std::string l; std::getline(ss, l);)
    if (!l.empty()) lines.push_back(l);
  std::string picked;
  size_t count = 0;
  for (size_t i = 0; i < lines.size() && count < n; ++i) {
    const auto& l = lines[i];
    if (l.find("Failure") != std::string::npos || l.find("exception") != std::string::npos ||
        l.find("Expected") != std::string::npos || l.find("Which is") != std::string::npos ||
        l.find("Value of") != std::string::npos || l.find("Actual") != std::string::npos) {
      picked += l + "\n";
      ++count;
    }
  }
  if (!picked.empty()) return picked;
  std::string out;
  for (size_t i = lines.size() > n ? lines.size() - n : 0; i < lines.size(); ++i) out += lines[i] + "\n";
  return out;
}

void collect(const XmlElement& el, const std::string& suite, JUnitReport& rep, const std::string& origin) {
  if (el.name == "testsuites" || el.name == "testsuite") {
    const std::string s = el.name == "testsuite" ? el.attr("name", suite) : suite;
    for (const auto& c : el.children) collect(*c, s, rep, origin);
    return;
  }
  if (el.name != "testcase") return;
  JUnitCase tc;
  tc.suite = suite;
  tc.name = el.attr("name");
  if (tc.name.empty()) fail(origin, ": a <testcase> has no name attribute");
  tc.classname = el.attr("classname");
  try {
    tc.time_s = std::stod(el.attr("time", "0"));
  } catch (...) {
    tc.time_s = 0;
  }
  const std::string status = el.attr("status");  // CTest: run | fail | notrun | disabled
  const XmlElement* failure = el.child("failure");
  if (!failure) failure = el.child("error");
  const XmlElement* skipped = el.child("skipped");
  if (failure || status == "fail") {
    tc.outcome = TestOutcome::Failed;
    if (failure) tc.message = failure->attr("message", failure->text);
    if (const XmlElement* out = el.child("system-out")) tc.message += (tc.message.empty() ? "" : "\n") + tail_lines(out->text, 8);
  } else if (skipped || status == "notrun" || status == "disabled") {
    tc.outcome = TestOutcome::Skipped;
    if (skipped) tc.message = skipped->attr("message", skipped->text);
    if (tc.message.empty()) tc.message = status;
  }
  switch (tc.outcome) {
    case TestOutcome::Passed: ++rep.passed; break;
    case TestOutcome::Failed: ++rep.failed; break;
    case TestOutcome::Skipped: ++rep.skipped; break;
  }
  rep.cases.push_back(tc);
}

}  // namespace

JUnitReport parse_junit(const std::string& xml, const std::string& origin) {
  const auto root = parse_xml(xml, origin);
  if (root->name != "testsuites" && root->name != "testsuite")
    fail(origin, ": root element is <", root->name, ">, expected <testsuites> or <testsuite> (JUnit XML)");
  JUnitReport rep;
  collect(*root, "", rep, origin);
  return rep;
}

JUnitReport read_junit(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) fail(path.string(), ": cannot open JUnit file");
  std::stringstream ss;
  ss << in.rdbuf();
  return parse_junit(ss.str(), path.string());
}

}  // namespace pfx::gates

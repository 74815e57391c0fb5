// JUnit rendering of a landing record (see junit_out.h).
#include "report/junit_out.h"

#include <sstream>

#include "junit/xml.h"
#include "util/text_format.h"

namespace pfx::gates {

std::string render_junit(const LandingRecord& r) {
  int failures = 0, skipped = 0, tests = 0;
  for (const auto& g : r.gates) {
    ++tests;
    failures += g.status == Status::Fail;
    skipped += g.status == Status::Skipped || g.status == Status::Inconclusive;
  }
  for (const auto& n : r.enabled_gates)
    if (!r.gate(n)) {
      ++tests;
      ++skipped;
    }
  std::ostringstream o;
  o << "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<testsuites name=\"landing\" tests=\"" << tests << "\" failures=\"" << failures
    << "\">\n  <testsuite name=\"landing " << xml_escape(r.id) << "\" tests=\"" << tests << "\" failures=\"" << failures
    << "\" skipped=\"" << skipped << "\" errors=\"0\" timestamp=\"" << xml_escape(r.created) << "\">\n";
  o << "    <properties><property name=\"verdict\" value=\"" << to_string(r.verdict) << "\"/><property name=\"candidate\" value=\""
    << xml_escape(r.candidate.value("sha", std::string())) << "\"/><property name=\"baseline\" value=\""
    << xml_escape(r.baseline.value("sha", std::string())) << "\"/></properties>\n";
  for (const auto& g : r.gates) {
    o << "    <testcase classname=\"landing\" name=\"" << xml_escape(g.gate) << "\" time=\"" << fixed(g.duration_s, 3) << "\">\n";
    if (g.status == Status::Fail)
      o << "      <failure message=\"" << xml_escape(g.reason) << "\">" << xml_escape(g.evidence + "\nreproduce: " + g.command)
        << "</failure>\n";
    else if (g.status == Status::Skipped || g.status == Status::Inconclusive)
      o << "      <skipped message=\"" << to_string(g.status) << ": " << xml_escape(g.reason) << "\"/>\n";
    std::string out = g.evidence;
    for (const auto& c : g.checks)
      if (c.status == Status::Waived) out += "\nWAIVED " + c.name + ": " + c.reason + " (waiver: " + c.waiver + ")";
    o << "      <system-out>" << xml_escape(out) << "</system-out>\n    </testcase>\n";
  }
  for (const auto& n : r.enabled_gates)
    if (!r.gate(n))
      o << "    <testcase classname=\"landing\" name=\"" << xml_escape(n) << "\" time=\"0\">\n      <skipped message=\"not run\"/>\n    </testcase>\n";
  o << "  </testsuite>\n</testsuites>\n";
  return o.str();
}

}  // namespace pfx::gates

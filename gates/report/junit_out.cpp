// JUnit rendering of a landing record (see junit_out.h).
#include "report/junit_out.h"

#include <sstream>

#include "junit/xml.h"
#include "util/text_format.h"

namespace pfx::gates {

namespace {

bool counts_skipped(Status s) { return s == Status::Skipped || s == Status::Inconclusive; }

// A check's own time (seconds): the runs behind it, where the gate timed them (metrics
// duration_s; a failed engine call's wall_s); a check judged from the gate's shared evidence has
// none and says 0 (the testsuite carries the gate's time).
double check_seconds(const Check& c) {
  for (const char* key : {"duration_s", "time_s", "seconds", "wall_s"})
    if (c.metrics.is_object() && c.metrics.contains(key) && c.metrics[key].is_number()) return c.metrics[key].get<double>();
  return 0;
}

// One testcase: `status`, `reason`, `body` (the failure's text: evidence and reproduce command).
void testcase(std::ostringstream& o, const std::string& classname, const std::string& name, double seconds, Status status,
              const std::string& reason, const std::string& body, const std::string& out) {
  o << "    <testcase classname=\"" << xml_escape(classname) << "\" name=\"" << xml_escape(name) << "\" time=\"" << fixed(seconds, 3) << "\">\n";
  if (status == Status::Fail)
    o << "      <failure type=\"FAIL\" message=\"" << xml_escape(reason) << "\">" << xml_escape(body) << "</failure>\n";
  else if (counts_skipped(status))
    o << "      <skipped message=\"" << to_string(status) << ": " << xml_escape(reason) << "\"/>\n";
  if (!out.empty()) o << "      <system-out>" << xml_escape(out) << "</system-out>\n";
  o << "    </testcase>\n";
}

}  // namespace

std::string render_junit(const LandingRecord& r) {
  int tests = 0, failures = 0, skipped = 0;
  double seconds = 0;
  for (const auto& g : r.gates) {
    const size_t n = g.checks.empty() ? 1 : g.checks.size();
    tests += static_cast<int>(n);
    seconds += g.duration_s;
    if (g.checks.empty()) {
      failures += g.status == Status::Fail;
      skipped += counts_skipped(g.status);
    }
    for (const auto& c : g.checks) {
      failures += c.status == Status::Fail;
      skipped += counts_skipped(c.status);
    }
  }
  for (const auto& n : r.enabled_gates)
    if (!r.gate(n)) ++tests, ++skipped;
  const std::string host = r.environment.is_object() ? r.environment.value("host", std::string()) : std::string();
  std::ostringstream o;
  o << "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<testsuites name=\"landing " << xml_escape(r.id) << "\" tests=\"" << tests
    << "\" failures=\"" << failures << "\" errors=\"0\" skipped=\"" << skipped << "\" time=\"" << fixed(seconds, 3) << "\"";
  if (!r.created.empty()) o << " timestamp=\"" << xml_escape(r.created) << "\"";
  o << ">\n";
  // A testsuite per gate, a testcase per check (classname = the gate); a gate that made no checks
  // (skipped before it began, or broken) is one testcase named after itself.
  for (const auto& g : r.gates) {
    int f = 0, s = 0;
    for (const auto& c : g.checks) f += c.status == Status::Fail, s += counts_skipped(c.status);
    if (g.checks.empty()) f = g.status == Status::Fail, s = counts_skipped(g.status);
    const std::string gate_host = g.host.is_object() && g.host.contains("host") ? g.host.value("host", std::string()) : host;
    o << "  <testsuite name=\"" << xml_escape(g.gate) << "\" package=\"landing\" tests=\"" << (g.checks.empty() ? 1 : g.checks.size())
      << "\" failures=\"" << f << "\" errors=\"0\" skipped=\"" << s << "\" time=\"" << fixed(g.duration_s, 3) << "\"";
    if (!g.started.empty()) o << " timestamp=\"" << xml_escape(g.started) << "\"";
    if (!gate_host.empty()) o << " hostname=\"" << xml_escape(gate_host) << "\"";
    o << ">\n    <properties><property name=\"status\" value=\"" << to_string(g.status) << "\"/><property name=\"reason\" value=\""
      << xml_escape(g.reason) << "\"/><property name=\"required\" value=\"" << (g.required ? "true" : "false")
      << "\"/><property name=\"verdict\" value=\"" << to_string(r.verdict) << "\"/><property name=\"candidate\" value=\""
      << xml_escape(r.candidate.value("sha", std::string())) << "\"/><property name=\"baseline\" value=\""
      << xml_escape(r.baseline.value("sha", std::string())) << "\"/>";
    if (!g.command.empty()) o << "<property name=\"reproduce\" value=\"" << xml_escape(g.command) << "\"/>";
    o << "</properties>\n";
    if (g.checks.empty())
      testcase(o, g.gate, g.gate, g.duration_s, g.status, g.reason, g.evidence + "\nreproduce: " + g.command, g.evidence);
    for (const auto& c : g.checks) {
      std::string out = c.status == Status::Waived ? "WAIVED: " + c.reason + " (waiver: " + c.waiver + ")" : c.reason;
      const std::string command = c.command.empty() ? g.command : c.command;
      testcase(o, g.gate, c.name, check_seconds(c), c.status, c.reason, c.reason + "\nreproduce: " + command, out);
    }
    o << "  </testsuite>\n";
  }
  for (const auto& n : r.enabled_gates)
    if (!r.gate(n)) {
      o << "  <testsuite name=\"" << xml_escape(n) << "\" package=\"landing\" tests=\"1\" failures=\"0\" errors=\"0\" skipped=\"1\" time=\"0.000\""
        << (host.empty() ? "" : " hostname=\"" + xml_escape(host) + "\"") << ">\n";
      testcase(o, n, n, 0, Status::Skipped, "not run: no result for this gate yet (run it, or landing import it)", "", "");
      o << "  </testsuite>\n";
    }
  o << "</testsuites>\n";
  return o.str();
}

}  // namespace pfx::gates

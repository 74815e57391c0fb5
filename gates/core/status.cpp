// Status / verdict names and the combination rule (see status.h).
#include "core/status.h"

#include "util/error.h"

namespace pfx::gates {

std::string_view to_string(Status s) {
  switch (s) {
    case Status::Pass: return "PASS";
    case Status::Fail: return "FAIL";
    case Status::Skipped: return "SKIPPED";
    case Status::Inconclusive: return "INCONCLUSIVE";
    case Status::Waived: return "WAIVED";
  }
  return "?";
}

Status parse_status(std::string_view text, std::string_view where) {
  for (Status s : {Status::Pass, Status::Fail, Status::Skipped, Status::Inconclusive, Status::Waived})
    if (text == to_string(s)) return s;
  fail(where, ": status '", text, "' is not one of PASS, FAIL, SKIPPED, INCONCLUSIVE, WAIVED");
}

std::string_view to_string(Verdict v) {
  switch (v) {
    case Verdict::Pass: return "PASS";
    case Verdict::Fail: return "FAIL";
    case Verdict::Incomplete: return "INCOMPLETE";
  }
  return "?";
}

Verdict parse_verdict(std::string_view text, std::string_view where) {
  for (Verdict v : {Verdict::Pass, Verdict::Fail, Verdict::Incomplete})
    if (text == to_string(v)) return v;
  fail(where, ": verdict '", text, "' is not one of PASS, FAIL, INCOMPLETE");
}

int exit_code_for(Verdict v) {
  switch (v) {
    case Verdict::Pass: return kExitPass;
    case Verdict::Fail: return kExitFail;
    case Verdict::Incomplete: return kExitIncomplete;
  }
  return kExitToolError;
}

int exit_code_for(Status s) {
  if (is_passing(s)) return kExitPass;
  if (s == Status::Fail) return kExitFail;
  return kExitIncomplete;
}

VerdictWithReason combine(const std::vector<GateOutcome>& outcomes, const std::vector<std::string>& missing_required) {
  std::string failed, open;
  auto add = [](std::string& list, const std::string& item) { list += (list.empty() ? "" : ", ") + item; };
  for (const auto& o : outcomes) {
    if (o.status == Status::Fail) add(failed, o.gate);
    else if (o.required && !is_passing(o.status)) add(open, o.gate + " " + std::string(to_string(o.status)));
  }
  for (const auto& m : missing_required) add(open, m + " not run");
  if (!failed.empty()) return {Verdict::Fail, "failed: " + failed};
  if (!open.empty()) return {Verdict::Incomplete, "required gates not passed: " + open};
  if (outcomes.empty()) return {Verdict::Incomplete, "no gate ran"};
  return {Verdict::Pass, "every required gate passed"};
}

}  // namespace pfx::gates

// Verdict rules (DESIGN.md): FAIL if any gate fails; PASS only if every required gate passed or
// was waived; INCOMPLETE otherwise; a gate that checked nothing fails.
#include <gtest/gtest.h>

#include "core/gate_result.h"
#include "core/status.h"
#include "util/error.h"

using namespace pfx::gates;

TEST(Verdict, AnyFailIsFail) {
  auto v = combine({{"parity", Status::Pass, true}, {"ab", Status::Fail, false}, {"timing", Status::Skipped, true}}, {});
  EXPECT_EQ(v.verdict, Verdict::Fail);
  EXPECT_NE(v.reason.find("ab"), std::string::npos);
}

TEST(Verdict, RequiredSkippedIsIncompleteNeverPass) {
  auto v = combine({{"parity", Status::Skipped, true}, {"suite", Status::Pass, true}}, {});
  EXPECT_EQ(v.verdict, Verdict::Incomplete);
  EXPECT_NE(v.reason.find("parity SKIPPED"), std::string::npos);
  EXPECT_EQ(combine({{"ab", Status::Inconclusive, true}}, {}).verdict, Verdict::Incomplete);
}

TEST(Verdict, OptionalSkippedAndWaivedStillPass) {
  auto v = combine({{"timing", Status::Skipped, false}, {"greedy", Status::Waived, true}, {"suite", Status::Pass, true}}, {});
  EXPECT_EQ(v.verdict, Verdict::Pass);
}

TEST(Verdict, MissingRequiredOrNothingIsIncomplete) {
  EXPECT_EQ(combine({{"suite", Status::Pass, true}}, {"ab"}).verdict, Verdict::Incomplete);
  EXPECT_EQ(combine({}, {}).verdict, Verdict::Incomplete);
}

TEST(Verdict, ExitCodesAreDistinct) {
  EXPECT_EQ(exit_code_for(Verdict::Pass), 0);
  EXPECT_EQ(exit_code_for(Verdict::Fail), 1);
  EXPECT_EQ(exit_code_for(Verdict::Incomplete), 2);
  EXPECT_EQ(kExitToolError, 5);  // the one table: base/contract/exit_codes.h
  EXPECT_EQ(kExitUsage, 4);
  EXPECT_EQ(exit_code_for(Status::Waived), 0);
  EXPECT_EQ(exit_code_for(Status::Inconclusive), 2);
}

TEST(Settle, NoChecksFails) {
  GateResult r;
  r.gate = "parity";
  settle_from_checks(r);
  EXPECT_EQ(r.status, Status::Fail);
  EXPECT_NE(r.reason.find("checked nothing"), std::string::npos);
}

TEST(Settle, FailBeatsSkipBeatsWaive) {
  GateResult r;
  r.checks = {{"a", Status::Waived}, {"b", Status::Skipped, "no GPU"}, {"c", Status::Pass}};
  settle_from_checks(r);
  EXPECT_EQ(r.status, Status::Skipped);
  r.reason.clear();
  r.checks.push_back({"d", Status::Fail, "bad"});
  settle_from_checks(r);
  EXPECT_EQ(r.status, Status::Fail);
  EXPECT_NE(r.reason.find("d: bad"), std::string::npos);
}

TEST(GateResultJson, RoundTripsAndRejectsWrongSchema) {
  GateResult r;
  r.gate = "ab";
  r.status = Status::Inconclusive;
  r.reason = "undecided";
  r.details["pairs"] = {1, 2, 3};
  r.checks = {{"ab", Status::Inconclusive, "undecided", "prefill bench", true, "", {{"x", 1}}}};
  const auto j = to_json(r);
  const auto back = gate_result_from_json(j, "r.json");
  EXPECT_EQ(to_json(back), j);
  auto bad = j;
  bad["schema"] = "other/1";
  EXPECT_THROW(gate_result_from_json(bad, "r.json"), pfx::Error);
  bad = j;
  bad["status"] = "GREEN";
  try {
    gate_result_from_json(bad, "r.json");
    FAIL() << "accepted status GREEN";
  } catch (const pfx::Error& e) {
    EXPECT_NE(std::string(e.what()).find("r.json"), std::string::npos);
  }
}

// The id grammar (core/ids.h): only a SHA or a worktree id (plus a rerun suffix for reports) ever
// becomes part of a path; anything that could climb out of reports/ is refused with its field.
#include <gtest/gtest.h>

#include "core/gate_result.h"
#include "core/ids.h"
#include "util/error.h"

using namespace pfx::gates;

TEST(Ids, CommitAndWorktreeIdsAreValid) {
  EXPECT_TRUE(is_candidate_id("70ce6323b89a"));
  EXPECT_TRUE(is_candidate_id("70ce6323b89a0d3906ddf95bee08d4b181a20998"));
  EXPECT_TRUE(is_candidate_id("70ce6323b89a-wt-0123456789ab"));
  EXPECT_TRUE(is_report_id("70ce6323b89a-2"));
  EXPECT_TRUE(is_report_id("70ce6323b89a-wt-0123456789ab-13"));
}

TEST(Ids, AnythingElseIsRefused) {
  for (const char* bad : {"../../ESCAPED_REPORT", "70ce6323b89a/..", "..", ".", "", "70ce6323b89A", "70ce632 3b89a",
                          "planted-slowdown", "70ce6", "70ce6323b89a-wt-", "70ce6323b89a-wt-../x", "/tmp/x",
                          "70ce6323b89a-0", "70ce6323b89a-1", "70ce6323b89a\n", "unknown"}) {
    EXPECT_FALSE(is_report_id(bad)) << bad;
    EXPECT_FALSE(is_candidate_id(bad)) << bad;
  }
  EXPECT_FALSE(is_candidate_id("70ce6323b89a-2")) << "a rerun suffix belongs to report ids only";
}

TEST(Ids, ImportedResultWithAPathForAnIdIsRefusedWhereItIsRead) {
  const nlohmann::json j = {{"schema", kGateResultSchema}, {"gate", "parity"}, {"status", "PASS"},
                            {"candidate_id", "../../ESCAPED_REPORT"}};
  try {
    gate_result_from_json(j, "results/parity.json");
    FAIL() << "accepted a path as an id";
  } catch (const pfx::Error& e) {
    EXPECT_NE(std::string(e.what()).find("results/parity.json: gate parity: field 'candidate_id' '../../ESCAPED_REPORT' is not a valid id"),
              std::string::npos)
        << e.what();
  }
}

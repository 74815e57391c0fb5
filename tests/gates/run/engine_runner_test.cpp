// What a `prefill` subcommand printed as its answer (run/engine_runner.h printed_json_object): the
// one reader of the JSON line, for the engine runner's calls and the timing gate's traced bench.
#include <gtest/gtest.h>

#include "run/engine_runner.h"

using pfx::gates::printed_json_object;
using nlohmann::json;

TEST(PrintedJsonObject, TheFirstObjectLineAfterAnyText) {
  const auto j = printed_json_object("prefill: warning: PFX_FAST_GEMM is deprecated\n[1,2]\n{\"gemm\":\"fused\"}\n{\"gemm\":\"other\"}\n");
  ASSERT_TRUE(j.has_value());
  EXPECT_EQ(*j, (json{{"gemm", "fused"}}));
}

TEST(PrintedJsonObject, PrettyPrintedOverSeveralLines) {
  const auto j = printed_json_object("{\n  \"path\": \"fast\",\n  \"results\": []\n}\n");
  ASSERT_TRUE(j.has_value());
  EXPECT_EQ(j->at("path"), "fast");
}

TEST(PrintedJsonObject, NoneWhereNothingParsesAsAnObject) {
  EXPECT_FALSE(printed_json_object("").has_value());
  EXPECT_FALSE(printed_json_object("hello\n{not json\n[1]\n").has_value());
  EXPECT_FALSE(printed_json_object("\"just a string\"").has_value());
}

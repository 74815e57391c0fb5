// The rule that a `prefill` call ran what the gate asked (core/ran_as_asked.h), on the outputs of
// real builds' shapes: an honest report passes, a contradiction or a missing report of a build
// that gives one is wrong, and what an older build cannot report is only a note.
#include <gtest/gtest.h>

#include "core/ran_as_asked.h"

using namespace pfx::gates;
using nlohmann::json;

namespace {

bool has(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

// `prefill --version --json` of a build of today: every capability the rule reads.
json current_version() {
  return {{"name", "prefill"},
          {"capabilities",
           {{"gemm_variants", {"fused", "pipelined"}}, {"decode_graph", {"on", "off"}}, {"bench_backends", {"cpu", "cuda"}}}}};
}

// A build from before capabilities.gemm_variants, decode_graph and bench_backends.
json older_version() { return {{"name", "prefill"}, {"capabilities", {{"backends", {"cpu", "cuda"}}}}}; }

const AskedRun kFastPipelined{"logits", "cuda", "fast", "pipelined", ""};
const std::string kWho = "the candidate ca4d1da7e000";

}  // namespace

TEST(RanAsAsked, HonestReportOfTheAskedVariantPasses) {
  const json out = {{"backend", "cuda"}, {"path", "fast"}, {"gemm", "pipelined"}, {"decode_graph", "on"}, {"shape", {3, 64}}};
  const auto v = verify_ran_as_asked(kFastPipelined, reported_selection(out), current_version(), kWho);
  EXPECT_TRUE(v.ok()) << v.reason();
  EXPECT_EQ(v.note(), "");
  EXPECT_EQ(reported_selection(out), (json{{"backend", "cuda"}, {"path", "fast"}, {"gemm", "pipelined"}, {"decode_graph", "on"}}));
}

TEST(RanAsAsked, AnotherVariantThanAskedIsWrongAndNamesBoth) {
  const json out = {{"backend", "cuda"}, {"path", "fast"}, {"gemm", "fused"}, {"decode_graph", "on"}};
  const auto v = verify_ran_as_asked(kFastPipelined, reported_selection(out), current_version(), kWho);
  ASSERT_FALSE(v.ok());
  EXPECT_EQ(v.reason(), "the candidate ca4d1da7e000 was asked for gemm 'pipelined' (--gemm) but reports gemm 'fused'");
}

TEST(RanAsAsked, NoVariantReportedByABuildThatListsThemIsWrong) {
  for (const json& gemm : {json(nullptr), json(""), json("absent")}) {
    json out = {{"backend", "cuda"}, {"path", "fast"}, {"decode_graph", "on"}};
    if (gemm != "absent") out["gemm"] = gemm;
    const auto v = verify_ran_as_asked(kFastPipelined, reported_selection(out), current_version(), kWho);
    ASSERT_FALSE(v.ok()) << gemm;
    EXPECT_TRUE(has(v.reason(), "was asked for gemm 'pipelined' (--gemm) and reports no gemm, though its --version --json lists "
                                "capabilities.gemm_variants, so it must: it did not prove what it ran"))
        << v.reason();
  }
}

TEST(RanAsAsked, AnUnflaggedRunAsksForTheBuildsDefault) {
  const AskedRun unflagged{"logits", "cuda", "fast", "", ""};
  const json honest = {{"backend", "cuda"}, {"path", "fast"}, {"gemm", "fused"}, {"decode_graph", "on"}};
  EXPECT_TRUE(verify_ran_as_asked(unflagged, honest, current_version(), kWho).ok());
  json off_default = honest;
  off_default["decode_graph"] = "off";
  const auto v = verify_ran_as_asked(unflagged, off_default, current_version(), kWho);
  ASSERT_FALSE(v.ok());
  EXPECT_EQ(v.reason(), "the candidate ca4d1da7e000 was asked for decode_graph 'on' (its default: the first of "
                        "capabilities.decode_graph) but reports decode_graph 'off'");
}

TEST(RanAsAsked, PathAndBackendAreComparedWhereTheySelect) {
  const AskedRun generic{"logits", "cuda", "generic", "", ""};
  // The fast path when the generic one was asked: parity would compare a path with itself.
  const auto fast = verify_ran_as_asked(generic, {{"backend", "cuda"}, {"path", "fast"}, {"gemm", "fused"}}, current_version(), kWho);
  ASSERT_FALSE(fast.ok());
  EXPECT_EQ(fast.reason(), "the candidate ca4d1da7e000 was asked for path 'generic' but reports path 'fast'");
  // The generic path selects no GEMM variant: what it says of one is not read.
  EXPECT_TRUE(verify_ran_as_asked(generic, {{"backend", "cuda"}, {"path", "generic"}, {"gemm", "generic"}}, current_version(), kWho).ok());
  const auto cpu = verify_ran_as_asked(generic, {{"backend", "cpu"}, {"path", "generic"}}, current_version(), kWho);
  ASSERT_FALSE(cpu.ok());
  EXPECT_TRUE(has(cpu.reason(), "was asked for backend 'cuda' but reports backend 'cpu'")) << cpu.reason();
  // The CPU backend names its path itself ("reference"): only the backend selects there.
  const AskedRun on_cpu{"greedy", "cpu", "", "", ""};
  EXPECT_TRUE(verify_ran_as_asked(on_cpu, {{"backend", "cpu"}, {"path", "reference"}, {"gemm", ""}}, current_version(), kWho).ok());
  const auto no_path = verify_ran_as_asked(generic, {{"backend", "cuda"}}, current_version(), kWho);
  ASSERT_FALSE(no_path.ok());
  EXPECT_TRUE(has(no_path.reason(), "reports no path, though every build with --version --json reports it")) << no_path.reason();
}

TEST(RanAsAsked, AnOlderBuildIsNotVerifiedAndSaysSo) {
  // Before capabilities.bench_backends bench printed no backend; before gemm_variants no variant.
  const AskedRun bench{"bench", "cuda", "fast", "", ""};
  const auto v = verify_ran_as_asked(bench, {{"path", "fast"}}, older_version(), "the baseline ba5eba5eba5e");
  EXPECT_TRUE(v.ok()) << v.reason();
  EXPECT_EQ(v.note(),
            "; not verified: backend of the baseline ba5eba5eba5e (its --version --json predates capabilities.bench_backends); gemm of "
            "the baseline ba5eba5eba5e (its --version --json predates capabilities.gemm_variants); decode_graph of the baseline "
            "ba5eba5eba5e (its --version --json predates capabilities.decode_graph)");
  // But what it does report is compared all the same.
  const auto wrong = verify_ran_as_asked(bench, {{"path", "generic"}}, older_version(), "the baseline ba5eba5eba5e");
  EXPECT_FALSE(wrong.ok());
  // No --version --json at all: nothing is required, nothing pretended.
  const auto none = verify_ran_as_asked(kFastPipelined, json::object(), json(), kWho);
  EXPECT_TRUE(none.ok());
  EXPECT_TRUE(has(none.note(), "path of the candidate ca4d1da7e000 (it gave no --version --json)")) << none.note();
  EXPECT_TRUE(has(none.note(), "gemm of the candidate ca4d1da7e000 (it gave no --version --json)")) << none.note();
}

TEST(RanAsAsked, HostileValuesAreShownEscapedAndBounded) {
  const auto v = verify_ran_as_asked(kFastPipelined, {{"backend", "cuda"}, {"path", "fast"}, {"gemm", "x\x1b[2J" + std::string(200, 'y')},
                                                      {"decode_graph", {{"on", true}}}},
                                     current_version(), kWho);
  ASSERT_EQ(v.wrong.size(), 2u);
  EXPECT_TRUE(has(v.wrong[0], "but reports gemm 'x\\x1b[2Jyyy")) << v.wrong[0];
  EXPECT_LT(v.wrong[0].size(), 250u) << v.wrong[0];
  EXPECT_TRUE(has(v.wrong[1], "but reports decode_graph as an object")) << v.wrong[1];
}

TEST(RanAsAsked, NotesOfManyRunsAreSaidOnce) {
  RanAsAsked all;
  for (int i = 0; i < 3; ++i) all.add(verify_ran_as_asked({"bench", "cuda", "fast", "", ""}, {{"path", "fast"}}, older_version(), "b"));
  EXPECT_EQ(all.unchecked.size(), 9u);
  EXPECT_EQ(all.note().find("backend of b"), all.note().rfind("backend of b")) << all.note();
  EXPECT_EQ(to_json(AskedRun{"logits", "cuda", "fast", "pipelined", ""}),
            (json{{"subcommand", "logits"}, {"backend", "cuda"}, {"path", "fast"}, {"gemm", "pipelined"}}));
  EXPECT_EQ(ran_evidence(kFastPipelined, {{"gemm", "fused"}}).at("reported"), (json{{"gemm", "fused"}}));
}

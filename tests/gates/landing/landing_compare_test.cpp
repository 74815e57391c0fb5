// `landing compare` and the U test behind it: known p-values, every input format it reads (ours
// and llama-bench's), the significance verdicts, and the command's exit codes.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "stats/rank_test.h"
#include "landing/bench_compare.h"
#include "util/process.h"

namespace fs = std::filesystem;
using namespace pfx;
using namespace pfx::gates;
using nlohmann::json;

namespace {

fs::path write_file(const std::string& name, const std::string& text) {
  const fs::path p = fs::temp_directory_path() / ("landing-compare-" + std::to_string(::getpid()) + "-" + name);
  std::ofstream(p) << text;
  return p;
}

// A llama-bench `-o json` row (the fields compare reads, plus a few it must ignore).
json llama_row(int n_prompt, int n_gen, const std::vector<double>& ts, const std::string& commit) {
  double avg = 0;
  for (double x : ts) avg += x / static_cast<double>(ts.size());
  return {{"build_commit", commit}, {"backends", "CUDA"}, {"model_type", "llama 7B Q4_K - Medium"}, {"n_prompt", n_prompt},
          {"n_gen", n_gen},          {"n_depth", 0},       {"avg_ts", avg},                          {"samples_ts", ts},
          {"n_batch", 2048}};
}

ProcessResult landing(const std::vector<std::string>& args) {
  ProcessSpec s;
  s.argv = {PFX_LANDING_EXE};
  s.argv.insert(s.argv.end(), args.begin(), args.end());
  s.timeout_s = 60;
  return run_process(s);
}

}  // namespace

TEST(RankTest, ExactPValuesOfSmallSamples) {
  // Complete separation of 5 and 5: the two most extreme of C(10,5) = 252 arrangements.
  auto r = mann_whitney_u({1, 2, 3, 4, 5}, {6, 7, 8, 9, 10});
  EXPECT_TRUE(r.exact);
  EXPECT_DOUBLE_EQ(r.u, 0);
  EXPECT_NEAR(r.p_two_sided, 2.0 / 252.0, 1e-12);
  r = mann_whitney_u({1, 2, 3}, {4, 5});
  EXPECT_NEAR(r.p_two_sided, 2.0 / 10.0, 1e-12);
  // Interleaved: no evidence.
  r = mann_whitney_u({1, 3, 5, 7}, {2, 4, 6, 8});
  EXPECT_GT(r.p_two_sided, 0.5);
  EXPECT_DOUBLE_EQ(mann_whitney_u({}, {1.0}).p_two_sided, 1.0);
}

TEST(RankTest, TiesUseTheCorrectedNormalApproximation) {
  // N = 8, m = n = 4, four tie pairs: var = 16/12 · (9 − 24/56), z = (8 − 0.5)/√var.
  const auto r = mann_whitney_u({1, 1, 2, 2}, {3, 3, 4, 4});
  EXPECT_FALSE(r.exact);
  EXPECT_NEAR(r.p_two_sided, 0.02651, 2e-4);
  EXPECT_DOUBLE_EQ(mann_whitney_u({2, 2, 2}, {2, 2, 2}).p_two_sided, 1.0);
}

TEST(LandingCompare, ReadsOursAndLlamaBenchAndJudgesSignificance) {
  // A: llama-bench -o json; B: prefill bench --json (results[] with mean_tps/samples_tps);
  // C: -o jsonl.
  const json a = json::array({llama_row(512, 0, {100, 101, 99, 100.5, 99.5}, "aaaaaaaa"),
                              llama_row(0, 128, {50, 51, 49, 50, 50.2}, "aaaaaaaa")});
  const json b = {{"model", "m.gguf"}, {"build", {{"commit", "bbbbbbbbcccc"}}}, {"backend", "cuda"},
                  {"results", json::array({{{"test", "pp512"}, {"mean_tps", 110.0}, {"samples_tps", {110, 111, 109, 110.5, 109.5}}},
                                           {{"test", "tg128"}, {"mean_tps", 50.0}, {"samples_tps", {50, 49.5, 50.5, 50.1, 49.9}}}})}};
  const fs::path fa = write_file("a.json", a.dump()), fb = write_file("b.json", b.dump());
  const BenchFile A = read_bench_file(fa), B = read_bench_file(fb);
  EXPECT_EQ(A.build, "aaaaaaaa");
  EXPECT_EQ(B.build, "bbbbbbbb");
  const auto rows = compare_benches(A, B, 0.05);
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_EQ(rows[0].test, "pp512");
  EXPECT_NEAR(rows[0].speedup, 1.1, 1e-9);
  EXPECT_EQ(rows[0].verdict, "faster");
  EXPECT_EQ(rows[1].test, "tg128");
  EXPECT_EQ(rows[1].verdict, "no significant change");
  const std::string md = render_compare_markdown(A, B, rows, 0.05);
  EXPECT_NE(md.find("| Model | Test | t/s aaaaaaaa | t/s bbbbbbbb | Speedup | p | Change |"), std::string::npos) << md;
  EXPECT_NE(md.find("| pp512 | 100.00 | 110.00 | 1.10 |"), std::string::npos) << md;

  std::string jsonl;
  for (const auto& r : a) jsonl += r.dump() + "\n";
  const fs::path fc = write_file("c.jsonl", jsonl);
  EXPECT_EQ(read_bench_file(fc).rows.size(), 2u);

  // Two repetitions a side cannot reach p < 0.05: undecided, never "faster".
  const json few = json::array({llama_row(512, 0, {100, 101}, "dddddddd")});
  const json few2 = json::array({llama_row(512, 0, {200, 201}, "eeeeeeee")});
  const fs::path fd = write_file("d.json", few.dump()), fe = write_file("e.json", few2.dump());
  const auto undecided = compare_benches(read_bench_file(fd), read_bench_file(fe), 0.05);
  ASSERT_EQ(undecided.size(), 1u);
  EXPECT_EQ(undecided[0].verdict, "undecided");
  for (const auto& p : {fa, fb, fc, fd, fe}) fs::remove(p);
}

TEST(LandingCompare, BadInputNamesTheFileAndField) {
  const fs::path bad = write_file("bad.json", R"([{"n_prompt": 512, "n_gen": 0, "samples_ts": ["x"]}])");
  try {
    read_bench_file(bad);
    FAIL() << "no error";
  } catch (const std::exception& e) {
    EXPECT_NE(std::string(e.what()).find("result 1"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("samples_ts"), std::string::npos) << e.what();
  }
  const fs::path notjson = write_file("not.json", "hello\n");
  EXPECT_THROW(read_bench_file(notjson), std::exception);
  // The command: 5 on unreadable input, 4 on a bad command line, 0 with a table.
  EXPECT_EQ(landing({"compare", bad.string(), bad.string()}).exit_code, 5);
  EXPECT_EQ(landing({"compare", bad.string()}).exit_code, 4);
  EXPECT_EQ(landing({"compare", "a", "b", "--alpha", "2"}).exit_code, 4);
  const json a = json::array({llama_row(512, 0, {100, 101, 99, 100.5, 99.5}, "aaaaaaaa")});
  const fs::path fa = write_file("ok.json", a.dump());
  const auto ok = landing({"compare", fa.string(), fa.string(), "--json"});
  ASSERT_EQ(ok.exit_code, 0) << ok.err;
  EXPECT_EQ(json::parse(ok.out)["rows"][0]["verdict"], "no significant change");
  for (const auto& p : {bad, notjson, fa}) fs::remove(p);
}

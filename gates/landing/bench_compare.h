// `landing compare A.json B.json`: two bench results side by side, as llama.cpp's
// compare-llama-bench.py lays them out (model, test, t/s of each, speedup), plus whether the
// difference is significant: a two-sided Mann-Whitney U test (stats/rank_test.h) on the
// per-repetition t/s. Reads `prefill bench --json`, `prefill bench -o json|jsonl` and llama-bench's
// `-o json|jsonl`, so ours and llama.cpp's can be compared too.
#pragma once
#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace pfx::gates {

struct BenchRow {
  std::string model;                 // model_type, else model_filename, else the file's model
  std::string test;                  // "pp512", "tg128", "pp512+tg128", "pp512 @ d4096"
  std::vector<double> samples_ts;    // tokens/s per repetition
  double avg_ts = 0;
};

struct BenchFile {
  std::filesystem::path path;
  std::string build;                 // build_commit of its rows ("" if they do not say)
  std::string backend;               // "CUDA", "CPU", … as the rows say
  std::vector<BenchRow> rows;
};

// Throws pfx::Error naming the file, the row and the field on anything it cannot read.
BenchFile read_bench_file(const std::filesystem::path& path);

struct CompareRow {
  std::string model, test;
  double a_ts = 0, b_ts = 0, speedup = 0;  // speedup = b / a
  size_t a_n = 0, b_n = 0;                 // repetitions
  double p = 1;                            // two-sided U-test p-value
  double best_p = 1;                       // the smallest p these sample sizes can reach
  std::string verdict;                     // "faster", "slower", "no significant change", "undecided"
};

// Rows of both files with the same model and test (or the same test, when each file has one model).
std::vector<CompareRow> compare_benches(const BenchFile& a, const BenchFile& b, double alpha);

std::string render_compare_markdown(const BenchFile& a, const BenchFile& b, const std::vector<CompareRow>& rows,
                                    double alpha);
nlohmann::json compare_to_json(const BenchFile& a, const BenchFile& b, const std::vector<CompareRow>& rows,
                               double alpha);

}  // namespace pfx::gates

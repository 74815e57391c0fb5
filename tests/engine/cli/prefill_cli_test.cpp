// The `prefill` binary as the gates see it: a process with a JSON/npy contract and exit codes
// (the one table of base/contract/exit_codes.h: 0 ok, 3 unavailable here, 4 usage, 5 error).
#include <gtest/gtest.h>

#include <array>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <nlohmann/json.hpp>
#include <string>
#include <dlfcn.h>
#include <sys/wait.h>

#include "metrics/compare.h"
#include "util/fixtures.h"
#include "util/npy.h"

namespace fs = std::filesystem;
using nlohmann::json;

namespace {

struct Proc {
  int code = -1;
  std::string out;  // stdout, and stderr after it where asked for
};

// `prefill ARGS`; stderr joins stdout in out with `with_stderr`, else it is dropped.
Proc run_prefill(const std::string& args, bool with_stderr = false) {
  const std::string cmd = std::string(PFX_PREFILL_BIN) + " " + args + (with_stderr ? " 2>&1" : " 2>/dev/null");
  Proc r;
  FILE* p = popen(cmd.c_str(), "r");
  if (!p) return r;
  std::array<char, 4096> buf{};
  size_t n;
  while ((n = fread(buf.data(), 1, buf.size(), p)) > 0) r.out.append(buf.data(), n);
  const int status = pclose(p);
  r.code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return r;
}

fs::path fixture(const std::string& rel) {
  const fs::path p = pfx::fixtures_dir() / rel;
  EXPECT_TRUE(fs::exists(p)) << "fixture missing: " << p << " (set PFX_FIXTURES)";
  return p;
}

json read_json(const fs::path& p) {
  std::ifstream in(p);
  return json::parse(in);
}

fs::path temp(const std::string& name) { return fs::temp_directory_path() / ("pfx_cli_" + name); }

}  // namespace

TEST(PrefillCli, VersionJsonNamesCapabilities) {
  const Proc r = run_prefill("--version --json");
  ASSERT_EQ(r.code, 0);
  const json j = json::parse(r.out);
  EXPECT_EQ(j["name"], "prefill");
  EXPECT_FALSE(j["commit"].get<std::string>().empty());
  const auto subs = j["capabilities"]["subcommands"];
  for (const char* s : {"info", "tokenize", "logits", "greedy", "synth", "bench"})
    EXPECT_NE(std::find(subs.begin(), subs.end(), s), subs.end()) << s;
  EXPECT_EQ(j["capabilities"]["backends"][0], "cpu");
  EXPECT_EQ(j["capabilities"]["residual_dump"], "blk.N.posP.npy");  // the gates look for it before asking
  // The gates run each fast-path GEMM variant by name: an array of strings, the default first,
  // non-empty exactly when CUDA is compiled in.
  const auto gemm = j["capabilities"]["gemm_variants"];
  ASSERT_TRUE(gemm.is_array());
  EXPECT_EQ(gemm.empty(), !j["capabilities"]["cuda_compiled"].get<bool>());
  for (const auto& v : gemm) EXPECT_TRUE(v.is_string());
  if (!gemm.empty()) {
    EXPECT_NE(std::find(gemm.begin(), gemm.end(), "pipelined"), gemm.end());
    EXPECT_NE(std::find(gemm.begin(), gemm.end(), "fused"), gemm.end());
  }
}

TEST(PrefillCli, GemmFlagIsCheckedBeforeAnyGpuWork) {
  const std::string m = " --model " + fixture("models/stories260K.gguf").string() + " --tokens 1,2";
  const fs::path out = temp("gemm.npy");
  // Off the fast path the flag is an error, not silently ignored.
  EXPECT_EQ(run_prefill("logits" + m + " --out " + out.string() + " --force --gemm fused").code, 4);
  EXPECT_EQ(run_prefill("logits" + m + " --out " + out.string() + " --force --backend cuda --path generic --gemm fused").code, 4);
  // An unknown variant is a usage error where CUDA is compiled in; a build without CUDA knows no
  // variants and says the backend is unavailable (3) instead (engine/cli/cli_common.cpp).
  const bool cuda = json::parse(run_prefill("--version --json").out)["capabilities"]["cuda_compiled"].get<bool>();
  EXPECT_EQ(run_prefill("greedy" + m + " -n 1 --backend cuda --gemm no-such-variant").code, cuda ? 4 : 3);
  // A known variant runs (0) or reports the GPU unavailable (3).
  const int code = run_prefill("logits" + m + " --out " + out.string() + " --force --backend cuda --gemm fused").code;
  EXPECT_TRUE(code == 0 || code == 3) << "exit " << code;
  fs::remove(out);
}

TEST(PrefillCli, DecodeGraphCapabilityAndFlag) {
  const json caps = json::parse(run_prefill("--version --json").out)["capabilities"];
  const bool cuda = caps["cuda_compiled"].get<bool>();
  // `--decode-graph` values, the default first; empty exactly when CUDA is not compiled in.
  const auto values = caps["decode_graph"];
  ASSERT_TRUE(values.is_array());
  if (cuda) {
    EXPECT_EQ(values, json({"on", "off"}));
  } else {
    EXPECT_TRUE(values.empty());
  }
  const std::string m = " --model " + fixture("models/stories260K.gguf").string() + " --tokens 1,2";
  const fs::path out = temp("decode-graph.npy");
  // Off the fast path the flag is an error, not silently ignored; on every subcommand that decodes.
  EXPECT_EQ(run_prefill("greedy" + m + " -n 1 --decode-graph off").code, 4);
  EXPECT_EQ(run_prefill("greedy" + m + " -n 1 --backend cuda --path generic --decode-graph on").code, 4);
  EXPECT_EQ(run_prefill("logits" + m + " --out " + out.string() + " --force --decode-graph on").code, 4);
  EXPECT_EQ(run_prefill("bench --model " + fixture("models/stories260K.gguf").string() +
                        " -p 4 -r 1 --backend cpu --decode-graph off").code, 4);
  // An unknown value is a usage error where CUDA is compiled in; without CUDA: unavailable (3).
  EXPECT_EQ(run_prefill("greedy" + m + " -n 1 --backend cuda --decode-graph maybe").code, cuda ? 4 : 3);
  // A known value runs (0) or reports the GPU unavailable (3), on each subcommand.
  for (const char* v : {"on", "off"}) {
    const int g = run_prefill("greedy" + m + " -n 2 --backend cuda --decode-graph " + v).code;
    EXPECT_TRUE(g == 0 || g == 3) << "greedy --decode-graph " << v << ": exit " << g;
    const int b = run_prefill("bench --model " + fixture("models/stories260K.gguf").string() +
                              " -p 4 -n 2 -r 1 --decode-graph " + std::string(v)).code;
    EXPECT_TRUE(b == 0 || b == 3) << "bench --decode-graph " << v << ": exit " << b;
  }
  fs::remove(out);
}

TEST(PrefillCli, UsageErrorsExitFour) {
  EXPECT_EQ(run_prefill("").code, 4);
  EXPECT_EQ(run_prefill("frobnicate").code, 4);
  EXPECT_EQ(run_prefill("--version --yaml").code, 4);
  EXPECT_EQ(run_prefill("logits --model x.gguf").code, 4);  // --out missing
  EXPECT_EQ(run_prefill("greedy --model " + fixture("models/stories260K.gguf").string() + " --tokens 1,x").code, 4);
  EXPECT_EQ(run_prefill("greedy --model " + fixture("models/stories260K.gguf").string() + " --text a --backend tpu").code, 4);
}

TEST(PrefillCli, EverySubcommandHasHelp) {
  for (const char* s : {"info", "tokenize", "logits", "greedy", "synth", "bench"}) {
    const Proc r = run_prefill(std::string(s) + " --help");
    EXPECT_EQ(r.code, 0) << s;
    EXPECT_NE(r.out.find("usage: prefill"), std::string::npos) << s;
    EXPECT_NE(r.out.find("4  USAGE"), std::string::npos) << s << ": the exit-code table";
  }
  const Proc top = run_prefill("--help");
  EXPECT_EQ(top.code, 0);
  EXPECT_NE(top.out.find("5  ERROR"), std::string::npos) << top.out;
}

TEST(PrefillCli, BadModelIsAnErrorNamingTheFile) {
  const fs::path bad = temp("bad.gguf");
  std::ofstream(bad) << "definitely not gguf";
  const Proc r = run_prefill("info --model " + bad.string(), true);
  const std::string& err = r.out;
  EXPECT_EQ(r.code, 5);
  EXPECT_NE(err.find("bad.gguf"), std::string::npos) << err;
  fs::remove(bad);
}

TEST(PrefillCli, GreedyMatchesLlamaCppOnStories260K) {
  const json ref = read_json(fixture("llama.cpp/stories260K.once.json"));
  const auto n = ref["greedy_tokens"].size();
  const Proc r = run_prefill("greedy --model " + fixture("models/stories260K.gguf").string() + " --text \"" +
                    ref["prompt"].get<std::string>() + "\" -n " + std::to_string(n) + " --json");
  ASSERT_EQ(r.code, 0);
  const json j = json::parse(r.out);
  EXPECT_EQ(j["prompt_ids"], ref["prompt_tokens"]);
  EXPECT_EQ(j["generated_ids"], ref["greedy_tokens"]);
  EXPECT_EQ(j["backend"], "cpu");
}

TEST(PrefillCli, LogitsNpyMatchesTheOracle) {
  const json ref = read_json(fixture("oracle/kq256-q4km.lily.json"));
  std::string ids;
  for (const auto& t : ref["prompt_tokens"]) ids += (ids.empty() ? "" : ",") + std::to_string(t.get<int>());
  const fs::path out = temp("lily.npy");
  fs::remove(out);
  const Proc r = run_prefill("logits --model " + fixture("models/kq256-q4km.gguf").string() + " --tokens " + ids +
                    " --out " + out.string());
  ASSERT_EQ(r.code, 0);
  const auto ours = pfx::read_npy(out);
  const auto oracle = pfx::read_npy(fixture("oracle/kq256-q4km.lily.logits.npy"));
  ASSERT_EQ(ours.shape, oracle.shape);
  const auto s = pfx::compare_logits(ours.data.data(), oracle.data.data(), ours.rows(), ours.cols());
  EXPECT_LE(s.rel, 1e-4);
  EXPECT_EQ(s.top1_agreement, 1.0);
  // Never overwrite what the user has: a second run without --force refuses.
  EXPECT_EQ(run_prefill("logits --model " + fixture("models/kq256-q4km.gguf").string() + " --tokens 1 --out " + out.string()).code, 4);
  fs::remove(out);
}

TEST(PrefillCli, DumpResidualWritesEveryLayerCausally) {
  const fs::path model = fixture("models/kq256-q4km.gguf");
  const fs::path one = temp("dump1"), two = temp("dump2"), out = temp("dump.npy");
  fs::remove_all(one);
  fs::remove_all(two);
  ASSERT_EQ(run_prefill("logits --model " + model.string() + " --tokens 1,300 --force --out " + out.string() +
                        " --dump-residual " + two.string()).code, 0);
  ASSERT_EQ(run_prefill("logits --model " + model.string() + " --tokens 1 --force --out " + out.string() +
                        " --dump-residual " + one.string()).code, 0);
  int layers = 0;
  for (; fs::exists(two / ("blk." + std::to_string(layers) + ".pos0.npy")); ++layers) {
    const auto a = pfx::read_npy(one / ("blk." + std::to_string(layers) + ".pos0.npy"));
    const auto b = pfx::read_npy(two / ("blk." + std::to_string(layers) + ".pos0.npy"));
    ASSERT_EQ(a.shape.size(), 2u);
    EXPECT_EQ(a.shape[0], 1);
    EXPECT_EQ(b.shape[0], 2);
    ASSERT_EQ(a.shape[1], b.shape[1]);
    // Row 0 sees only itself: the same with or without the second token.
    for (int64_t i = 0; i < a.shape[1]; ++i) ASSERT_EQ(a.data[static_cast<size_t>(i)], b.data[static_cast<size_t>(i)]) << "layer " << layers;
  }
  EXPECT_GE(layers, 1);
  EXPECT_EQ(static_cast<int>(std::distance(fs::directory_iterator(two), fs::directory_iterator())), layers);
  // A directory with something in it is never written into.
  EXPECT_EQ(run_prefill("logits --model " + model.string() + " --tokens 1 --force --out " + out.string() +
                        " --dump-residual " + two.string()).code, 4);
  fs::remove_all(one);
  fs::remove_all(two);
  fs::remove(out);
}

TEST(PrefillCli, CudaBackendIsUnavailableOrRuns) {
  // Exit 3 where this build or machine has no GPU; 0 where it has one. Never anything else.
  const fs::path out = temp("cuda.npy");
  fs::remove(out);
  const Proc r = run_prefill("logits --backend cuda --model " + fixture("models/stories260K.gguf").string() +
                    " --tokens 1,2,3 --out " + out.string());
  EXPECT_TRUE(r.code == 3 || r.code == 0) << "exit " << r.code;
  fs::remove(out);
}

TEST(PrefillCli, NoDriverIsCalledNoDriver) {
  // Where libcuda is absent the runtime says "driver version is insufficient"; prefill must say
  // what is really missing.
  void* driver = dlopen("libcuda.so.1", RTLD_LAZY | RTLD_LOCAL);
  if (driver) {
    dlclose(driver);
    GTEST_SKIP() << "an NVIDIA driver is installed here";
  }
  const Proc r = run_prefill("logits --backend cuda --model " + fixture("models/stories260K.gguf").string() + " --tokens 1 --out " +
                                 temp("nodrv.npy").string(),
                             true);
  const std::string& err = r.out;
  EXPECT_EQ(r.code, 3) << err;
  if (err.find("this build has no CUDA backend") != std::string::npos) return;  // a CPU-only build says that instead
  EXPECT_NE(err.find("no NVIDIA driver on this machine"), std::string::npos) << err;
  EXPECT_EQ(err.find("insufficient"), std::string::npos) << err;
}

TEST(PrefillCli, SynthTinyProfileRunsEndToEnd) {
  const fs::path model = temp("tiny.gguf");
  fs::remove(model);
  ASSERT_EQ(run_prefill("synth --profile " + std::string(PFX_SOURCE_DIR) + "/profiles/models/tiny.yaml --out " +
                model.string()).code, 0);
  const Proc info = run_prefill("info --json --model " + model.string());
  ASSERT_EQ(info.code, 0);
  const json j = json::parse(info.out);
  EXPECT_EQ(j["architecture"], "llama");
  const Proc g1 = run_prefill("greedy --json -n 8 --tokens 1,2,3 --model " + model.string());
  const Proc g2 = run_prefill("greedy --json -n 8 --tokens 1,2,3 --model " + model.string());
  ASSERT_EQ(g1.code, 0);
  EXPECT_EQ(json::parse(g1.out)["generated_ids"].size(), 8u);
  EXPECT_EQ(g1.out, g2.out) << "same input twice must give the same tokens";
  fs::remove(model);
}

// The tracer on a real GPU: `kerneltrace -- trace_gpu_program` must see every kernel exactly once,
// with a positive duration, attributed to the NVTX range the program launched it in (the table in
// trace_gpu_program.cu); the range filter must keep only later `prefill` passes; a program without
// NVTX must still be traced per kernel. Skips (with the reason) where no GPU or CUPTI is usable.
#include <cuda_runtime.h>
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <cstdlib>

#include "trace/summary.h"
#include "trace/trace_cli.h"
#include "trace/trace_json.h"
#include "trace_test_util.h"

namespace pfx::trace {
namespace {

using testing::ScratchDir;

std::string gpu_skip_reason() {
  int count = 0;
  cudaError_t err = cudaGetDeviceCount(&count);
  if (err != cudaSuccess) return std::string("no usable CUDA device: ") + cudaGetErrorString(err);
  if (count == 0) return "no CUDA device";
  return "";
}

int kerneltrace(const std::string& args) {
  std::string command = "'" + testing::build_artifact("gates/trace/kerneltrace", KERNELTRACE_EXE) + "' " + args;
  int status = std::system(command.c_str());
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

// Traces `program` with `flags`; skips the test when CUPTI produced nothing usable.
Trace trace_of(const ScratchDir& dir, const std::string& flags, const std::string& program, const std::string& name) {
  const auto out = dir / name;
  int code = kerneltrace(flags + " -o '" + out.string() + "' -- '" + program + "'");
  EXPECT_EQ(code, kTraceOk) << "kerneltrace exit code";
  if (!std::filesystem::exists(out)) return Trace{};
  return load_trace(out);
}

bool cupti_unusable(const Trace& t, std::string* why) {
  if (!t.kernels.empty() || t.stats.kernels_recorded > 0) return false;
  *why = "CUPTI recorded no kernels";
  for (const auto& n : t.notes) *why += "; " + n;
  return true;
}

std::vector<const TraceKernel*> kernels_named(const Trace& t, const std::string& part) {
  std::vector<const TraceKernel*> out;
  for (const auto& k : t.kernels)
    if (k.name.find(part) != std::string::npos) out.push_back(&k);
  return out;
}

std::string gpu_program() { return testing::build_artifact("tests/gates/trace/trace_gpu_program", TRACE_GPU_PROGRAM); }

std::string range_name(const Trace& t, RangeId id) {
  const TraceRange* r = t.find_range(id);
  return r ? r->name : "(none)";
}

class TraceGpu : public ::testing::Test {
 protected:
  void SetUp() override {
    if (std::string why = gpu_skip_reason(); !why.empty()) GTEST_SKIP() << why;
  }
};

TEST_F(TraceGpu, EveryKernelOnceWithPositiveDurationInItsRange) {
  ScratchDir dir;
  Trace t = trace_of(dir, "", gpu_program(), "gpu.json");
  if (std::string why; cupti_unusable(t, &why)) GTEST_SKIP() << why;
  EXPECT_TRUE(t.complete);
  struct Expect {
    const char* kernel;
    std::size_t count;
    const char* range;
    const char* parent;
  };
  const Expect expected[] = {{"k_trace_no_range", 1, "(none)", "(none)"},
                             {"k_trace_outer", 1, "outer", "(none)"},
                             {"k_trace_inner", 1, "inner", "outer"},
                             {"k_trace_worker", 1, "worker", "(none)"},
                             {"k_trace_start_end", 1, "startend", "(none)"},
                             {"k_trace_domain", 1, "domain_range", "(none)"},
                             {"k_trace_pass<3>", 3, "prefill", "(none)"}};
  std::size_t total = 0;
  for (const Expect& e : expected) {
    auto ks = kernels_named(t, e.kernel);
    ASSERT_EQ(ks.size(), e.count) << e.kernel;
    total += e.count;
    for (const TraceKernel* k : ks) {
      EXPECT_GT(k->end_ns, k->start_ns) << e.kernel;
      EXPECT_EQ(range_name(t, k->range), e.range) << e.kernel;
      const TraceRange* r = t.find_range(k->range);
      EXPECT_EQ(r ? range_name(t, r->parent) : "(none)", e.parent) << e.kernel;
      EXPECT_TRUE(k->thread) << e.kernel << ": launch callback seen";
      EXPECT_GT(k->registers, 0u) << e.kernel;
    }
  }
  EXPECT_EQ(t.kernels.size(), total) << "no other kernels";
  EXPECT_EQ(t.stats.kernels_without_launch, 0u);
  EXPECT_NE(*kernels_named(t, "k_trace_worker")[0]->thread, *kernels_named(t, "k_trace_outer")[0]->thread);
  EXPECT_NE(kernels_named(t, "k_trace_worker")[0]->stream, kernels_named(t, "k_trace_outer")[0]->stream);
  EXPECT_EQ(kernels_named(t, "k_trace_inner")[0]->grid[0], 2);
  EXPECT_EQ(kernels_named(t, "k_trace_inner")[0]->block[0], 64);

  for (const auto& r : t.ranges) {
    if (r.name == "outer") {
      EXPECT_EQ(r.payload.type, Payload::Type::u64);
      EXPECT_EQ(r.payload.as_u64, 1000u);
    }
    if (r.name == "domain_range") {
      EXPECT_EQ(r.domain, "pfx_test");
    }
  }
  Summary s = summarize(t, "gpu.json");
  for (const char* empty : {"empty", "main_busy"}) {
    bool listed = false;
    for (const auto& g : s.ranges) {
      if (g.key == empty) {
        listed = true;
        EXPECT_EQ(g.kernels, 0u) << empty;
      }
    }
    EXPECT_TRUE(listed) << empty;
  }
  EXPECT_EQ(s.busy.passes, 3u);
  EXPECT_EQ(s.busy.kernels, 3u);
  ASSERT_EQ(t.memcpy_by_kind.count("HtoD"), 1u);
  EXPECT_EQ(t.memcpy_by_kind.at("HtoD").bytes, 1u << 20);
  ASSERT_EQ(t.memcpy_by_kind.count("DtoH"), 1u);
  EXPECT_EQ(t.memset.count, 1u);
  EXPECT_FALSE(t.devices.empty());
}

TEST_F(TraceGpu, RangeFilterKeepsLaterPassesOnly) {
  ScratchDir dir;
  Trace t = trace_of(dir, "--range prefill --skip 1", gpu_program(), "filtered.json");
  if (std::string why; cupti_unusable(t, &why)) GTEST_SKIP() << why;
  ASSERT_EQ(t.kernels.size(), 2u);
  for (const auto& k : t.kernels) EXPECT_NE(k.name.find("k_trace_pass<3>"), std::string::npos);
  EXPECT_EQ(t.stats.kernels_filtered_out, 7u);
  ASSERT_EQ(t.ranges.size(), 2u);
  EXPECT_EQ(t.ranges[0].occurrence, 1u);
  EXPECT_EQ(t.ranges[1].occurrence, 2u);
}

TEST_F(TraceGpu, KernelsOnlyWithoutNvtx) {
  ScratchDir dir;
  Trace t = trace_of(dir, "--kinds kernel", gpu_program(), "kernels.json");
  if (std::string why; cupti_unusable(t, &why)) GTEST_SKIP() << why;
  EXPECT_EQ(t.kernels.size(), 9u);
  EXPECT_TRUE(t.ranges.empty());
  for (const auto& k : t.kernels) EXPECT_EQ(k.range, kNoRange);
  EXPECT_TRUE(t.memcpy_by_kind.empty());
}

TEST_F(TraceGpu, ProgramWithoutNvtxIsTracedPerKernel) {
  ScratchDir dir;
  Trace t = trace_of(dir, "", testing::build_artifact("tests/gates/trace/trace_plain_cuda_program", TRACE_PLAIN_CUDA_PROGRAM), "plain.json");
  if (std::string why; cupti_unusable(t, &why)) GTEST_SKIP() << why;
  EXPECT_EQ(kernels_named(t, "k_plain_scale").size(), 5u);
  EXPECT_EQ(kernels_named(t, "k_plain_sum").size(), 1u);
  EXPECT_TRUE(t.ranges.empty());
  Summary s = summarize(t, "plain.json");
  EXPECT_EQ(s.no_range_ns, s.total_kernel_ns);
  EXPECT_GT(s.total_kernel_ns, 0u);
}

}  // namespace
}  // namespace pfx::trace

// The one process launcher (the gates' engine calls, the tracer's launcher): exit codes, crashes
// (signals), hangs (timeouts kill the whole process group), output capture.
#include <gtest/gtest.h>

#include <chrono>

#include "util/process.h"

using namespace pfx;

TEST(Process, CapturesOutputAndExitCode) {
  ProcessSpec s;
  s.argv = {"sh", "-c", "echo out; echo err >&2; exit 7"};
  const auto r = run_process(s);
  EXPECT_TRUE(r.exited);
  EXPECT_EQ(r.exit_code, 7);
  EXPECT_EQ(r.out, "out\n");
  EXPECT_EQ(r.err, "err\n");
  EXPECT_EQ(r.describe(), "exit 7");
  EXPECT_EQ(r.tail(), "err");
}

TEST(Process, CrashIsReportedWithSignalName) {
  ProcessSpec s;
  s.argv = {"sh", "-c", "kill -SEGV $$"};
  const auto r = run_process(s);
  EXPECT_TRUE(r.crashed());
  EXPECT_EQ(r.signal, 11);
  EXPECT_EQ(r.describe(), "killed by signal 11 (SIGSEGV)");
}

TEST(Process, HangIsKilledAtTheTimeoutWithItsChildren) {
  ProcessSpec s;
  // The child starts a grandchild holding the pipes; both must die.
  s.argv = {"sh", "-c", "sleep 60 & sleep 60"};
  s.timeout_s = 0.5;
  const auto t0 = std::chrono::steady_clock::now();
  const auto r = run_process(s);
  const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  EXPECT_TRUE(r.timed_out);
  EXPECT_FALSE(r.ok());
  EXPECT_LT(secs, 10.0);
  EXPECT_NE(r.describe().find("timed out after"), std::string::npos);
}

TEST(Process, EnvironmentAndMissingProgram) {
  ProcessSpec s;
  s.argv = {"sh", "-c", "echo $PFX_TEST_VALUE"};
  s.env = {{"PFX_TEST_VALUE", "42"}};
  EXPECT_EQ(run_process(s).out, "42\n");
  ProcessSpec m;
  m.argv = {"/nonexistent/program"};
  const auto r = run_process(m);
  EXPECT_TRUE(r.failed_to_start);
  EXPECT_EQ(shell_join({"prefill", "--text", "it's"}, {{"A", "b c"}}), "A='b c' prefill --text 'it'\\''s'");
}

TEST(Process, StreamsStdoutForProgress) {
  ProcessSpec s;
  s.argv = {"sh", "-c", "echo '[1/3] a'; sleep 0.2; echo '[3/3] c'"};
  std::string seen;
  s.on_stdout = [&](const std::string& chunk) { seen += chunk; };
  const auto r = run_process(s);
  EXPECT_TRUE(r.ok());
  EXPECT_EQ(seen, r.out);
  EXPECT_NE(seen.find("[3/3] c"), std::string::npos);
}

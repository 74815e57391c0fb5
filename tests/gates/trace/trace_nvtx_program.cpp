// A program that uses NVTX and no CUDA, for testing the injection library's NVTX side on any
// machine. It checks the NVTX return values it gets (depths, failed pops) and exits 3 on a mismatch.
//   trace_nvtx_program normal       nested, empty, domain, registered, start/end across threads,
//                                   unicode, and a range left open at exit
//   trace_nvtx_program crash        a closed range, an open one, a pause, then SIGKILL
//   trace_nvtx_program thread-exit  exit(5) from a second thread with ranges open on both
#include <nvtx3/nvToolsExt.h>
#include <signal.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <thread>

namespace {

int failures = 0;

void check(bool ok, const char* what) {
  if (!ok) {
    std::fprintf(stderr, "trace_nvtx_program: %s\n", what);
    ++failures;
  }
}

nvtxEventAttributes_t attributes() {
  nvtxEventAttributes_t a;
  std::memset(&a, 0, sizeof a);
  a.version = NVTX_VERSION;
  a.size = NVTX_EVENT_ATTRIB_STRUCT_SIZE;
  return a;
}

int run_normal() {
  nvtxEventAttributes_t outer = attributes();
  outer.messageType = NVTX_MESSAGE_TYPE_ASCII;
  outer.message.ascii = "outer";
  outer.payloadType = NVTX_PAYLOAD_TYPE_UNSIGNED_INT64;
  outer.payload.ullValue = 1000;
  check(nvtxRangePushEx(&outer) == 0, "outer: depth 0");
  check(nvtxRangePushA("inner") == 1, "inner: depth 1");
  check(nvtxRangePop() == 1, "pop inner: depth 1");
  check(nvtxRangePop() == 0, "pop outer: depth 0");
  check(nvtxRangePop() < 0, "pop with nothing open fails");

  nvtxRangePushA("empty");
  nvtxRangePop();

  nvtxDomainHandle_t domain = nvtxDomainCreateA("pfx_test");
  check(domain != nullptr, "domain handle");
  nvtxStringHandle_t name = nvtxDomainRegisterStringA(domain, "registered_name");
  check(name != nullptr, "registered string handle");
  nvtxEventAttributes_t registered = attributes();
  registered.messageType = NVTX_MESSAGE_TYPE_REGISTERED;
  registered.message.registered = name;
  registered.payloadType = NVTX_PAYLOAD_TYPE_DOUBLE;
  registered.payload.dValue = 2.5;
  check(nvtxDomainRangePushEx(domain, &registered) == 0, "domain range: depth 0");
  check(nvtxRangePop() < 0, "a default-domain pop does not close a pfx_test range");
  check(nvtxDomainRangePop(domain) == 0, "domain pop");

  nvtxRangeId_t cross = nvtxRangeStartA("cross_thread");
  nvtxRangePushA("main_open");
  std::thread worker([cross] {
    nvtxRangePushW(L"w\u00f6rker");
    nvtxRangePop();
    nvtxRangeEnd(cross);  // ended on a thread other than the one that started it
  });
  worker.join();
  nvtxRangePop();  // main_open
  nvtxRangePushA("left_open");
  return failures == 0 ? 0 : 3;
}

int run_crash() {
  nvtxRangePushA("before_crash");
  nvtxRangePop();
  nvtxRangePushA("open_at_crash");
  std::this_thread::sleep_for(std::chrono::milliseconds(400));  // several --flush-ms periods
  kill(getpid(), SIGKILL);
  return 1;
}

int run_thread_exit() {
  nvtxRangePushA("in_main");
  std::thread t([] {
    nvtxRangePushA("in_thread");
    std::exit(5);
  });
  t.join();
  return 1;  // not reached
}

}  // namespace

int main(int argc, char** argv) {
  const char* mode = argc > 1 ? argv[1] : "normal";
  if (std::strcmp(mode, "normal") == 0) return run_normal();
  if (std::strcmp(mode, "crash") == 0) return run_crash();
  if (std::strcmp(mode, "thread-exit") == 0) return run_thread_exit();
  std::fprintf(stderr, "usage: trace_nvtx_program [normal|crash|thread-exit]\n");
  return 2;
}

// Captures the machine's context for reports (see environment.h).
#include "host/environment.h"

#include <sys/utsname.h>
#include <unistd.h>

#include <fstream>
#include <sstream>
#include <string>
#include <thread>

#include "core/gate_result.h"
#include "host/gpu_monitor.h"
#include "util/process.h"

namespace pfx::gates {

namespace {
// The first output line of a tool's version command that contains `containing` (any line when empty).
std::string first_line_of(const std::vector<std::string>& argv, const std::string& containing = "") {
  if (find_on_path(argv[0]).empty()) return "not found";
  ProcessSpec spec;
  spec.argv = argv;
  spec.timeout_s = 20;
  spec.merge_stderr_into_stdout = true;
  std::stringstream ss(run_process(spec).out);
  for (std::string line; std::getline(ss, line);)
    if (!line.empty() && (containing.empty() || line.find(containing) != std::string::npos)) return line;
  return "unknown";
}

std::string cpu_model() {
  std::ifstream in("/proc/cpuinfo");
  for (std::string line; std::getline(in, line);)
    if (line.rfind("model name", 0) == 0) {
      const auto c = line.find(':');
      if (c != std::string::npos) return line.substr(c + 2);
    }
  return "unknown";
}

double memory_gib() {
  std::ifstream in("/proc/meminfo");
  std::string key;
  double kb = 0;
  in >> key >> kb;
  return kb / (1024.0 * 1024.0);
}
}  // namespace

nlohmann::json capture_environment() {
  nlohmann::json env;
  char host[256] = {};
  ::gethostname(host, sizeof host - 1);
  env["host"] = host;
  utsname u{};
  if (::uname(&u) == 0) env["os"] = std::string(u.sysname) + " " + u.release + " " + u.machine;
  env["cpu"] = cpu_model();
  env["cores"] = std::thread::hardware_concurrency();
  env["memory_gib"] = memory_gib();
  env["time_utc"] = utc_now_iso8601();
  env["nvcc"] = first_line_of({"nvcc", "--version"}, "release");
  env["cmake"] = first_line_of({"cmake", "--version"});
  GpuMonitor gpu;
  if (gpu.available()) {
    auto g = to_json(gpu.info());
    if (auto s = gpu.sample()) g["idle_sample"] = to_json(*s);
    env["gpu"] = g;
  } else {
    env["gpu"] = nullptr;
    env["gpu_unavailable_reason"] = gpu.why_unavailable();
  }
  return env;
}

}  // namespace pfx::gates

// NVML through dlopen (our own declarations of the few stable C entry points we call) with an
// nvidia-smi fallback. See gpu_monitor.h.
#include "host/gpu_monitor.h"

#include <dlfcn.h>

#include <cstdlib>
#include <sstream>
#include <vector>

#include "util/process.h"

namespace pfx::gates {

namespace {
// NVML ABI: nvmlReturn_t is an int enum (0 = success), nvmlDevice_t an opaque pointer.
using nvmlReturn = int;
using nvmlDevice = void*;
constexpr int kNvmlClockSm = 1;
constexpr int kNvmlTemperatureGpu = 0;

struct ReasonName {
  unsigned long long bit;
  const char* name;
};
constexpr ReasonName kReasons[] = {
    {0x1ull, "gpu_idle"},           {0x2ull, "applications_clocks_setting"}, {0x4ull, "sw_power_cap"},
    {0x8ull, "hw_slowdown"},        {0x10ull, "sync_boost"},                 {0x20ull, "sw_thermal_slowdown"},
    {0x40ull, "hw_thermal_slowdown"}, {0x80ull, "hw_power_brake_slowdown"},  {0x100ull, "display_clock_setting"},
};
// Reasons that set a sample aside: thermal and hardware slowdowns. sw_power_cap (0x4) is not one:
// an H200 under sustained GEMM load sits at its power cap in every sample (seen on the H200,
// 2026-11-30: all 24 A/B pairs carried it at 1695-1980 MHz, 40-49 °C), and the interleaving
// already exposes A and B to the same cap; it stays visible in each sample's reasons.
constexpr unsigned long long kThrottleMask = 0x8ull | 0x20ull | 0x40ull | 0x80ull;

int default_index() {
  const char* v = std::getenv("CUDA_VISIBLE_DEVICES");
  if (!v || !*v) return 0;
  char* end = nullptr;
  const long i = std::strtol(v, &end, 10);
  return (end != v && (*end == ',' || *end == 0) && i >= 0) ? static_cast<int>(i) : 0;
}

std::string trim(std::string s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.erase(s.begin());
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\r' || s.back() == '\n')) s.pop_back();
  return s;
}
}  // namespace

struct GpuMonitor::Nvml {
  void* lib = nullptr;
  nvmlDevice dev = nullptr;
  nvmlReturn (*init)() = nullptr;
  nvmlReturn (*shutdown)() = nullptr;
  nvmlReturn (*handle_by_index)(unsigned, nvmlDevice*) = nullptr;
  nvmlReturn (*clock_info)(nvmlDevice, int, unsigned*) = nullptr;
  nvmlReturn (*max_clock_info)(nvmlDevice, int, unsigned*) = nullptr;
  nvmlReturn (*temperature)(nvmlDevice, int, unsigned*) = nullptr;
  nvmlReturn (*throttle)(nvmlDevice, unsigned long long*) = nullptr;
  nvmlReturn (*power)(nvmlDevice, unsigned*) = nullptr;
  nvmlReturn (*name)(nvmlDevice, char*, unsigned) = nullptr;
  nvmlReturn (*driver)(char*, unsigned) = nullptr;
  nvmlReturn (*cuda_driver)(int*) = nullptr;

  template <class F>
  void sym(F& f, const char* n) { f = reinterpret_cast<F>(::dlsym(lib, n)); }
  ~Nvml() {
    if (shutdown && dev) shutdown();
    if (lib) ::dlclose(lib);
  }
};

bool is_throttling(unsigned long long reasons) { return (reasons & kThrottleMask) != 0; }

std::string throttle_reasons_text(unsigned long long reasons) {
  std::string out;
  for (const auto& r : kReasons)
    if (reasons & r.bit) out += (out.empty() ? "" : ",") + std::string(r.name);
  return out.empty() ? "none" : out;
}

std::optional<std::pair<GpuInfo, GpuSample>> parse_nvidia_smi_line(const std::string& line) {
  std::vector<std::string> f;
  std::stringstream ss(line);
  for (std::string x; std::getline(ss, x, ',');) f.push_back(trim(x));
  if (f.size() < 7) return std::nullopt;
  GpuInfo info;
  GpuSample s;
  info.name = f[0];
  info.driver_version = f[1];
  info.source = "nvidia-smi";
  try {
    s.sm_clock_mhz = static_cast<unsigned>(std::stoul(f[2]));
    s.max_sm_clock_mhz = static_cast<unsigned>(std::stoul(f[3]));
    s.temperature_c = static_cast<unsigned>(std::stoul(f[4]));
    s.throttle_reasons = std::stoull(f[5], nullptr, 16);
    s.power_w = (f[6] == "[N/A]" || f[6] == "N/A") ? 0.0 : std::stod(f[6]);
  } catch (...) {
    return std::nullopt;
  }
  info.max_sm_clock_mhz = s.max_sm_clock_mhz;
  return std::make_pair(info, s);
}

GpuMonitor::GpuMonitor(int index) : index_(index >= 0 ? index : default_index()) {
  auto n = std::make_unique<Nvml>();
  n->lib = ::dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL);
  if (n->lib) {
    n->sym(n->init, "nvmlInit_v2");
    n->sym(n->shutdown, "nvmlShutdown");
    n->sym(n->handle_by_index, "nvmlDeviceGetHandleByIndex_v2");
    n->sym(n->clock_info, "nvmlDeviceGetClockInfo");
    n->sym(n->max_clock_info, "nvmlDeviceGetMaxClockInfo");
    n->sym(n->temperature, "nvmlDeviceGetTemperature");
    n->sym(n->throttle, "nvmlDeviceGetCurrentClocksEventReasons");
    if (!n->throttle) n->sym(n->throttle, "nvmlDeviceGetCurrentClocksThrottleReasons");
    n->sym(n->power, "nvmlDeviceGetPowerUsage");
    n->sym(n->name, "nvmlDeviceGetName");
    n->sym(n->driver, "nvmlSystemGetDriverVersion");
    n->sym(n->cuda_driver, "nvmlSystemGetCudaDriverVersion_v2");
    if (!n->cuda_driver) n->sym(n->cuda_driver, "nvmlSystemGetCudaDriverVersion");
    if (n->init && n->handle_by_index && n->clock_info && n->init() == 0) {
      if (n->handle_by_index(static_cast<unsigned>(index_), &n->dev) == 0) {
        char buf[256] = {};
        info_.source = "nvml";
        if (n->name && n->name(n->dev, buf, sizeof buf) == 0) info_.name = buf;
        if (n->driver && n->driver(buf, sizeof buf) == 0) info_.driver_version = buf;
        int cv = 0;
        if (n->cuda_driver && n->cuda_driver(&cv) == 0)
          info_.cuda_driver_version = std::to_string(cv / 1000) + "." + std::to_string((cv % 1000) / 10);
        unsigned mc = 0;
        if (n->max_clock_info && n->max_clock_info(n->dev, kNvmlClockSm, &mc) == 0) info_.max_sm_clock_mhz = mc;
        nvml_ = std::move(n);
        available_ = true;
        return;
      }
      why_ = "NVML found no device at index " + std::to_string(index_);
      n->dev = reinterpret_cast<nvmlDevice>(1);  // so the destructor calls nvmlShutdown
    } else {
      why_ = "NVML (libnvidia-ml.so.1) did not initialize";
    }
  } else {
    why_ = "libnvidia-ml.so.1 not found (no NVIDIA driver)";
  }
  // Fallback: nvidia-smi.
  if (!find_on_path("nvidia-smi").empty()) {
    use_smi_ = true;
    if (auto s = sample()) {
      available_ = true;
      return;
    }
    use_smi_ = false;
    why_ += "; nvidia-smi gave no usable reading";
  } else {
    why_ += "; nvidia-smi not on PATH";
  }
}

GpuMonitor::~GpuMonitor() = default;

std::optional<GpuSample> GpuMonitor::sample() {
  if (nvml_) {
    GpuSample s;
    if (nvml_->clock_info(nvml_->dev, kNvmlClockSm, &s.sm_clock_mhz) != 0) return std::nullopt;
    s.max_sm_clock_mhz = info_.max_sm_clock_mhz;
    if (nvml_->temperature) nvml_->temperature(nvml_->dev, kNvmlTemperatureGpu, &s.temperature_c);
    if (nvml_->throttle) nvml_->throttle(nvml_->dev, &s.throttle_reasons);
    unsigned mw = 0;
    if (nvml_->power && nvml_->power(nvml_->dev, &mw) == 0) s.power_w = mw / 1000.0;
    return s;
  }
  if (!use_smi_) return std::nullopt;
  ProcessSpec spec;
  spec.argv = {"nvidia-smi",
               "--query-gpu=name,driver_version,clocks.sm,clocks.max.sm,temperature.gpu,clocks_throttle_reasons.active,power.draw",
               "--format=csv,noheader,nounits", "-i", std::to_string(index_)};
  spec.timeout_s = 10;
  const auto r = run_process(spec);
  if (!r.ok()) return std::nullopt;
  auto parsed = parse_nvidia_smi_line(r.out);
  if (!parsed) return std::nullopt;
  if (info_.name.empty()) info_ = parsed->first;
  return parsed->second;
}

nlohmann::json to_json(const GpuSample& s) {
  return {{"sm_clock_mhz", s.sm_clock_mhz}, {"max_sm_clock_mhz", s.max_sm_clock_mhz},
          {"temperature_c", s.temperature_c}, {"throttle_reasons", throttle_reasons_text(s.throttle_reasons)},
          {"throttling", is_throttling(s.throttle_reasons)}, {"power_w", s.power_w}};
}

nlohmann::json to_json(const GpuInfo& i) {
  return {{"name", i.name}, {"driver_version", i.driver_version}, {"cuda_driver_version", i.cuda_driver_version},
          {"max_sm_clock_mhz", i.max_sm_clock_mhz}, {"source", i.source}};
}

}  // namespace pfx::gates

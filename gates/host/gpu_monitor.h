// GPU clocks, temperature and throttle reasons for the A/B and timing gates, read through NVML
// loaded at run time (dlopen libnvidia-ml.so.1: the build needs no nvml.h and runs where no driver
// exists) or, failing that, `nvidia-smi --query-gpu`. Absence of both is reported, not hidden.
#pragma once
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>

namespace pfx::gates {

struct GpuSample {
  unsigned sm_clock_mhz = 0;
  unsigned max_sm_clock_mhz = 0;
  unsigned temperature_c = 0;
  unsigned long long throttle_reasons = 0;  // NVML clocks-event bit mask
  double power_w = 0;
};

struct GpuInfo {
  std::string name, driver_version, cuda_driver_version, source;  // source: "nvml" | "nvidia-smi"
  unsigned max_sm_clock_mhz = 0;
};

// The throttle bits that mean the clock was held down by power or heat (not idle / app clocks).
bool is_throttling(unsigned long long reasons);
// "sw_power_cap,hw_thermal_slowdown" — names of the set bits; "none" when zero.
std::string throttle_reasons_text(unsigned long long reasons);

// One line of `nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,temperature.gpu,
// clocks_throttle_reasons.active,power.draw --format=csv,noheader,nounits`; nullopt if malformed.
std::optional<std::pair<GpuInfo, GpuSample>> parse_nvidia_smi_line(const std::string& line);

class GpuMonitor {
 public:
  // index: NVML/nvidia-smi device index (the first of CUDA_VISIBLE_DEVICES when numeric, else 0).
  explicit GpuMonitor(int index = -1);
  ~GpuMonitor();
  GpuMonitor(const GpuMonitor&) = delete;             // owns the NVML session (init/shutdown pair)
  GpuMonitor& operator=(const GpuMonitor&) = delete;

  bool available() const { return available_; }
  const std::string& why_unavailable() const { return why_; }
  const GpuInfo& info() const { return info_; }
  std::optional<GpuSample> sample();

 private:
  struct Nvml;
  std::unique_ptr<Nvml> nvml_;
  bool available_ = false;
  bool use_smi_ = false;
  int index_ = 0;
  std::string why_;
  GpuInfo info_;
};

nlohmann::json to_json(const GpuSample& s);
nlohmann::json to_json(const GpuInfo& i);

}  // namespace pfx::gates

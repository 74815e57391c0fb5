// The GPU monitor's parsing of real nvidia-smi output, and its reason when there is no GPU.
#include <gtest/gtest.h>

#include "host/gpu_monitor.h"

using namespace pfx::gates;

TEST(GpuMonitor, ParsesNvidiaSmiQueryLine) {
  // Shape of `nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,temperature.gpu,
  // clocks_throttle_reasons.active,power.draw --format=csv,noheader,nounits` on an H200.
  const auto p = parse_nvidia_smi_line("NVIDIA H200, 570.124.06, 1980, 1980, 41, 0x0000000000000004, 412.35\n");
  ASSERT_TRUE(p.has_value());
  EXPECT_EQ(p->first.name, "NVIDIA H200");
  EXPECT_EQ(p->first.driver_version, "570.124.06");
  EXPECT_EQ(p->second.sm_clock_mhz, 1980u);
  EXPECT_EQ(p->second.temperature_c, 41u);
  // The power cap is the H200's normal state under load: reported, not a reason to set aside.
  EXPECT_FALSE(is_throttling(p->second.throttle_reasons));
  EXPECT_EQ(throttle_reasons_text(p->second.throttle_reasons), "sw_power_cap");
  EXPECT_FALSE(is_throttling(0x1));  // idle is not throttling
  EXPECT_TRUE(is_throttling(0x8));   // hw_slowdown
  EXPECT_TRUE(is_throttling(0x40));  // hw_thermal_slowdown
  EXPECT_FALSE(parse_nvidia_smi_line("No devices were found").has_value());
}

TEST(GpuMonitor, SaysWhyWhenThereIsNoGpu) {
  GpuMonitor m;
  if (m.available()) {
    EXPECT_FALSE(m.info().name.empty());
    EXPECT_TRUE(m.sample().has_value());
  } else {
    EXPECT_FALSE(m.why_unavailable().empty());
    EXPECT_FALSE(m.sample().has_value());
  }
}

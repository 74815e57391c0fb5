// The launch-shape registry behind kernels/launch_info.h.
#include "kernels/launch_info.h"

namespace pfx::kernels {

namespace {
// Function-local static: registrations run during static initialisation of other objects,
// in unspecified order, so the vector must be constructed on first use.
std::vector<LaunchInfo>& registry() {
  static std::vector<LaunchInfo> infos;
  return infos;
}
}  // namespace

bool register_launch_info(const LaunchInfo& info) {
  registry().push_back(info);
  return true;
}

const std::vector<LaunchInfo>& launch_infos() { return registry(); }

}  // namespace pfx::kernels

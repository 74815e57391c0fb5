// Progress output (see progress.h).
#include "core/progress.h"

#include <cstdio>

#include "util/escape.h"

namespace pfx::gates {

void Progress::say(const std::string& message) const {
  if (quiet_) return;
  const auto s = std::chrono::duration_cast<std::chrono::seconds>(std::chrono::steady_clock::now() - t0_).count();
  std::fprintf(stderr, "[landing +%llds] %s\n", static_cast<long long>(s), escape_control(message).c_str());
  std::fflush(stderr);
}

}  // namespace pfx::gates

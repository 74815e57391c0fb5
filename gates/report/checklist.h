// `landing checklist [ID]`: the pre-merge checklist a reviewer ticks — every gate of the profile,
// its status, and what is still missing to land (a gate to run on a GPU host, a failure to fix,
// a loosened threshold or waiver to approve).
#pragma once
#include <string>

#include "report/landing_record.h"

namespace pfx::gates {
std::string render_checklist(const LandingRecord& r);
}  // namespace pfx::gates

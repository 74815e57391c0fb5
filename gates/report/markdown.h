// landing.md: the report a reviewer reads — shaped like the seed's record: a result line, §4
// Verification (one line per gate with its evidence), §5 Results (before → after, Δ%), then the
// gate details (checks, and the gate tables flagged in_markdown), the gate profile with every baseline → candidate difference (loosened thresholds and
// new waivers highlighted), and the environment block.
#pragma once
#include <string>

#include "report/landing_record.h"

namespace pfx::gates {

std::string render_markdown(const LandingRecord& r);
// The status marker of the Markdown report: "✅", "❌", "⏭️", "❔", "⚠️".
std::string status_icon(Status s);

}  // namespace pfx::gates

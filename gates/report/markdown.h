// landing.md: the report a reviewer reads — shaped like the seed's record: a result line, §4
// Verification (one line per gate with its evidence), §5 Results (before → after, Δ%), then the
// gate details, the gate profile with every baseline → candidate difference (loosened thresholds and
// new waivers highlighted), and the environment block.
#pragma once
#include <string>

#include "report/landing_record.h"

namespace pfx::gates {

std::string render_markdown(const LandingRecord& r);
// The §5 table rows as {metric, before, after, delta} (shared with HTML).
struct ResultRow {
  std::string metric, before, after, delta;
};
std::vector<ResultRow> result_rows(const LandingRecord& r);
// "⚠ LOOSENED (limit raised)" style marker used by every format.
std::string status_icon(Status s);

}  // namespace pfx::gates

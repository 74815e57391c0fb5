// landing.html: one self-contained page (inline CSS, inline SVG charts, a few lines of inline
// script, nothing fetched): the verdict, the §4 gate lines, the §5 results, per-kernel
// before/after bars, the A/B samples (A/A included), the ptxas table, the gate-profile diff and the
// environment. The script only checks that every chart laid out (data-rendered on <html>), which
// the headless-browser test reads.
#pragma once
#include <string>

#include "report/landing_record.h"

namespace pfx::gates {
std::string render_html(const LandingRecord& r);
}  // namespace pfx::gates

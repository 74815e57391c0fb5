// reports/index.html: the ledger's history as one self-contained page (inline SVG, no network):
// the landings newest first, then one trend chart per metric (report/history.h) across the
// ledger in commit order, each point linking to its report, whiskers from the repetitions, and
// the change points the windowed U test found.
#pragma once
#include <string>

#include "report/history.h"

namespace pfx::gates {

std::string render_index_html(const History& h);

}  // namespace pfx::gates

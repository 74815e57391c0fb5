// Reading a gate's typed table (core/gate_output.h) as a before → after figure: the first
// "baseline" column and the "candidate" column after it in the same, non-empty unit (timing's
// per-role table: "baseline ns" / "candidate ns"). The trend page (report/history) and the per-role
// stacked bars of landing.html (report/html) both read tables this way.
#pragma once
#include <cstddef>
#include <optional>
#include <utility>

#include "core/gate_output.h"

namespace pfx::gates {

inline std::optional<std::pair<std::size_t, std::size_t>> before_after_columns(const Table& t) {
  for (std::size_t i = 0; i < t.columns.size(); ++i) {
    if (t.columns[i].name != "baseline" || t.columns[i].unit.empty()) continue;
    for (std::size_t j = i + 1; j < t.columns.size(); ++j)
      if (t.columns[j].name == "candidate" && t.columns[j].unit == t.columns[i].unit) return std::pair{i, j};
  }
  return std::nullopt;
}

}  // namespace pfx::gates

// Change points in a metric's history across the ledger: where does a series of per-commit
// measurements shift? The test is a windowed Mann-Whitney U (stats/rank_test.h): at every boundary
// between two commits, the samples of the `window` commits before it against those of the
// `window` commits after it; a boundary is a change point when that two-sided p < alpha and no
// boundary within `window` of it has a smaller p (one point per shift, not a run of neighbours).
// Samples are every measurement of a commit (each repetition where the report kept them, and a
// commit measured twice — as one landing's candidate and the next one's baseline — counts both),
// so machine drift between landings is part of what it sees.
#pragma once
#include <cstddef>
#include <vector>

namespace pfx::gates {

struct ChangePoint {
  size_t index = 0;          // the first commit after the shift (position in the series)
  double p = 1;              // two-sided U-test p of the windows either side
  double before = 0, after = 0;  // medians of the two windows
};

inline constexpr size_t kChangeWindow = 3;
inline constexpr double kChangeAlpha = 0.01;

std::vector<ChangePoint> change_points(const std::vector<std::vector<double>>& per_commit, size_t window = kChangeWindow,
                                       double alpha = kChangeAlpha);

}  // namespace pfx::gates

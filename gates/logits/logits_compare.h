// Comparing two logits tensors [positions, vocab]: the numbers the parity and accuracy gates
// report. Relative max deviation is max|a-b| / max|ref| (DESIGN.md numerical contracts), NMSE is
// sum (a-b)^2 / sum ref^2, top-1 agreement is the share of positions whose argmax agrees. Those
// numbers are pfx::compare_logits (base/metrics/compare.h); the gate adds where the worst value
// sits and which positions disagree on the top-1 token.
#pragma once
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "core/gate_output.h"
#include "metrics/compare.h"
#include "util/npy.h"

namespace pfx::gates {

using pfx::NonFinite;
// pfx::find_non_finite (base/metrics) over a logits array.
NonFinite find_non_finite(const NpyArray& a);

struct LogitsComparison {
  bool shape_match = false;
  std::string shape_error;
  double max_abs_diff = 0, max_abs_ref = 0, max_rel_dev = 0, nmse = 0, top1_agreement = 0;
  int64_t positions = 0, vocab = 0;
  int64_t worst_row = -1, worst_col = -1;
  double worst_value = 0, worst_ref = 0;
  std::vector<int64_t> top1_mismatch_positions;  // the first kTop1MismatchesListed
};
inline constexpr size_t kTop1MismatchesListed = 8;
// `test` against `ref`. Both must be finite (check find_non_finite first): a NaN or infinity
// throws pfx::Error naming its position rather than yielding metrics that skip it.
LogitsComparison compare_logits(const NpyArray& test, const NpyArray& ref);
nlohmann::json to_json(const LogitsComparison& c);
// The columns the parity and accuracy tables show for one comparison (max rel dev, NMSE, top-1,
// worst position), and one comparison's cells in that order.
std::vector<Column> comparison_columns();
std::vector<Cell> comparison_cells(const LogitsComparison& c);

}  // namespace pfx::gates

namespace pfx::gates {
// Reads a logits .npy and checks every value is finite. Returns the failure text ("NaN/inf: 3
// values, first at position 2, token 17", or the read error), or an empty string when usable.
std::string load_finite_logits(const std::filesystem::path& path, NpyArray& out);
}  // namespace pfx::gates

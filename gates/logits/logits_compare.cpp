// Logits comparison metrics (see logits_compare.h).
#include "logits/logits_compare.h"

#include <cmath>

#include "metrics/compare.h"
#include "util/error.h"
#include "util/text_format.h"

namespace pfx::gates {

NonFinite find_non_finite(const NpyArray& a) {
  const int64_t cols = a.cols();
  return cols > 0 ? pfx::find_non_finite(a.data.data(), static_cast<int64_t>(a.data.size()) / cols, cols) : NonFinite{};
}

namespace {
// "NaN/inf in test logits at position 2, token 17": where the precondition was broken.
[[noreturn]] void fail_non_finite(const NpyArray& test, const NpyArray& ref) {
  const bool in_test = find_non_finite(test).count > 0;
  const NonFinite nf = find_non_finite(in_test ? test : ref);
  fail("compare_logits: NaN/inf in ", in_test ? "test" : "reference", " logits at position ", nf.first_row,
       ", token ", nf.first_col, " (expected finite logits; check with load_finite_logits first)");
}
}  // namespace

LogitsComparison compare_logits(const NpyArray& test, const NpyArray& ref) {
  LogitsComparison c;
  if (test.shape != ref.shape || test.shape.size() != 2) {
    c.shape_error = "shape " + shape_text(test.shape) + " vs reference " + shape_text(ref.shape);
    return c;
  }
  c.shape_match = true;
  c.positions = ref.rows();
  c.vocab = ref.cols();
  if (c.positions == 0 || c.vocab == 0) {
    // pfx::compare_logits refuses empty logits. Nothing can deviate; rows without tokens have no
    // argmax on either side, so they count as agreeing.
    c.top1_agreement = c.positions ? 1 : 0;
    return c;
  }
  const float* t = test.data.data();
  const float* f = ref.data.data();

  // The metrics themselves come from the engine, so gates and engine tests quote the same numbers.
  const LogitStats s = pfx::compare_logits(t, f, c.positions, c.vocab);
  if (s.has_nan) fail_non_finite(test, ref);  // the engine skips such values: never report on a partial sum
  c.max_abs_diff = s.max_abs_diff;
  c.max_abs_ref = s.max_abs_ref;
  c.max_rel_dev = s.rel;
  c.nmse = s.nmse;
  c.top1_agreement = s.top1_agreement;

  // Where the largest |test - ref| sits: its first occurrence in row-major order. The engine
  // computes |Δ| in double the same way, so the maximum is matched exactly.
  if (c.max_abs_diff > 0) {
    const int64_t n = c.positions * c.vocab;
    for (int64_t i = 0; i < n; ++i)
      if (std::fabs(double(t[i]) - double(f[i])) == c.max_abs_diff) {
        c.worst_row = i / c.vocab;
        c.worst_col = i % c.vocab;
        c.worst_value = t[i];
        c.worst_ref = f[i];
        break;
      }
  }
  // The first few positions whose top-1 token differs, by the same argmax (ties → lowest id).
  if (c.top1_agreement < 1)
    for (int64_t r = 0; r < c.positions && c.top1_mismatch_positions.size() < kTop1MismatchesListed; ++r)
      if (argmax(t + r * c.vocab, c.vocab) != argmax(f + r * c.vocab, c.vocab)) c.top1_mismatch_positions.push_back(r);
  return c;
}

nlohmann::json to_json(const LogitsComparison& c) {
  nlohmann::json j = {{"shape_match", c.shape_match}, {"positions", c.positions}, {"vocab", c.vocab},
                      {"max_abs_diff", c.max_abs_diff}, {"max_abs_ref", c.max_abs_ref},
                      {"max_rel_dev", c.max_rel_dev}, {"nmse", c.nmse}, {"top1_agreement", c.top1_agreement},
                      {"worst", {{"position", c.worst_row}, {"token", c.worst_col}, {"value", c.worst_value}, {"ref", c.worst_ref}}},
                      {"top1_mismatch_positions", c.top1_mismatch_positions}};
  if (!c.shape_match) j["shape_error"] = c.shape_error;
  return j;
}

std::string load_finite_logits(const std::filesystem::path& path, NpyArray& out) {
  try {
    out = read_npy(path);
  } catch (const Error& e) {
    return std::string("unreadable logits: ") + e.what();
  }
  if (out.shape.size() != 2 || out.rows() == 0 || out.cols() == 0)
    return path.string() + ": expected a non-empty [positions, vocab] array";
  const auto nf = find_non_finite(out);
  if (nf.count)
    return "NaN/inf in logits: " + std::to_string(nf.count) + " values, first at position " +
           std::to_string(nf.first_row) + ", token " + std::to_string(nf.first_col) + " (" + path.string() + ")";
  return {};
}
std::vector<Column> comparison_columns() {
  return {{"max rel dev", "", kSci}, {"NMSE", "", kSci}, {"top-1", "", kFraction}, {"worst position", "", kInteger}};
}

std::vector<Cell> comparison_cells(const LogitsComparison& c) {
  return {number_cell(c.max_rel_dev), number_cell(c.nmse), number_cell(c.top1_agreement), number_cell(static_cast<double>(c.worst_row))};
}

}  // namespace pfx::gates

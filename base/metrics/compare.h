// Logit comparison metrics shared by the model tests, the GPU tests and the gates: max |Δ|
// relative to max |ref|, NMSE, top-1 agreement over rows (prompt positions), NaN detection (and
// where the first NaN/inf sits), and the first divergence of two token streams.
#pragma once
#include <cstdint>
#include <span>
#include <string>

namespace pfx {

struct LogitStats {
  double max_abs_diff = 0;    // max |a - ref| over all elements
  double max_abs_ref = 0;     // max |ref|
  double rel = 0;             // max_abs_diff / max_abs_ref (max_abs_diff itself if ref is all zero)
  double nmse = 0;            // sum (a - ref)^2 / sum ref^2 (sum of squares itself if ref is all zero)
  double top1_agreement = 0;  // fraction of rows whose argmax agrees (ties → lowest id)
  bool has_nan = false;       // a NaN or infinity in `a` (or in `ref`): always a failure
};

// The NaN and infinities of a row-major [rows, cols] array: how many, and the first one's place.
struct NonFinite {
  int64_t count = 0;
  int64_t first_row = -1, first_col = -1;
};
NonFinite find_non_finite(const float* v, int64_t rows, int64_t cols);

// a and ref are row-major [rows, cols]. rows, cols > 0.
LogitStats compare_logits(const float* a, const float* ref, int64_t rows, int64_t cols);

// "max|Δ|/max|ref| 1.23e-07 (max|Δ| 4.5e-06, max|ref| 36.6) NMSE 1.0e-13 top-1 100.0% (5/5 rows)"
std::string format_stats(const LogitStats& s, int64_t rows);

// Index of the largest value, ties to the lowest index (NaN never wins); -1 if n == 0.
int32_t argmax(const float* v, int64_t n);

// First index where the streams differ; if one is a prefix of the other, the shorter length;
// -1 if they are identical.
int64_t first_divergence(std::span<const int32_t> a, std::span<const int32_t> b);

}  // namespace pfx

// Logits comparison metrics (see logits_compare.h).
#include "core/logits_compare.h"

#include <cmath>

namespace pfx::gates {

NonFinite find_non_finite(const NpyArray& a) {
  NonFinite nf;
  const int64_t cols = a.cols();
  for (size_t i = 0; i < a.data.size(); ++i)
    if (!std::isfinite(a.data[i])) {
      if (nf.count == 0) {
        nf.first_row = static_cast<int64_t>(i) / cols;
        nf.first_col = static_cast<int64_t>(i) % cols;
      }
      ++nf.count;
    }
  return nf;
}

LogitsComparison compare_logits(const NpyArray& test, const NpyArray& ref) {
  LogitsComparison c;
  if (test.shape != ref.shape || test.shape.size() != 2) {
    auto s = [](const NpyArray& a) {
      std::string out = "[";
      for (size_t i = 0; i < a.shape.size(); ++i) out += (i ? "," : "") + std::to_string(a.shape[i]);
      return out + "]";
    };
    c.shape_error = "shape " + s(test) + " vs reference " + s(ref);
    return c;
  }
  c.shape_match = true;
  c.positions = ref.rows();
  c.vocab = ref.cols();
  double se = 0, ref2 = 0;
  int64_t agree = 0;
  for (int64_t r = 0; r < c.positions; ++r) {
    const float* t = test.data.data() + r * c.vocab;
    const float* f = ref.data.data() + r * c.vocab;
    int64_t arg_t = 0, arg_f = 0;
    for (int64_t v = 0; v < c.vocab; ++v) {
      const double d = std::fabs(double(t[v]) - double(f[v]));
      if (d > c.max_abs_diff) {
        c.max_abs_diff = d;
        c.worst_row = r;
        c.worst_col = v;
        c.worst_value = t[v];
        c.worst_ref = f[v];
      }
      c.max_abs_ref = std::max(c.max_abs_ref, std::fabs(double(f[v])));
      se += d * d;
      ref2 += double(f[v]) * double(f[v]);
      if (t[v] > t[arg_t]) arg_t = v;
      if (f[v] > f[arg_f]) arg_f = v;
    }
    if (arg_t == arg_f) ++agree;
    else if (c.top1_mismatch_positions.size() < 8) c.top1_mismatch_positions.push_back(r);
  }
  c.max_rel_dev = c.max_abs_ref > 0 ? c.max_abs_diff / c.max_abs_ref : c.max_abs_diff;
  c.nmse = ref2 > 0 ? se / ref2 : se;
  c.top1_agreement = c.positions ? double(agree) / double(c.positions) : 0;
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

}  // namespace pfx::gates

#include "util/error.h"

namespace pfx::gates {
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
}  // namespace pfx::gates

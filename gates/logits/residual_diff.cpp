// Residual-stream dump comparison (see residual_diff.h).
#include "logits/residual_diff.h"

#include <algorithm>
#include <map>
#include <regex>
#include <set>

#include "metrics/compare.h"
#include "util/error.h"
#include "util/npy.h"
#include "util/text_format.h"

namespace pfx::gates {

namespace fs = std::filesystem;

namespace {

// Layer number → file, for the dump files of prompt offset `pos` in `dir`.
std::map<int, fs::path> layer_files(const fs::path& dir, int64_t pos) {
  if (!fs::is_directory(dir)) fail(dir.string(), ": not a directory (expected a `prefill logits --dump-residual` output)");
  // Bounded digit counts: the numbers always fit stoi/stoll.
  static const std::regex name_re(R"(blk\.(\d{1,9})\.pos(\d{1,18})\.npy)");
  std::map<int, fs::path> out;
  for (const auto& e : fs::directory_iterator(dir)) {
    std::smatch m;
    const std::string name = e.path().filename().string();
    if (!std::regex_match(name, m, name_re) || std::stoll(m[2].str()) != pos) continue;
    out[std::stoi(m[1].str())] = e.path();
  }
  if (out.empty())
    fail(dir.string(), ": no blk.N.pos", pos, ".npy files (expected the output of `prefill logits --dump-residual`)");
  return out;
}

NpyArray read_layer(const fs::path& file) {
  NpyArray a = read_npy(file);
  if (a.shape.size() != 2 || a.shape[0] <= 0 || a.shape[1] <= 0)
    fail(file.string(), ": expected float32 [tokens, n_embd] with both dimensions > 0, got shape ", shape_text(a.shape));
  return a;
}

}  // namespace

ResidualDiff diff_residual_dirs(const fs::path& test_dir, const fs::path& ref_dir, double bound, int64_t pos) {
  const auto test = layer_files(test_dir, pos);
  const auto ref = layer_files(ref_dir, pos);
  // A layer one run wrote and the other did not means one dump is incomplete: name the missing file.
  for (const auto& [layer, file] : test)
    if (!ref.count(layer))
      fail((ref_dir / contract::residual_dump_file_name(layer, pos)).string(), ": missing, but ", file.string(),
           " exists (both dumps must hold the same layers)");
  for (const auto& [layer, file] : ref)
    if (!test.count(layer))
      fail((test_dir / contract::residual_dump_file_name(layer, pos)).string(), ": missing, but ", file.string(),
           " exists (both dumps must hold the same layers)");
  // Layers run 0..N-1: a gap in both would make "blk.0-6 within bound" claim more than was seen.
  int expected = 0;
  for (const auto& [layer, file] : test) {
    if (layer != expected)
      fail((test_dir / contract::residual_dump_file_name(expected, pos)).string(), " and ", (ref_dir / contract::residual_dump_file_name(expected, pos)).string(),
           ": missing in both dumps, which hold blk.", layer, " (layers must run 0..N-1)");
    ++expected;
  }

  ResidualDiff d;
  d.bound = bound;
  for (const auto& [layer, test_file] : test) {
    const fs::path& ref_file = ref.at(layer);
    const NpyArray a = read_layer(test_file);
    const NpyArray b = read_layer(ref_file);
    if (a.shape != b.shape)
      fail(test_file.string(), ": shape ", shape_text(a.shape), " but ", ref_file.string(), " has ", shape_text(b.shape));
    const LogitStats s = compare_logits(a.data.data(), b.data.data(), a.rows(), a.cols());
    LayerDeviation dev;
    dev.layer = layer;
    dev.max_rel = s.rel;
    dev.nmse = s.nmse;
    dev.max_abs_diff = s.max_abs_diff;
    dev.max_abs_ref = s.max_abs_ref;
    dev.non_finite = s.has_nan;
    if (d.first_diverging < 0) {
      if (dev.non_finite || dev.max_rel > bound) d.first_diverging = static_cast<int>(d.layers.size());
      else d.max_rel_before = std::max(d.max_rel_before, dev.max_rel);
    }
    d.layers.push_back(dev);
  }
  return d;
}

std::string describe(const ResidualDiff& d) {
  if (d.layers.empty()) return "no layers compared";
  if (d.first_diverging < 0) {
    const auto worst = std::max_element(d.layers.begin(), d.layers.end(),
                                        [](const LayerDeviation& x, const LayerDeviation& y) { return x.max_rel < y.max_rel; });
    return "residual stream within " + sci(d.bound) + " through blk." + std::to_string(d.layers.back().layer) +
           " (largest max-rel " + sci(worst->max_rel) + " at blk." + std::to_string(worst->layer) +
           "): the paths part after the last layer (output norm or head)";
  }
  const LayerDeviation& first = d.layers[static_cast<size_t>(d.first_diverging)];
  std::string s = "first diverging layer blk." + std::to_string(first.layer) + " (" +
                  (first.non_finite ? std::string("NaN/inf") : "max-rel " + sci(first.max_rel));
  if (first.layer == 0) return s + ", already at the first layer)";
  const std::string before = first.layer == 1 ? "blk.0" : "blk.0-" + std::to_string(first.layer - 1);
  return s + "; " + before + " ≤ " + sci(d.max_rel_before) + ")";
}

nlohmann::json to_json(const ResidualDiff& d) {
  nlohmann::json layers = nlohmann::json::array();
  for (const auto& l : d.layers)
    layers.push_back({{"layer", l.layer}, {"max_rel", l.max_rel}, {"nmse", l.nmse}, {"max_abs_diff", l.max_abs_diff},
                      {"max_abs_ref", l.max_abs_ref}, {"non_finite", l.non_finite}});
  nlohmann::json first = nullptr;
  if (d.first_diverging >= 0) first = d.layers[static_cast<size_t>(d.first_diverging)].layer;
  return {{"bound", d.bound}, {"first_diverging_layer", first}, {"layers", layers}};
}

}  // namespace pfx::gates

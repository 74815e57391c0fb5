// Layer-by-layer comparison of two residual-stream dumps (`prefill logits --dump-residual DIR`:
// DIR/blk.N.posP.npy, float32 [tokens, n_embd], the residual after layer N): per layer max|Δ| /
// max|ref| and NMSE (pfx::compare_logits, the logits metrics), and the first layer whose
// deviation exceeds a bound — where two paths or two builds part.
#pragma once
#include <cstdint>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "contract/prefill_cli.h"  // residual_dump_file_name: the layout the dumps are written in

namespace pfx::gates {

struct LayerDeviation {
  int layer = 0;
  double max_rel = 0;        // max |test - ref| / max |ref| over the layer's [tokens, n_embd]
  double nmse = 0;           // sum (test - ref)^2 / sum ref^2
  double max_abs_diff = 0, max_abs_ref = 0;
  bool non_finite = false;   // a NaN or infinity in either dump: counts as diverging
};

struct ResidualDiff {
  double bound = 0;                  // a layer diverges when max_rel > bound (or non_finite)
  std::vector<LayerDeviation> layers;  // blk.0, blk.1, ... in order
  int first_diverging = -1;          // index into layers, -1 when every layer is within bound
  double max_rel_before = 0;         // the largest max_rel of the layers before first_diverging
};

// Compares test_dir against ref_dir layer by layer (only the files of prompt offset `pos`).
// Throws pfx::Error, naming the file, when a directory is missing or holds no layer file, when a
// layer file is in one directory but not the other, when the layers do not run 0..N-1 without a
// gap, when a file is unreadable or not [tokens, n_embd], or when the two shapes differ.
ResidualDiff diff_residual_dirs(const std::filesystem::path& test_dir, const std::filesystem::path& ref_dir,
                                double bound, int64_t pos = 0);

// "first diverging layer blk.7 (max-rel 3.10e-04; blk.0-6 ≤ 1.00e-06)", or "residual stream
// within 1.00e-05 through blk.31 (...)" when no layer diverges.
std::string describe(const ResidualDiff& d);

// {bound, first_diverging_layer (null when none), layers: [{layer, max_rel, nmse, max_abs_diff,
// max_abs_ref, non_finite}]}
nlohmann::json to_json(const ResidualDiff& d);

}  // namespace pfx::gates

// The contract between `prefill` and the tools that run it as a process (the gates): what a
// build writes that another build's harness must read the same way. Header-only, no engine code.
#pragma once
#include <cstdint>
#include <string>

namespace pfx::contract {

// The residual dump (`prefill logits --dump-residual DIR`): one file per layer and per forward
// call starting at position pos, float32 [tokens, n_embd]; `prefill --version --json` advertises
// the pattern as capabilities.residual_dump.
inline constexpr const char* kResidualDumpLayout = "blk.N.posP.npy";
inline std::string residual_dump_file_name(int64_t layer, int64_t pos) {
  return "blk." + std::to_string(layer) + ".pos" + std::to_string(pos) + ".npy";
}

}  // namespace pfx::contract

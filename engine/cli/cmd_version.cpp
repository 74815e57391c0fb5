// prefill --version [--json]: what this build is and can do, so gates can talk to older builds.
#include <iostream>
#include <nlohmann/json.hpp>

#include "cli/version.h"
#include "cli_common.h"
#include "commands.h"

namespace pfx::cli {

int cmd_version(bool json) {
  const auto backends = compiled_backends();
  const bool cuda = backends.size() > 1;
  if (!json) {
    std::cout << "prefill " << PFX_VERSION << " (commit " << PFX_GIT_COMMIT << (PFX_GIT_DIRTY ? ", dirty" : "")
              << "; backends:";
    for (const auto& b : backends) std::cout << " " << b;
    std::cout << ")\n";
    return kOk;
  }
  nlohmann::json j;
  j["name"] = "prefill";
  j["version"] = PFX_VERSION;
  j["commit"] = PFX_GIT_COMMIT;
  j["dirty"] = PFX_GIT_DIRTY;
  namespace cap = contract::capability;  // names and meanings: docs/prefill-cli.md
  j["capabilities"] = {
      {cap::kSubcommands, {"info", "tokenize", "logits", "greedy", "synth", "bench"}},
      {cap::kBackends, backends},
      {cap::kPaths, cuda ? nlohmann::json{"fast", "generic"} : nlohmann::json::array()},
      // `--gemm NAME` on logits/greedy/bench (--backend cuda --path fast): every prefill GEMM
      // variant the dispatcher can run, the default first.
      {cap::kGemmVariants, gemm_variants()},
      // `--decode-graph on|off` on logits/greedy/bench (--backend cuda --path fast): decode steps
      // as one replayed CUDA graph or kernel by kernel, the default first.
      {cap::kDecodeGraph, decode_graph_values()},
      {cap::kCudaCompiled, cuda},
      {cap::kKernelResources, cuda ? nlohmann::json("kernel-resources.json") : nlohmann::json(nullptr)},
      {cap::kLogitsFormat, "npy-f32"},
      {cap::kHash, "fnv1a64"},
      // `logits --dump-residual DIR`: DIR/blk.N.posP.npy, float32 [tokens, n_embd] per layer.
      {cap::kResidualDump, contract::kResidualDumpLayout},
      // `bench -o FORMAT` (llama-bench's formats and columns) and `bench --backend` (cpu: the reference).
      {cap::kBenchFormats, {"md", "json", "jsonl", "csv", "sql"}},
      {cap::kBenchBackends, backends},
      // `info --json` lists every tensor with its bytes (the timing gate's GB/s per role).
      {cap::kInfoTensors, true},
  };
  std::cout << j.dump() << "\n";
  return kOk;
}

}  // namespace pfx::cli

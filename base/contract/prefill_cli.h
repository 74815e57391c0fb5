// The contract between `prefill` and the tools that run it as a process (the gates, DESIGN.md
// seam 1): the capability names of `prefill --version --json`, the JSON field names of the
// subcommand outputs the gates read, and the residual-dump layout; the exit codes are the
// project's one table (contract/exit_codes.h: 3 = unavailable here). What one build writes
// here, another build's harness must read the same way. docs/prefill-cli.md documents each item;
// header-only, no engine code.
#pragma once
#include <cstdint>
#include <string>

#include "contract/exit_codes.h"

namespace pfx::contract {

// `prefill --version --json`: {name, version, commit, dirty, capabilities{...}}. A tool asks
// before it calls: an older build that lacks a capability is SKIPPED by the gate that needs it.
namespace capability {
inline constexpr const char* kSubcommands = "subcommands";        // list: info, tokenize, logits, greedy, synth, bench
inline constexpr const char* kBackends = "backends";              // list: cpu, cuda
inline constexpr const char* kPaths = "paths";                    // list of CUDA paths: fast, generic
inline constexpr const char* kGemmVariants = "gemm_variants";     // list: --gemm values of the fast path, default first
inline constexpr const char* kDecodeGraph = "decode_graph";       // list: --decode-graph values (on, off), default first
inline constexpr const char* kCudaCompiled = "cuda_compiled";     // bool
inline constexpr const char* kKernelResources = "kernel_resources";  // file name beside prefill, or null
inline constexpr const char* kLogitsFormat = "logits_format";     // "npy-f32"
inline constexpr const char* kHash = "hash";                      // "fnv1a64"
inline constexpr const char* kResidualDump = "residual_dump";     // kResidualDumpLayout
inline constexpr const char* kBenchFormats = "bench_formats";     // list: `bench -o` formats (md, json, jsonl, csv, sql)
inline constexpr const char* kBenchBackends = "bench_backends";   // list: `bench --backend` values
inline constexpr const char* kInfoTensors = "info_tensors";       // bool: `info --json` lists tensors[]
}  // namespace capability

// Fields of the JSON the subcommands print (one object on stdout with --json) that gates read.
namespace field {
// greedy --json
inline constexpr const char* kPromptIds = "prompt_ids";
inline constexpr const char* kGeneratedIds = "generated_ids";
inline constexpr const char* kText = "text";
// bench --json: {model, path, device{name, sm_count, sm_clock_mhz, ...}, results[{test, samples_tps, mean_tps, ...}]}
inline constexpr const char* kDevice = "device";
inline constexpr const char* kSmClockMhz = "sm_clock_mhz";
inline constexpr const char* kResults = "results";
inline constexpr const char* kTest = "test";                      // "pp512", "tg128"
inline constexpr const char* kSamplesTps = "samples_tps";
inline constexpr const char* kMeanTps = "mean_tps";
// info --json: tensors[{name, type, dims, bytes}] (capability info_tensors)
inline constexpr const char* kTensors = "tensors";
inline constexpr const char* kTensorName = "name";
inline constexpr const char* kTensorDims = "dims";                // ggml order: dims[0] = elements per row
inline constexpr const char* kTensorBytes = "bytes";
}  // namespace field

// The residual dump (`prefill logits --dump-residual DIR`): one file per layer and per forward
// call starting at position pos, float32 [tokens, n_embd]; `prefill --version --json` advertises
// the pattern as capabilities.residual_dump.
inline constexpr const char* kResidualDumpLayout = "blk.N.posP.npy";
inline std::string residual_dump_file_name(int64_t layer, int64_t pos) {
  return "blk." + std::to_string(layer) + ".pos" + std::to_string(pos) + ".npy";
}

}  // namespace pfx::contract

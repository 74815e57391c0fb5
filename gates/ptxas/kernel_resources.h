// The compiler's per-kernel resource record a CUDA build leaves next to `prefill`
// (kernel-resources.json, schema "kernel-resources/1", see docs/prefill-cli.md): registers, spills,
// stack and shared memory per kernel, as ptxas reported them.
#pragma once
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

namespace pfx::gates {

struct KernelResources {
  std::string name, mangled, source;
  int registers = 0;
  long spill_store_bytes = 0, spill_load_bytes = 0, stack_bytes = 0;
  long static_smem_bytes = 0, dynamic_smem_bytes = 0;
  int threads_per_block = 0;  // 0: not known
  // ptxas's "Potential Performance Loss" notes on the kernel ("C7512: wgmma.mma_async instructions
  // are serialized due to insufficient register resources"); nullopt where the file predates them.
  std::optional<std::vector<std::string>> performance_notes;
  long smem_bytes() const { return static_smem_bytes + dynamic_smem_bytes; }
  long spill_bytes() const { return spill_store_bytes + spill_load_bytes; }
};

struct KernelResourceFile {
  std::string arch;
  std::vector<KernelResources> kernels;
};

// Throws pfx::Error naming the file and the kernel index / field on malformed input.
KernelResourceFile read_kernel_resources(const std::filesystem::path& path);

}  // namespace pfx::gates

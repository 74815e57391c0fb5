// pfx_kernel_launch_info: prints the launch-shape registry of every kernel linked in (the whole
// pfx_kernels archive) as JSON, for scripts/ptxas_resources.py to join with the ptxas figures.
//   pfx_kernel_launch_info [OUT.json]     (stdout without an argument)
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <nlohmann/json.hpp>

#include "kernels/launch_info.h"

int main(int argc, char** argv) {
  if (argc > 2) {
    std::fprintf(stderr, "usage: %s [OUT.json]\n", argv[0]);
    return 2;
  }
  nlohmann::json arr = nlohmann::json::array();
  for (const auto& info : pfx::kernels::launch_infos()) {
    arr.push_back({{"name", info.name},
                   {"threads_per_block", info.threads_per_block},
                   {"dynamic_smem_bytes", info.dynamic_smem_bytes},
                   {"source", std::filesystem::path(info.source).filename().string()}});
  }
  const std::string text = arr.dump(1) + "\n";
  if (argc == 2) {
    std::ofstream out(argv[1]);
    out << text;
    if (!out) {
      std::fprintf(stderr, "pfx_kernel_launch_info: cannot write %s\n", argv[1]);
      return 1;
    }
  } else {
    std::cout << text;
  }
  return 0;
}

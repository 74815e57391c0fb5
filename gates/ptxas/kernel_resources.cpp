// Reader for kernel-resources.json (see kernel_resources.h).
#include "ptxas/kernel_resources.h"

#include <fstream>
#include <nlohmann/json.hpp>

#include "util/error.h"

namespace pfx::gates {

KernelResourceFile read_kernel_resources(const std::filesystem::path& path) {
  std::ifstream in(path);
  if (!in) fail(path.string(), ": cannot open kernel resource file");
  nlohmann::json j;
  try {
    j = nlohmann::json::parse(in);
  } catch (const nlohmann::json::exception& e) {
    fail(path.string(), ": not valid JSON: ", e.what());
  }
  if (!j.is_object() || j.value("schema", "") != "kernel-resources/1")
    fail(path.string(), ": field 'schema' must be 'kernel-resources/1'");
  if (!j.contains("kernels") || !j["kernels"].is_array()) fail(path.string(), ": field 'kernels' must be a list");
  KernelResourceFile f;
  f.arch = j.value("arch", "");
  for (size_t i = 0; i < j["kernels"].size(); ++i) {
    const auto& k = j["kernels"][i];
    const std::string where = path.string() + ": kernels[" + std::to_string(i) + "]";
    if (!k.is_object()) fail(where, ": expected an object");
    auto num = [&](const char* key, bool required) -> long {
      if (!k.contains(key) || k[key].is_null()) {
        if (required) fail(where, ": missing field '", key, "'");
        return 0;
      }
      if (!k[key].is_number_integer() || k[key].get<long>() < 0)
        fail(where, ": field '", key, "' must be a non-negative integer, got ", k[key].dump());
      return k[key].get<long>();
    };
    KernelResources r;
    if (!k.contains("name") || !k["name"].is_string()) fail(where, ": missing field 'name'");
    r.name = k["name"];
    r.mangled = k.value("mangled", "");
    r.source = k.value("source", "");
    r.registers = static_cast<int>(num("registers", true));
    r.spill_store_bytes = num("spill_store_bytes", true);
    r.spill_load_bytes = num("spill_load_bytes", true);
    r.stack_bytes = num("stack_bytes", false);
    r.static_smem_bytes = num("static_smem_bytes", false);
    r.dynamic_smem_bytes = num("dynamic_smem_bytes", false);
    r.threads_per_block = static_cast<int>(num("threads_per_block", false));
    if (k.contains("performance_notes")) {
      const auto& n = k["performance_notes"];
      if (!n.is_array()) fail(where, ": field 'performance_notes' must be a list of strings, got ", n.dump());
      r.performance_notes.emplace();
      for (const auto& note : n) {
        if (!note.is_string()) fail(where, ": field 'performance_notes' must be a list of strings, got ", n.dump());
        r.performance_notes->push_back(note.get<std::string>());
      }
    }
    f.kernels.push_back(r);
  }
  return f;
}

}  // namespace pfx::gates

// Weight bytes per GEMM role (see role_bytes.h).
#include "timing/role_bytes.h"

#include "contract/prefill_cli.h"
#include "trace/roles.h"
#include "util/error.h"

namespace pfx::gates {

using nlohmann::json;
namespace field = contract::field;

std::map<std::string, double> weight_bytes_by_role(const json& info, const std::string& where) {
  std::map<std::string, double> out;
  if (!info.is_object() || !info.contains(field::kTensors) || !info[field::kTensors].is_array())
    fail(where, ": expected an object with a '", field::kTensors, "' list (prefill info --json)");
  const json& tensors = info[field::kTensors];
  std::map<std::string, double> whole;  // tensor name without ".weight" → bytes, 2-D tensors only
  for (size_t i = 0; i < tensors.size(); ++i) {
    const json& t = tensors[i];
    const std::string at = where + ": " + field::kTensors + "[" + std::to_string(i) + "]";
    if (!t.is_object() || !t.contains(field::kTensorName) || !t[field::kTensorName].is_string() || !t.contains(field::kTensorBytes) ||
        !t[field::kTensorBytes].is_number() || !t.contains(field::kTensorDims) || !t[field::kTensorDims].is_array())
      fail(at, ": expected {", field::kTensorName, ": string, ", field::kTensorDims, ": [..], ", field::kTensorBytes, ": number}");
    std::string name = t[field::kTensorName].get<std::string>();
    int matrix_dims = 0;
    for (const auto& d : t[field::kTensorDims]) matrix_dims += d.is_number_integer() && d.get<long long>() > 1;
    if (matrix_dims < 2 || !name.ends_with(".weight")) continue;
    name.resize(name.size() - 7);
    whole[name] = t[field::kTensorBytes].get<double>();
    // blk.N.R → role R, summed over the layers.
    if (name.rfind("blk.", 0) == 0)
      if (const auto dot = name.find('.', 4); dot != std::string::npos) out[name.substr(dot + 1)] += whole[name];
  }
  if (whole.count("output")) out["output"] = whole["output"];
  else if (info.value("output_tied", false) && whole.count("token_embd")) out["output"] = whole["token_embd"];
  return out;
}

std::optional<double> role_weight_bytes(const std::map<std::string, double>& by_role, const std::string& role) {
  double sum = 0;
  for (const std::string& part : pfx::trace::role_parts(role)) {
    const auto it = by_role.find(part);
    if (it == by_role.end()) return std::nullopt;
    sum += it->second;
  }
  return sum;
}

}  // namespace pfx::gates

// The bytes each GEMM role reads per prefill pass: the size of its weight matrices, from the
// candidate's `prefill info --json` tensors[] (capability info_tensors, docs/prefill-cli.md).
// Role R gathers every 2-D tensor blk.N.R.weight (norm vectors and 1-D biases are not a GEMM's
// weights and are left out); "output" is output.weight, or token_embd.weight when the model ties
// them; a fused role "a+b" reads both. Other roles (attention, norms, dequantization, the
// embedding gather) move bytes this cannot know, and get none. GB/s = these bytes / the role's own
// kernel time per pass: the rate at which its weights stream, a lower bound of its traffic.
#pragma once
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>

namespace pfx::gates {

// Throws pfx::Error naming `where` and the field on a malformed tensors[] list.
std::map<std::string, double> weight_bytes_by_role(const nlohmann::json& info, const std::string& where);
// The bytes of `role` ("attn_v", "ffn_gate+ffn_up"), or nullopt when some part has none.
std::optional<double> role_weight_bytes(const std::map<std::string, double>& by_role, const std::string& role);

}  // namespace pfx::gates

// Tensor roles from NVTX range names (DESIGN.md seam 3): the role is the range name without a
// leading "blk.N." — "blk.7.attn_v" -> "attn_v", "blk.7.ffn_gate+ffn_up" -> "ffn_gate+ffn_up"
// (fused names stay joined), "output" -> "output", "prefill" -> "prefill".
#pragma once
#include <string>
#include <string_view>
#include <vector>

namespace pfx::trace {

std::string role_of(std::string_view range_name);

// The roles one launch's range stands for: "attn_q+attn_k+attn_v" -> {attn_q, attn_k, attn_v}
// (one launch over several matrices names their roles joined with '+'), "attn_v" -> {attn_v}.
std::vector<std::string> role_parts(std::string_view role);

// The bucket for kernels launched outside every NVTX range.
inline constexpr const char* kNoRangeRole = "(no range)";

}  // namespace pfx::trace

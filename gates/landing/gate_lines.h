// The per-gate lines `landing run|gate|import|report` print on stdout ("  parity: SKIPPED — why").
// On a machine without a GPU every GPU gate gives the same underlying reason; it is printed in
// full once, and later lines that end with the same text say "(… as for <gate>)" instead.
#pragma once
#include <string>
#include <vector>

#include "core/gate_result.h"

namespace pfx::gates {

std::string gate_lines(const std::vector<GateResult>& gates);

// `reason` with its ending shared with `earlier` (≥ kMinSharedChars, cut at a word start)
// replaced by "… (as for <earlier_gate>)"; `reason` unchanged when they share less.
inline constexpr size_t kMinSharedChars = 24;
std::string shorten_repeated(const std::string& reason, const std::string& earlier, const std::string& earlier_gate);

}  // namespace pfx::gates

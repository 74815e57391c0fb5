// The A/B gate: did whole prefill get faster, beyond machine drift? `prefill bench` of the
// baseline and candidate binaries run alternately (ABAB…) in one window on the same inputs after a
// discarded warm-up; an A/A pass (baseline vs itself) first measures the noise floor. Per-pair
// ratios (candidate/baseline tok/s), median Δ%, a bootstrap confidence interval, wins k/N. More
// pairs are added (up to a cap) while the evidence is undecided. SM clock, temperature and
// throttle reasons are sampled during every run (NVML) and throttled pairs are set aside.
#pragma once
#include <vector>

#include "run/gate_context.h"
#include "stats/stats.h"

namespace pfx::gates {

GateResult run_ab_gate(const GateContext& ctx);

// What every `prefill bench` of the gate asks of either build: gates.ab.path on CUDA (bench's
// default backend), each build's default GEMM variant. Every run is checked against it as it comes
// (a run of anything else stops the gate with a FAIL no waiver excuses) and stores what it reported
// under "ran" in its sample, so `landing import` can check the pairs again.
AskedRun ab_ask(const GateProfile& profile);

}  // namespace pfx::gates

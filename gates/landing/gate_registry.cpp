// Gate name → implementation (see gate_registry.h).
#include "landing/gate_registry.h"

#include "ab/ab_gate.h"
#include "ab/ab_report.h"
#include "accuracy/accuracy_gate.h"
#include "greedy/greedy_gate.h"
#include "parity/parity_gate.h"
#include "ptxas/ptxas_gate.h"
#include "ptxas/ptxas_report.h"
#include "suite/suite_gate.h"
#include "suite/suite_report.h"
#ifdef PFX_HAVE_TRACE
#include "timing/timing_gate.h"
#include "timing/timing_report.h"
#endif

namespace pfx::gates {

GateResult run_gate(const std::string& name, const GateContext& ctx, const std::filesystem::path& landing_exe) {
  try {
    if (name == "parity") return run_parity_gate(ctx);
    if (name == "accuracy") return run_accuracy_gate(ctx);
    if (name == "greedy") return run_greedy_gate(ctx);
    if (name == "ptxas") return run_ptxas_gate(ctx);
    if (name == "suite") return run_suite_gate(ctx);
#ifdef PFX_HAVE_TRACE
    if (name == "timing") return run_timing_gate(ctx, landing_exe);
#else
    (void)landing_exe;
    if (name == "timing") {
      return skip_gate(ctx.start(), "this landing was built without the CUPTI tracer (gates/trace)", ctx.deadline.elapsed());
    }
#endif
    if (name == "ab") return run_ab_gate(ctx);
  } catch (const std::exception& e) {
    GateResult r = ctx.start();
    r.checks.push_back(hard_failure(name, std::string("the gate could not run: ") + e.what()));
    finish(r, ctx.profile, ctx.deadline.elapsed());
    return r;
  }
  GateResult r = skipped_result(name, "unknown gate");
  r.status = Status::Fail;
  return r;
}

void register_legacy_output_readers() {
  register_legacy_output_reader("ab", read_legacy_ab_output);
  register_legacy_output_reader("ptxas", read_legacy_ptxas_output);
  register_legacy_output_reader("suite", read_legacy_suite_output);
#ifdef PFX_HAVE_TRACE
  register_legacy_output_reader("timing", read_legacy_timing_output);
#endif
}

}  // namespace pfx::gates

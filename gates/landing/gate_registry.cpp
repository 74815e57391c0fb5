// Gate name → implementation (see gate_registry.h).
#include "landing/gate_registry.h"

#include "ab/ab_gate.h"
#include "accuracy/accuracy_gate.h"
#include "greedy/greedy_gate.h"
#include "parity/parity_gate.h"
#include "ptxas/ptxas_gate.h"
#include "suite/suite_gate.h"
#ifdef PFX_HAVE_TRACE
#include "timing/timing_gate.h"
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
      GateResult r = ctx.start();
      r.status = Status::Skipped;
      r.reason = "this landing was built without the CUPTI tracer (gates/trace)";
      return r;
    }
#endif
    if (name == "ab") return run_ab_gate(ctx);
  } catch (const std::exception& e) {
    GateResult r = ctx.start();
    Check c;
    c.name = name;
    c.status = Status::Fail;
    c.waivable = false;
    c.reason = std::string("the gate could not run: ") + e.what();
    r.checks.push_back(c);
    finish(r, ctx.profile, ctx.deadline.elapsed());
    return r;
  }
  GateResult r = skipped_result(name, "unknown gate");
  r.status = Status::Fail;
  return r;
}

}  // namespace pfx::gates

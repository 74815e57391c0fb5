// The logits thresholds of the parity and accuracy gates (gates.<gate>.max_rel_dev, max_nmse,
// min_top1) and the one rule that judges a comparison against them — used when a gate runs and
// again when `landing import` re-judges a result from another host from its stored metrics.
#pragma once
#include <nlohmann/json.hpp>
#include <optional>
#include <string>

#include "core/gate_profile.h"
#include "logits/logits_compare.h"

namespace pfx::gates {

struct LogitsLimits {
  double max_rel_dev = 1e-3;
  std::optional<double> max_nmse, min_top1;  // unset: not checked
};
// From the effective profile's gates.<gate>.
LogitsLimits logits_limits(const GateProfile& profile, const std::string& gate);
nlohmann::json to_json(const LogitsLimits& l);

// Which limits the numbers exceed ("max rel dev 5.00e-03 > 1.00e-03; NMSE …"), empty if none.
std::string limits_exceeded(double max_rel_dev, double nmse, double top1, const LogitsLimits& l);
inline std::string limits_exceeded(const LogitsComparison& c, const LogitsLimits& l) {
  return limits_exceeded(c.max_rel_dev, c.nmse, c.top1_agreement, l);
}
// "max rel dev 3.10e-05, NMSE 1.2e-09, top-1 100.0%": the numbers of a comparison within limits.
std::string limits_within(double max_rel_dev, double nmse, double top1);

// Re-judges a check from its stored metrics (to_json(LogitsComparison)): PASS or FAIL with the
// reason, or nullopt when the metrics lack the numbers (nothing to judge). A shape mismatch or a
// non-finite number is a FAIL.
struct Rejudged {
  bool pass = false;
  bool waivable = true;  // a threshold failure may be waived; a shape mismatch or NaN may not
  std::string reason;
};
std::optional<Rejudged> rejudge_logits_metrics(const nlohmann::json& metrics, const LogitsLimits& l);

}  // namespace pfx::gates

// Logits thresholds and their judgement (see logits_limits.h).
#include "logits/logits_limits.h"

#include <cmath>

#include "util/text_format.h"

namespace pfx::gates {

using nlohmann::json;

LogitsLimits logits_limits(const GateProfile& profile, const std::string& gate) {
  LogitsLimits l;
  const auto& g = profile.gate(gate);
  l.max_rel_dev = profile.number(gate, "max_rel_dev", l.max_rel_dev);
  if (g.contains("max_nmse") && g["max_nmse"].is_number()) l.max_nmse = g["max_nmse"].get<double>();
  if (g.contains("min_top1") && g["min_top1"].is_number()) l.min_top1 = g["min_top1"].get<double>();
  return l;
}

json to_json(const LogitsLimits& l) {
  return {{"max_rel_dev", l.max_rel_dev}, {"max_nmse", l.max_nmse ? json(*l.max_nmse) : json(nullptr)},
          {"min_top1", l.min_top1 ? json(*l.min_top1) : json(nullptr)}};
}

std::string limits_exceeded(double rel, double nmse, double top1, const LogitsLimits& l) {
  std::string why;
  auto add = [&](const std::string& s) { why += (why.empty() ? "" : "; ") + s; };
  if (!(rel <= l.max_rel_dev)) add("max rel dev " + sci(rel) + " > " + sci(l.max_rel_dev));  // NaN fails too
  if (l.max_nmse && !(nmse <= *l.max_nmse)) add("NMSE " + sci(nmse) + " > " + sci(*l.max_nmse));
  if (l.min_top1 && !(top1 >= *l.min_top1)) add("top-1 agreement " + percent(top1) + " < " + percent(*l.min_top1));
  return why;
}

std::string limits_within(double rel, double nmse, double top1) {
  return "max rel dev " + sci(rel) + ", NMSE " + sci(nmse) + ", top-1 " + percent(top1);
}

std::optional<Rejudged> rejudge_logits_metrics(const json& m, const LogitsLimits& l) {
  if (!m.is_object() || !m.contains("shape_match") || !m["shape_match"].is_boolean()) return std::nullopt;
  if (!m["shape_match"].get<bool>()) return Rejudged{false, false, "shape mismatch: " + m.value("shape_error", std::string("?"))};
  for (const char* k : {"max_rel_dev", "nmse", "top1_agreement"})
    if (!m.contains(k) || !m[k].is_number()) return std::nullopt;
  const double rel = m["max_rel_dev"], nmse = m["nmse"], top1 = m["top1_agreement"];
  if (!std::isfinite(rel) || !std::isfinite(nmse) || !std::isfinite(top1))
    return Rejudged{false, false, "non-finite metrics in the result"};
  const std::string why = limits_exceeded(rel, nmse, top1, l);
  if (!why.empty()) return Rejudged{false, true, why};
  return Rejudged{true, true, limits_within(rel, nmse, top1)};
}

}  // namespace pfx::gates

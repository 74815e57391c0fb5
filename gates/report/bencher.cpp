// Bencher Metric Format export (see bencher.h).
#include "report/bencher.h"

#include <algorithm>
#include <cctype>

#include "util/error.h"

namespace pfx::gates {

using nlohmann::json;

std::string bencher_measure(const std::string& unit) {
  if (unit == "tok/s") return "throughput";
  if (unit == "ns" || unit == "ms" || unit == "s") return "latency";
  std::string slug;
  for (char c : unit) slug += std::isalnum(static_cast<unsigned char>(c)) ? static_cast<char>(std::tolower(static_cast<unsigned char>(c))) : '-';
  return slug.empty() ? "count" : slug;
}

json bencher_metric_format(const History& h, const std::string& id) {
  size_t report = h.reports.size();
  for (size_t i = 0; i < h.reports.size(); ++i)
    if (h.reports[i].id == id) report = i;
  if (report == h.reports.size()) fail("no report '", id, "' in the ledger");
  json bmf = json::object();
  for (const auto& s : h.series)
    for (const auto& p : s.points)
      for (const auto& m : p.measurements) {
        if (m.report != report || m.side != "candidate") continue;
        json v = {{"value", m.value}};
        if (!m.samples.empty()) {
          const auto [lo, hi] = std::minmax_element(m.samples.begin(), m.samples.end());
          v["lower_value"] = *lo;
          v["upper_value"] = *hi;
        }
        bmf[s.key][bencher_measure(s.unit)] = v;
      }
  return bmf;
}

}  // namespace pfx::gates

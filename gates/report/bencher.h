// The ledger in Bencher Metric Format (BMF, bencher.dev's JSON for `bencher run --adapter json`):
// one report's candidate measurements as {"<benchmark>": {"<measure>": {"value", "lower_value",
// "upper_value"}}}, a benchmark per metric (its history key), the measure named from the unit
// (tok/s → throughput, ns → latency, else the unit), bounds from the repetitions where kept.
#pragma once
#include <nlohmann/json.hpp>
#include <string>

#include "report/history.h"

namespace pfx::gates {

// The measure slug Bencher files a unit under.
std::string bencher_measure(const std::string& unit);
// BMF of report `id` (its candidate side); throws pfx::Error when the ledger has no such report.
nlohmann::json bencher_metric_format(const History& h, const std::string& id);

}  // namespace pfx::gates

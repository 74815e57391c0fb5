// Order statistics of measured samples, shared by the trace diff (medians over repetitions) and
// the gates' A/B statistics (gates/stats/stats.h): median, percentile, mean, sample stddev, and
// the relative spread that serves as run-to-run noise.
#pragma once
#include <vector>

namespace pfx {

double median(std::vector<double> v);                // 0 for no samples
double percentile(std::vector<double> v, double p);  // p in [0,1], linear interpolation; 0 for no samples
double mean(const std::vector<double>& v);
double stddev(const std::vector<double>& v);         // sample (n − 1) standard deviation; 0 below 2 samples
// (max − min) / mid · 100: how far apart the samples lie, in percent of `mid` (their median);
// 0 when mid ≤ 0 or there are no samples.
double spread_pct(const std::vector<double>& v, double mid);

}  // namespace pfx

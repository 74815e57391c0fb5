// Number formatting shared by gates and reports: "3.20e-05", "93.8%", "+13.3%", "2,549,248".
#pragma once
#include <cstdint>
#include <string>
#include <vector>

namespace pfx::gates {
std::string sci(double v);                   // 3.20e-05
std::string fixed(double v, int decimals);   // 1568.7
std::string pct(double fraction);            // 0.938 → "93.8%"
std::string signed_pct(double percent);      // 13.3 → "+13.3%"
std::string grouped(long long v);            // 2549248 → "2,549,248"
std::string shape_text(const std::vector<int64_t>& dims);  // {3, 32000} → "[3,32000]"
}  // namespace pfx::gates

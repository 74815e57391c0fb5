// The one set of number and table formatters for every report the project prints (the gates'
// Markdown, HTML and JUnit, the tracer's summary and diff tables): "2,549,248", "+13.3%",
// "93.8%", "3.20e-05", "[3,32000]", and a column-aligned text table.
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace pfx {

std::string grouped(long long v);                 // 2549248 → "2,549,248"; -1000 → "-1,000"
std::string with_commas(std::uint64_t v);         // the same for unsigned counts
std::string with_commas_signed(std::int64_t v);   // -502400 → "-502,400", 7 → "+7", 0 → "0"
std::string fixed(double v, int decimals);        // 1568.66, 1 → "1568.7"
std::string sci(double v);                        // 3.2e-5 → "3.20e-05"
std::string percent(double fraction, int decimals = 1);  // 0.938 → "93.8%"
// A percentage with its sign, one decimal: 13.31 → "+13.3%", -19.7 → "-19.7%", anything that
// rounds to zero → "0.0%"; no value (a new kernel, no baseline) → "new".
std::string signed_percent(std::optional<double> percent_value);
std::string shape_text(const std::vector<int64_t>& dims);  // {3, 32000} → "[3,32000]"

// Left-aligns the first column, right-aligns the others; long first-column cells are cut to
// `max_first` code points with "..." so tables stay readable with long demangled kernel names.
class TextTable {
 public:
  explicit TextTable(std::vector<std::string> header, std::size_t max_first = 72);
  void add(std::vector<std::string> row);
  std::string str() const;

 private:
  std::vector<std::vector<std::string>> rows_;
  std::size_t max_first_;
};

}  // namespace pfx
